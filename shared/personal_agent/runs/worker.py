"""The run worker's logic: the inline driver on AWS (one asynchronous invocation per run)."""

from __future__ import annotations

import uuid
from typing import Any
from uuid import UUID


def invocation_owner(request_id: str) -> str:
    """The lease owner of one invocation: the on-failure destination recognises its own dead attempts by it."""
    return f"lambda:{request_id}:{uuid.uuid4().hex[:8]}"


async def run_to_end(run_id: UUID, org_id: UUID, request_id: str) -> dict[str, Any]:
    """Drive the run under a lease until it ends (no time budget); a crash marks it failed. An invocation that
    died (timeout, out of memory) is retried by Lambda and resumes from the last checkpoint once its lease
    expired; `personal_agent.runs.recovery.fail_lost_invocation` ends it after the last retry."""
    from personal_agent.engine.runner import fail_run
    from personal_agent.runs.drivers import drive_inline

    try:
        status = await drive_inline(run_id, org_id, invocation_owner(request_id))
    except Exception as exc:
        await fail_run(run_id, org_id, "internal_error", f"the run failed: {type(exc).__name__}")
        raise
    return {"run_id": str(run_id), "status": status}
