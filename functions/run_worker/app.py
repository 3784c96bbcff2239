"""Run worker function: invoked asynchronously with a run id, runs the engine to the end (inline mode)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.lifecycle.drivers import cancel_invocation, run_invocation
from personal_agent.observability import instrument
from personal_agent.runtime import run_sync


@instrument(correlation_id_path="run_id", trace=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Run one inline run to its end (a retried invocation resumes it from its last checkpoint), or finish the
    cancel of a run the API function stopped (`cancel`: it has no engine to end a run nobody advances)."""
    run_id, org_id = UUID(event["run_id"]), UUID(event["org_id"])
    if "cancel" in event:
        return run_sync(cancel_invocation(run_id, org_id, event["cancel"]))
    return run_sync(run_invocation(run_id, org_id, context.aws_request_id))
