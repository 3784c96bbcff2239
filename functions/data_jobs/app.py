"""Data jobs function: builds a data export into the documents bucket (the API's asynchronous invoke, so the ZIP
never passes through a 6 MB Lambda response) and runs the daily retention sweep (its EventBridge Scheduler
schedule)."""

from __future__ import annotations

from typing import Any

from personal_agent.lifecycle.data_jobs import handle
from personal_agent.observability import instrument
from personal_agent.runtime import run_sync


@instrument(correlation_id_path="pa_export.export_id || source", trace=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return run_sync(handle(event))
