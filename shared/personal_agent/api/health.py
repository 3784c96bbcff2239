"""Health endpoints: liveness, readiness (hard deps) and soft dependencies. No auth."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from personal_agent.health.checks import readiness, soft_dependencies

router = APIRouter(tags=["health"])


@router.get("/healthz", operation_id="healthz")
async def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@router.get("/readyz", operation_id="readyz", responses={503: {"description": "a hard dependency failed"}})
async def readyz() -> JSONResponse:
    """Postgres and Redis are reachable (200), or 503 naming what failed."""
    results = await readiness()
    failed = [r.name for r in results if not r.ok]
    body: dict[str, Any] = {"status": "ready" if not failed else "unready", "checks": [asdict(r) for r in results]}
    if failed:
        body.update(code="not_ready", message=f"unreachable: {', '.join(failed)}", failed=failed)
    return JSONResponse(body, status_code=503 if failed else 200)


@router.get("/health/deps", operation_id="health_deps")
async def health_deps() -> dict[str, Any]:
    """Soft dependencies, reported but never gating readiness."""
    results = await soft_dependencies()
    return {"checks": [asdict(r) for r in results]}
