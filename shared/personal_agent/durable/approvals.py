"""Human approval of deferred tool calls (pydantic-ai `requires_approval` tools)."""

from __future__ import annotations

from typing import Any

from personal_agent.engine.emitter import RunEmitter
from personal_agent.runs.spec import RunSpec


async def request_approvals(spec: RunSpec, emitter: RunEmitter, requests: Any, seq: int) -> list[str]:
    """Store a pending approval per deferred call and announce each with a CUSTOM event."""
    raise NotImplementedError("approvals arrive with durable runs")
