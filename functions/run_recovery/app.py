"""Run recovery function: the run worker's on-failure destination, which ends an inline run whose every attempt
died (code `worker_lost`), so its chat stops "working" and its stream gets a RUN_ERROR. It is also the target of
approvals' one-time escalation schedules (`{"source": "pa.escalation"}`, `approvals/escalation_schedule.py`): it
escalates what is due to the org admins."""

from __future__ import annotations

from typing import Any

from personal_agent.lifecycle.approval_escalation import ESCALATION_SOURCE, escalate_due
from personal_agent.lifecycle.recovery import handle_failure_record
from personal_agent.observability import instrument
from personal_agent.runtime import run_sync


@instrument(correlation_id_path="requestPayload.run_id || approval_id", trace=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """End the inline run of a failed run worker event, or escalate the approvals due (a schedule's event)."""
    if event.get("source") == ESCALATION_SOURCE:
        escalated = run_sync(escalate_due())
        return {"escalated": [str(a) for a in escalated]}
    return run_sync(handle_failure_record(event))
