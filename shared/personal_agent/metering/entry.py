"""The metering function's entry point: configuration from the environment, then the due exports."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from personal_agent.db import close_pool
from personal_agent.metering.config import MeteringConfig
from personal_agent.metering.export import export_due


async def export_for_schedule(at: datetime | None) -> dict[str, Any]:
    """Export the periods due at `at`; a summary for the function's result (no tenant content).

    The pool is closed afterwards: a frozen container holding a connection would keep a scale-to-zero database
    (Aurora at 0 ACU, Neon) from pausing until the container is reclaimed.
    """
    try:
        results = await export_due(MeteringConfig.from_environment(), at)
    finally:
        await close_pool()
    return {
        "exported": [f"{r.period.kind}:{r.period.label}" for r in results if r.outcome == "exported"],
        "already_exported": [f"{r.period.kind}:{r.period.label}" for r in results if r.outcome == "already_exported"],
    }
