"""Workflows: CRUD, credential rotation, and each workflow's run history. Webhooks arrive at `api/hooks.py`. An org
admin reads and may delete a member's workflow; changing it is its owner's alone (404 to anyone else)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.workflows import service

router = APIRouter(prefix="/api/v1/workflows", tags=["workflows"])


class ScheduleIn(BaseModel):
    expression: str = Field(
        max_length=256, description="cron(min hour day-of-month month day-of-week year) or rate(N unit)"
    )
    timezone: str = Field("UTC", max_length=64, description="IANA time zone the cron expression is read in")
    enabled: bool = True


class WorkflowCreate(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"name": "CI failures", "prompt_template": "CI failed: {{body.title}}", "bearer_token": True},
                {
                    "name": "Morning digest",
                    "schedule": {"expression": "cron(0 7 * * ? *)", "timezone": "Europe/Berlin"},
                },
            ]
        }
    )

    name: str = Field(min_length=1, max_length=200)
    instructions: str | None = Field(None, max_length=32_000)
    prompt_template: str | None = Field(None, max_length=16_000)
    model: str | None = Field(None, max_length=200)
    tools: list[str] | None = Field(None, max_length=50)
    chat_id: UUID | None = None
    approval_policy: Literal["wait", "deny"] = "wait"
    approval_timeout_seconds: int = Field(86_400, ge=1, le=604_800)
    rate_limit_per_minute: int = Field(60, ge=1, le=10_000)
    webhook_enabled: bool = True
    recall_memories: bool = Field(
        False, description="its runs (webhook, schedule, test-fire) recall your memories; off unless you opt in"
    )
    agent: str | None = Field(
        None,
        pattern=r"^[a-z0-9-]{2,64}$",
        description="the slug of the agent its runs use; its own instructions, model and tools override the agent's",
    )
    bearer_token: bool = Field(False, description="also issue a bearer token for senders that cannot sign")
    schedule: ScheduleIn | None = None


class WorkflowUpdate(BaseModel):
    name: str | None = Field(None, min_length=1, max_length=200)
    instructions: str | None = Field(None, max_length=32_000)
    prompt_template: str | None = Field(None, max_length=16_000)
    model: str | None = Field(None, max_length=200)
    tools: list[str] | None = Field(None, max_length=50)
    chat_id: UUID | None = None
    approval_policy: Literal["wait", "deny"] | None = None
    approval_timeout_seconds: int | None = Field(None, ge=1, le=604_800)
    rate_limit_per_minute: int | None = Field(None, ge=1, le=10_000)
    webhook_enabled: bool | None = None
    recall_memories: bool | None = None
    agent: str | None = Field(None, pattern=r"^[a-z0-9-]{2,64}$", description="null: the built-in assistant")
    schedule: ScheduleIn | None = None


class Rotate(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"grace_seconds": 3600}, {"grace_seconds": 0}]})

    grace_seconds: int = Field(86_400, ge=0, le=604_800, description="how long the previous credential still works")


class WebhookOut(BaseModel):
    url: str
    enabled: bool
    signing_secret_hint: str | None
    bearer_token_hint: str | None


class ScheduleOut(BaseModel):
    expression: str
    timezone: str
    enabled: bool
    next_fire_at: datetime | None
    last_fired_at: datetime | None


class WorkflowOut(BaseModel):
    id: UUID
    name: str
    owner_id: UUID
    chat_id: UUID | None
    instructions: str | None
    prompt_template: str
    model: str | None
    tools: list[str] | None
    approval_policy: Literal["wait", "deny"]
    approval_timeout_seconds: int
    rate_limit_per_minute: int
    recall_memories: bool = Field(description="its runs recall the owner's memories (the owner opted in)")
    agent: str | None = Field(None, description="the slug of the agent its runs use (null: the built-in assistant)")
    created_at: datetime
    updated_at: datetime
    webhook: WebhookOut
    schedule: ScheduleOut | None


class WorkflowCreated(WorkflowOut):
    signing_secret: str = Field(description="shown this once")
    bearer_token: str | None = Field(description="shown this once (when asked for)")


class WorkflowList(BaseModel):
    items: list[WorkflowOut]


class SigningSecretOut(BaseModel):
    signing_secret: str = Field(description="shown this once")
    previous_valid_until: datetime | None


class BearerTokenOut(BaseModel):
    bearer_token: str = Field(description="shown this once")
    previous_valid_until: datetime | None


class SchedulePreview(BaseModel):
    expression: str | None = Field(description="null: nothing sent and no schedule saved (so no fire times)")
    timezone: str
    next_fires: list[datetime] = Field(description="the coming fire times, UTC, soonest first")


class WorkflowRunOut(BaseModel):
    delivery_id: UUID
    trigger: Literal["webhook", "schedule"]
    key: str
    received_at: datetime
    run_id: UUID | None
    status: str
    mode: str | None
    error: dict[str, Any] | None
    started_at: datetime | None
    finished_at: datetime | None
    status_url: str | None


class WorkflowRunPage(BaseModel):
    items: list[WorkflowRunOut]
    next_cursor: str | None


@router.post("", status_code=201, operation_id="create_workflow", response_model=WorkflowCreated)
async def create_workflow(body: WorkflowCreate, principal: CurrentPrincipal) -> dict[str, Any]:
    """Create a workflow; the response holds its signing secret (and bearer token), shown this once."""
    return await service.create_workflow(principal, body.model_dump())


@router.get("", operation_id="list_workflows", response_model=WorkflowList)
async def list_workflows(principal: CurrentPrincipal) -> dict[str, Any]:
    return {"items": await service.list_workflows(principal)}


@router.get("/{workflow_id}", operation_id="get_workflow", response_model=WorkflowOut)
async def get_workflow(workflow_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.get_workflow(principal, workflow_id)


@router.patch("/{workflow_id}", operation_id="update_workflow", response_model=WorkflowOut)
async def update_workflow(workflow_id: UUID, body: WorkflowUpdate, principal: CurrentPrincipal) -> dict[str, Any]:
    """Change the fields sent; `"schedule": null` removes the schedule."""
    fields = body.model_dump(exclude_unset=True)
    return await service.update_workflow(principal, workflow_id, fields)


@router.delete("/{workflow_id}", status_code=204, operation_id="delete_workflow")
async def delete_workflow(workflow_id: UUID, principal: CurrentPrincipal) -> Response:
    await service.delete_workflow(principal, workflow_id)
    return Response(status_code=204)


@router.post(
    "/{workflow_id}/signing-secret", operation_id="rotate_workflow_signing_secret", response_model=SigningSecretOut
)
async def rotate_signing_secret(workflow_id: UUID, body: Rotate, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.rotate_signing_secret(principal, workflow_id, body.grace_seconds)


@router.post("/{workflow_id}/bearer-token", operation_id="issue_workflow_bearer_token", response_model=BearerTokenOut)
async def issue_bearer_token(workflow_id: UUID, body: Rotate, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.issue_bearer_token(principal, workflow_id, body.grace_seconds)


@router.delete("/{workflow_id}/bearer-token", status_code=204, operation_id="revoke_workflow_bearer_token")
async def revoke_bearer_token(workflow_id: UUID, principal: CurrentPrincipal) -> Response:
    await service.revoke_bearer_token(principal, workflow_id)
    return Response(status_code=204)


@router.get("/{workflow_id}/runs", operation_id="workflow_runs", response_model=WorkflowRunPage)
async def workflow_runs(
    workflow_id: UUID,
    principal: CurrentPrincipal,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> dict[str, Any]:
    """The workflow's deliveries and their runs, newest first."""
    return await service.run_history(principal, workflow_id, limit, cursor)


@router.get("/{workflow_id}/schedule/preview", operation_id="preview_workflow_schedule", response_model=SchedulePreview)
async def preview_schedule(
    workflow_id: UUID,
    principal: CurrentPrincipal,
    expression: Annotated[str | None, Query(max_length=256, description="left out: the saved schedule")] = None,
    timezone: Annotated[str | None, Query(max_length=64, description="left out: the saved one, or UTC")] = None,
    count: Annotated[int, Query(ge=1, le=20)] = 5,
) -> dict[str, Any]:
    """When the schedule would fire next (the saved one, or `expression` as if saved now; neither: none): 422
    `invalid_schedule_expression` or `invalid_timezone`."""
    from personal_agent.workflows.schedules import preview

    saved = (await service.get_workflow(principal, workflow_id))["schedule"]
    return preview(saved, expression, timezone, count)
