"""Webhooks: `POST /api/v1/hooks/{workflow_id}`. No bearer token of a user here: the request proves itself
with a Standard Webhooks signature (or the workflow's own bearer token). On AWS the triggers function serves
this router (`create_hooks_app`); locally the dev server serves it with the rest of the API."""

from __future__ import annotations

from uuid import UUID

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from personal_agent.api.errors import install_error_handlers
from personal_agent.api.openapi import install_openapi

router = APIRouter(prefix="/api/v1/hooks", tags=["webhooks"])

# The body is read raw (its bytes are what the signature covers), so FastAPI cannot describe it by itself.
_BODY = {
    "requestBody": {
        "required": False,
        "content": {
            "application/json": {"schema": {}, "examples": {"event": {"value": {"title": "Build 42 failed"}}}},
            "text/plain": {"schema": {"type": "string", "maxLength": 24 * 1024}},
        },
    }
}


class WebhookAccepted(BaseModel):
    run_id: str
    status: str = Field(
        description="`started`, `queued` (the workflow's chat is busy: the run starts when its run ends, "
        "`lifecycle/followup_queue.py`), or `skipped` (over budget: no run started)"
    )
    duplicate: bool = Field(description="true when this webhook-id already started the run")
    status_url: str
    events_url: str


@router.post(
    "/{workflow_id}",
    status_code=202,
    operation_id="receive_webhook",
    response_model=WebhookAccepted,
    openapi_extra=_BODY,
)
async def receive_webhook(workflow_id: UUID, request: Request) -> JSONResponse:
    """Start the workflow's run (or return the run this `webhook-id` already started): 202 with its status URL."""
    from personal_agent.workflows.webhooks import check_size
    from personal_agent.workflows.webhooks import receive_webhook as receive

    declared = request.headers.get("content-length", "")
    if declared.isdigit():
        check_size(int(declared))
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        check_size(len(body))
    headers = {name.lower(): value for name, value in request.headers.items()}
    accepted = await receive(workflow_id, headers, bytes(body))
    status_url = f"/api/v1/runs/{accepted.run_id}"
    content = {
        "run_id": str(accepted.run_id),
        "status": accepted.status,
        "duplicate": accepted.duplicate,
        "status_url": status_url,
        "events_url": f"{status_url}/events",
    }
    return JSONResponse(content, status_code=202, headers={"Location": status_url})


def create_hooks_app() -> FastAPI:
    """The webhook receiver alone (the triggers function's app), with the API's error mapping."""
    app = FastAPI(title="Personal Agent webhooks", version="0.1.0")
    install_error_handlers(app)
    app.include_router(router)
    install_openapi(app)
    return app
