"""The run worker's logic: the inline driver on AWS."""

from __future__ import annotations

from typing import Any
from uuid import UUID


async def run_to_end(run_id: UUID, org_id: UUID) -> dict[str, Any]:
    """Advance the run until it ends (no time budget); a crash marks it failed."""
    from personal_agent.engine.runner import advance, fail_run

    try:
        outcome = await advance(run_id, org_id)
    except Exception as exc:
        await fail_run(run_id, org_id, "internal_error", f"the run failed: {type(exc).__name__}")
        raise
    return {"run_id": str(run_id), "status": outcome.status}
