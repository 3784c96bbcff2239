"""Triggers function: EventBridge Scheduler events and webhooks (HTTP API events) start workflow runs."""

from __future__ import annotations

from typing import Any

from personal_agent.errors import InvalidInput
from personal_agent.observability import instrument
from personal_agent.runtime import run_sync
from personal_agent.workflows.schedules import SCHEDULE_SOURCE
from personal_agent.workflows.triggers import fire_scheduled_event

_webhooks: Any = None


def _webhook_app() -> Any:
    """The webhook router behind Mangum, made on the container's first webhook."""
    global _webhooks
    if _webhooks is None:
        from mangum import Mangum

        from personal_agent.api.hooks import create_hooks_app

        _webhooks = Mangum(create_hooks_app(), lifespan="off")
    return _webhooks


@instrument(correlation_id_path="requestContext.requestId || workflow_id", trace=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """A webhook (verified by its signature, answered 202) or a schedule's fire (started once per fire time)."""
    if event.get("source") == SCHEDULE_SOURCE:
        return run_sync(fire_scheduled_event(event))
    if "requestContext" in event:
        response: dict[str, Any] = _webhook_app()(event, context)
        return response
    raise InvalidInput("the triggers function takes schedule events and webhooks only", code="unknown_event")
