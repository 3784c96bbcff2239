"""Health endpoints: liveness, readiness (hard deps) and soft dependencies. No auth needed.

Anyone sees each dependency's name, ok/failed and latency, never what it is (hosts, ARNs, users,
providers) or why it failed (exception text). A platform admin's bearer token adds each check's
`detail`; any other credential, or one that cannot be checked, gets the anonymous answer.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from personal_agent.health.checks import CheckResult, readiness, soft_dependencies

router = APIRouter(tags=["health"])
_AUTH_TIMEOUT_SECONDS = 2.0


class Health(BaseModel):
    status: Literal["ok"]


class DependencyCheck(BaseModel):
    name: str
    ok: bool
    latency_ms: float
    detail: str | None = Field(None, description="what is configured, or why the check failed: platform admins only")


class Readiness(BaseModel):
    status: Literal["ready", "unready"]
    checks: list[DependencyCheck]
    code: str | None = Field(None, description="`not_ready` when a hard dependency failed")
    message: str | None = None
    failed: list[str] | None = Field(None, description="the hard dependencies that failed")


class DependencyReport(BaseModel):
    checks: list[DependencyCheck]


async def _platform_admin(request: Request) -> bool:
    """Whether the caller proves to be a platform admin; any failure to tell is a no."""
    if "authorization" not in request.headers:
        return False
    from personal_agent.identity.authenticate import authenticate_request

    try:
        principal = await asyncio.wait_for(authenticate_request(request), _AUTH_TIMEOUT_SECONDS)
    except Exception:  # a bad token or an unreachable database: health still answers, anonymously
        return False
    return principal is not None and "admin" in principal.roles


def _shown(results: list[CheckResult], detailed: bool) -> list[DependencyCheck]:
    """The checks as shown: `detail` is set (and so sent) only for a platform admin."""
    return [
        DependencyCheck.model_validate({**r.public(), "detail": r.detail} if detailed else r.public()) for r in results
    ]


@router.get("/healthz", operation_id="healthz", response_model=Health)
async def healthz() -> Health:
    """The process is up."""
    return Health(status="ok")


@router.get(
    "/readyz",
    operation_id="readyz",
    response_model=Readiness,
    responses={503: {"model": Readiness, "description": "a hard dependency failed"}},
)
async def readyz(request: Request) -> JSONResponse:
    """Postgres and Redis are reachable (200), or 503 naming what failed."""
    results = await readiness()
    failed = [r.name for r in results if not r.ok]
    # Authenticating needs Postgres: with it down, nobody gets details (and nobody waits for it).
    detailed = "postgres" not in failed and await _platform_admin(request)
    checks = _shown(results, detailed)
    if not failed:
        return JSONResponse(Readiness(status="ready", checks=checks).model_dump(mode="json", exclude_unset=True))
    message = f"unreachable: {', '.join(failed)}"
    body = Readiness(status="unready", checks=checks, code="not_ready", message=message, failed=failed)
    return JSONResponse(body.model_dump(mode="json", exclude_unset=True), status_code=503)


@router.get(
    "/health/deps", operation_id="health_deps", response_model=DependencyReport, response_model_exclude_unset=True
)
async def health_deps(request: Request) -> DependencyReport:
    """Soft dependencies, reported but never gating readiness."""
    results = await soft_dependencies()
    return DependencyReport(checks=_shown(results, await _platform_admin(request)))
