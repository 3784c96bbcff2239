"""Metering function: on its schedule, exports this stack's usage for every closed hour and month to the
operator's bucket and bus, once per period."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from personal_agent.metering.entry import export_for_schedule
from personal_agent.observability import instrument
from personal_agent.runtime import run_sync


@instrument(correlation_id_path="id")
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Export what is due at the scheduled event's time (a redelivered event exports nothing twice)."""
    at = datetime.fromisoformat(event["time"].replace("Z", "+00:00")) if event.get("time") else None
    return run_sync(export_for_schedule(at))
