"""Workflows: CRUD, credential rotation, and each workflow's run history. Webhooks arrive at `api/hooks.py`."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, Field

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
    schedule: ScheduleIn | None = None


class Rotate(BaseModel):
    grace_seconds: int = Field(86_400, ge=0, le=604_800, description="how long the previous credential still works")


@router.post("", status_code=201, operation_id="create_workflow")
async def create_workflow(body: WorkflowCreate, principal: CurrentPrincipal) -> dict[str, Any]:
    """Create a workflow; the response holds its signing secret (and bearer token), shown this once."""
    return await service.create_workflow(principal, body.model_dump())


@router.get("", operation_id="list_workflows")
async def list_workflows(principal: CurrentPrincipal) -> dict[str, Any]:
    return {"items": await service.list_workflows(principal)}


@router.get("/{workflow_id}", operation_id="get_workflow")
async def get_workflow(workflow_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.get_workflow(principal, workflow_id)


@router.patch("/{workflow_id}", operation_id="update_workflow")
async def update_workflow(workflow_id: UUID, body: WorkflowUpdate, principal: CurrentPrincipal) -> dict[str, Any]:
    """Change the fields sent; `"schedule": null` removes the schedule."""
    fields = body.model_dump(exclude_unset=True)
    return await service.update_workflow(principal, workflow_id, fields)


@router.delete("/{workflow_id}", status_code=204, operation_id="delete_workflow")
async def delete_workflow(workflow_id: UUID, principal: CurrentPrincipal) -> Response:
    await service.delete_workflow(principal, workflow_id)
    return Response(status_code=204)


@router.post("/{workflow_id}/signing-secret", operation_id="rotate_workflow_signing_secret")
async def rotate_signing_secret(workflow_id: UUID, body: Rotate, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.rotate_signing_secret(principal, workflow_id, body.grace_seconds)


@router.post("/{workflow_id}/bearer-token", operation_id="issue_workflow_bearer_token")
async def issue_bearer_token(workflow_id: UUID, body: Rotate, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.issue_bearer_token(principal, workflow_id, body.grace_seconds)


@router.delete("/{workflow_id}/bearer-token", status_code=204, operation_id="revoke_workflow_bearer_token")
async def revoke_bearer_token(workflow_id: UUID, principal: CurrentPrincipal) -> Response:
    await service.revoke_bearer_token(principal, workflow_id)
    return Response(status_code=204)


@router.get("/{workflow_id}/runs", operation_id="workflow_runs")
async def workflow_runs(
    workflow_id: UUID,
    principal: CurrentPrincipal,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: str | None = None,
) -> dict[str, Any]:
    """The workflow's deliveries and their runs, newest first."""
    return await service.run_history(principal, workflow_id, limit, cursor)
