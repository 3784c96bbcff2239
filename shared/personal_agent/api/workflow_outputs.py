"""Workflow outputs (where results go), their delivery log and redelivery, and test-firing a workflow."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.workflows import manual_fire, outputs
from personal_agent.workflows.output_delivery_store import OutputDelivery
from personal_agent.workflows.output_store import Output

router = APIRouter(prefix="/api/v1/workflows/{workflow_id}", tags=["workflows"])

Event = Literal["run.finished", "approval.requested", "question.asked"]


class OutputCreate(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"kind": "webhook", "url": "https://ci.example.com/agent-results"},
                {"kind": "slack", "url": "https://hooks.slack.com/services/T000/B000/XXXX"},
                {"kind": "email", "email": "oncall@example.com", "events": ["approval.requested"]},
            ]
        }
    )

    kind: Literal["webhook", "slack", "teams", "email"]
    url: str | None = Field(None, max_length=2_000, description="callback, Slack or Teams incoming-webhook URL")
    email: str | None = Field(None, max_length=320, description="recipient of an e-mail output")
    events: list[Event] | None = Field(None, max_length=2, description="default: both")


class OutputOut(BaseModel):
    id: UUID
    workflow_id: UUID
    kind: Literal["webhook", "slack", "teams", "email"]
    target_hint: str = Field(description="the URL's origin, or the e-mail address")
    email: str | None
    events: list[Event]
    enabled: bool
    created_at: datetime


class OutputCreated(OutputOut):
    signing_secret: str | None = Field(description="a callback's Standard Webhooks secret, shown this once")


class OutputList(BaseModel):
    items: list[OutputOut]


class OutputPatch(BaseModel):
    enabled: bool


class OutputDeliveryOut(BaseModel):
    id: UUID
    workflow_id: UUID
    output_id: UUID
    output_kind: str
    target_hint: str
    event: Event
    event_key: str
    run_id: UUID | None
    status: Literal["pending", "retrying", "succeeded", "failed"]
    attempts: int
    last_error: str | None
    last_status_code: int | None
    next_attempt_at: datetime | None
    delivered_at: datetime | None
    created_at: datetime
    updated_at: datetime


class OutputDeliveryPage(BaseModel):
    items: list[OutputDeliveryOut]
    next_cursor: str | None


class FireIn(BaseModel):
    body: Any = Field(None, description='the JSON the run sees as the webhook body (default {"test": true})')


class FireOut(BaseModel):
    run_id: UUID
    status: str
    key: str = Field(description="the delivery key in the run history (`test-fire:…`)")
    status_url: str
    events_url: str


@router.post("/outputs", status_code=201, operation_id="add_workflow_output", response_model=OutputCreated)
async def add_output(workflow_id: UUID, body: OutputCreate, principal: CurrentPrincipal) -> dict[str, Any]:
    """Send the workflow's results (and its headless runs' pending approvals) somewhere."""
    return await outputs.add_output(principal, workflow_id, body.model_dump())


@router.get("/outputs", operation_id="list_workflow_outputs", response_model=OutputList)
async def list_outputs(workflow_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    return {"items": await outputs.list_outputs(principal, workflow_id)}


@router.patch("/outputs/{output_id}", operation_id="update_workflow_output", response_model=OutputOut)
async def update_output(workflow_id: UUID, output_id: UUID, body: OutputPatch, principal: CurrentPrincipal) -> Output:
    return await outputs.set_enabled(principal, workflow_id, output_id, body.enabled)


@router.delete("/outputs/{output_id}", status_code=204, operation_id="remove_workflow_output")
async def remove_output(workflow_id: UUID, output_id: UUID, principal: CurrentPrincipal) -> Response:
    await outputs.remove_output(principal, workflow_id, output_id)
    return Response(status_code=204)


@router.get("/output-deliveries", operation_id="workflow_output_deliveries", response_model=OutputDeliveryPage)
async def output_deliveries(
    workflow_id: UUID,
    principal: CurrentPrincipal,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> dict[str, Any]:
    """The delivery log: every send to every output, newest first, with attempts and the last error."""
    return await outputs.delivery_log(principal, workflow_id, limit, cursor)


@router.post(
    "/output-deliveries/{output_delivery_id}/redeliver",
    status_code=202,
    operation_id="redeliver_workflow_output",
    response_model=OutputDeliveryOut,
)
async def redeliver(workflow_id: UUID, output_delivery_id: UUID, principal: CurrentPrincipal) -> OutputDelivery:
    """Send a delivery again (same `webhook-id`), with a fresh set of attempts."""
    return await outputs.redeliver(principal, workflow_id, output_delivery_id)


@router.post("/test-fire", status_code=202, operation_id="test_fire_workflow", response_model=FireOut)
async def test_fire(workflow_id: UUID, body: FireIn, principal: CurrentPrincipal) -> dict[str, Any]:
    """Start a run now, as a webhook delivery would (without the sender's signature: you are signed in)."""
    accepted, key = await manual_fire.fire_now(principal, workflow_id, body.body)
    return {
        "run_id": accepted.run_id,
        "status": accepted.status,
        "key": key,
        "status_url": f"/api/v1/runs/{accepted.run_id}",
        "events_url": f"/api/v1/runs/{accepted.run_id}/events",
    }
