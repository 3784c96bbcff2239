"""Dependency checks: readiness gates only on Postgres and Redis; the rest is reported, not gated.

A result's `detail` (what is configured, or the exception text of a failure) may name hosts, ARNs or
users: it is logged and shown only to a platform admin (api/health.py), never to an anonymous caller.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from personal_agent.settings import get_settings

log = logging.getLogger("personal_agent.health")


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    detail: str
    latency_ms: float

    def public(self) -> dict[str, object]:
        """What anyone may see: the dependency's name, whether it is ok, and how long the check took."""
        return {"name": self.name, "ok": self.ok, "latency_ms": self.latency_ms}


async def _timed(name: str, check: Callable[[], Awaitable[str]], timeout: float = 2.0) -> CheckResult:
    start = time.perf_counter()
    try:
        detail = await asyncio.wait_for(check(), timeout)
        ok = True
    except Exception as exc:  # a failing dependency is a result, not an error
        detail, ok = f"{type(exc).__name__}: {exc}"[:200], False
        log.warning("dependency check failed", extra={"check": name, "detail": detail})
    return CheckResult(name, ok, detail, round((time.perf_counter() - start) * 1000, 2))


async def _postgres() -> str:
    from personal_agent.db import system_transaction

    async with system_transaction() as conn:
        await conn.execute("SELECT 1")
    return "ok"


async def _redis() -> str:
    from personal_agent.bus import get_bus

    if not await get_bus().ping():
        raise RuntimeError("no PONG")
    return "ok"


async def readiness() -> list[CheckResult]:
    """The hard dependencies, checked concurrently."""
    return list(await asyncio.gather(_timed("postgres", _postgres), _timed("redis", _redis)))


async def _state_machine() -> str:
    settings = get_settings()
    if not settings.state_machine_arn:
        raise RuntimeError("PA_STATE_MACHINE_ARN is not set: durable runs are unavailable")
    return settings.state_machine_arn.rsplit(":", 1)[-1]


async def _models() -> str:
    from personal_agent.secret_env import ensure_secrets_loaded

    ensure_secrets_loaded()
    settings = get_settings()
    providers = [
        name
        for name, key in (
            ("openai", settings.openai_api_key),
            ("anthropic", settings.anthropic_api_key),
            ("openai-compatible", settings.openai_compatible_base_url),
        )
        if key
    ]
    if providers:
        return ", ".join(providers)
    if settings.is_local:
        return "offline demo model only (no provider key configured)"
    raise RuntimeError("no model provider configured")


async def _code_sandbox() -> str:
    """What isolates `run_python` here; when nothing can, why (the tool is then not offered)."""
    from personal_agent.sandbox.sessions import availability

    found = await asyncio.to_thread(availability)
    if not found.ok:
        raise RuntimeError(found.detail)
    return found.detail


async def soft_dependencies() -> list[CheckResult]:
    """Soft dependencies: reported on /health/deps, never a reason to be unready."""
    return list(
        await asyncio.gather(
            _timed("state_machine", _state_machine),
            _timed("model_providers", _models),
            _timed("code_sandbox", _code_sandbox, timeout=25.0),
        )
    )
