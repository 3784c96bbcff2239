"""The first-party tools, in pydantic-ai's idiom: functions taking `RunContext[RunDeps]` that raise `ModelRetry`
for what the model can fix. Only the engine imports this module (it loads pydantic-ai); the metadata the API
snapshots at launch is registered under the same names in `tools/registry.py`."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pydantic_ai import RunContext

from personal_agent.tools import arithmetic
from personal_agent.tools.deps import RunDeps

log = logging.getLogger("personal_agent.tools")


def current_time(ctx: RunContext[RunDeps]) -> str:
    """The current date and time in UTC (ISO 8601)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def calculate(ctx: RunContext[RunDeps], expression: str) -> str:
    """Evaluate an arithmetic expression (numbers, + - * / // % ** and parentheses)."""
    return arithmetic.calculate(expression)


def send_demo_message(ctx: RunContext[RunDeps], to: str, text: str) -> str:
    """Pretend to send a message (local mode's stand-in for a tool that acts on the world)."""
    log.info("demo message queued", extra={"run_id": str(ctx.deps.run_id)})
    return f"(demo) message to {to} queued: {text[:200]}"


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "current_time": current_time,
    "calculate": calculate,
    "send_demo_message": send_demo_message,
}
