"""The channels function's entry (`functions/channels/app.py`): Slack's and Telegram's webhooks through the HTTP API
(behind Mangum, acked at once), the async invokes it hands its own runs to after the ack, and SES's receipt events."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from personal_agent.errors import InvalidInput

_app: Any = None


def create_channels_app() -> FastAPI:
    """The inbound endpoints alone, with the API's error mapping."""
    from personal_agent.api.errors import install_error_handlers
    from personal_agent.channels.routes import router

    app = FastAPI(title="Personal Agent channels", version="0.1.0")
    install_error_handlers(app)
    app.include_router(router)
    return app


def _http(event: dict[str, Any], context: Any) -> dict[str, Any]:
    global _app
    if _app is None:
        from mangum import Mangum

        _app = Mangum(create_channels_app(), lifespan="off")
    response: dict[str, Any] = _app(event, context)
    return response


def handle(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """One event of any of the three kinds."""
    from personal_agent.channels import jobs, ses_inbound
    from personal_agent.runtime import run_sync

    if jobs.JOB_KEY in event:
        run_sync(jobs.run_job(event))
        return {"handled": 1}
    if ses_inbound.is_ses_event(event):
        return {"handled": run_sync(ses_inbound.receive_ses(event))}
    if "requestContext" in event:
        return _http(event, context)
    raise InvalidInput(
        "the channels function takes channel webhooks, its own jobs and SES receipts", code="unknown_event"
    )
