"""The data jobs function's work: a data export handed over by the API (`{"pa_export": …}`, an asynchronous
invoke) or the daily retention sweep (`{"source": "pa.retention"}`, its EventBridge Scheduler schedule)."""

from __future__ import annotations

from typing import Any

from personal_agent.lifecycle import data_exports, data_retention


async def handle(event: dict[str, Any]) -> dict[str, Any]:
    if data_exports.JOB_KEY in event:
        return await data_exports.run_job(event)
    if event.get("source") == data_retention.RETENTION_SOURCE:
        return await data_retention.sweep_all()
    raise ValueError("not a data job: expected pa_export or source pa.retention")
