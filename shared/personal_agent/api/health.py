"""Health endpoints: liveness, readiness (hard deps) and soft dependencies. No auth needed.

Anyone sees each dependency's name, ok/failed and latency, never what it is (hosts, ARNs, users,
providers) or why it failed (exception text). A platform admin's bearer token adds each check's
`detail`; any other credential, or one that cannot be checked, gets the anonymous answer.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from personal_agent.health.checks import CheckResult, readiness, soft_dependencies

router = APIRouter(tags=["health"])
_AUTH_TIMEOUT_SECONDS = 2.0


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


def _shown(results: list[CheckResult], detailed: bool) -> list[dict[str, Any]]:
    return [{**r.public(), "detail": r.detail} if detailed else r.public() for r in results]


@router.get("/healthz", operation_id="healthz")
async def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@router.get("/readyz", operation_id="readyz", responses={503: {"description": "a hard dependency failed"}})
async def readyz(request: Request) -> JSONResponse:
    """Postgres and Redis are reachable (200), or 503 naming what failed."""
    results = await readiness()
    failed = [r.name for r in results if not r.ok]
    # Authenticating needs Postgres: with it down, nobody gets details (and nobody waits for it).
    detailed = "postgres" not in failed and await _platform_admin(request)
    body: dict[str, Any] = {"status": "ready" if not failed else "unready", "checks": _shown(results, detailed)}
    if failed:
        body.update(code="not_ready", message=f"unreachable: {', '.join(failed)}", failed=failed)
    return JSONResponse(body, status_code=503 if failed else 200)


@router.get("/health/deps", operation_id="health_deps")
async def health_deps(request: Request) -> dict[str, Any]:
    """Soft dependencies, reported but never gating readiness."""
    results = await soft_dependencies()
    return {"checks": _shown(results, await _platform_admin(request))}
