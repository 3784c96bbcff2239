"""Webhooks: `POST /api/v1/hooks/{workflow_id}`. No bearer token of a user here: the request proves itself
with a Standard Webhooks signature (or the workflow's own bearer token). On AWS the triggers function serves
this router (`create_hooks_app`); locally the dev server serves it with the rest of the API."""

from __future__ import annotations

from uuid import UUID

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse

from personal_agent.api.errors import install_error_handlers

router = APIRouter(prefix="/api/v1/hooks", tags=["webhooks"])


@router.post("/{workflow_id}", status_code=202, operation_id="receive_webhook")
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
    return app
