"""Run recovery function: the run worker's on-failure destination, which ends an inline run whose every attempt
died (code `worker_lost`), so its chat stops "working" and its stream gets a RUN_ERROR."""

from __future__ import annotations

from typing import Any

from personal_agent.lifecycle.recovery import handle_failure_record
from personal_agent.observability import instrument
from personal_agent.runtime import run_sync


@instrument(correlation_id_path="requestPayload.run_id", trace=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """End the inline run of a failed run worker event."""
    return run_sync(handle_failure_record(event))
