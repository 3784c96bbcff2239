"""Runs: start one in a chat (202 with its events URL), read its status, cancel it."""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.runs import service
from personal_agent.runs.launch import LaunchRequest, launch_run

router = APIRouter(prefix="/api/v1", tags=["runs"])


class RunCreate(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"message": "Hello!"}, {"message": "Summarise this chat", "mode": "inline"}]}
    )

    message: str = Field(
        "", description="the user's turn (at most 32,000 characters: 413 `message_too_long`); none with `regenerate`"
    )
    model: str | None = None
    mode: Literal["inline", "durable", "auto"] = "auto"
    tools: list[str] | None = Field(
        None, max_length=50, description="tool names from `GET /api/v1/tools`; null: the default tools"
    )
    attachments: list[UUID] = Field(
        default_factory=list,
        max_length=8,
        description="ids from `POST /api/v1/chats/{chat_id}/attachments`, uploaded; an image needs a `vision` model"
        " (422 `model_lacks_vision` / `no_vision_model`)",
    )
    parent_message_id: int | None = Field(
        None,
        description="the message the turn continues from (`message_id` of a transcript item): an answer, to branch"
        " there; null to start the chat over (editing its first message); omitted: the chat's latest message."
        " With `regenerate`, the user message whose answer is written again (a sibling of the old one)."
        " 404 `message_not_found`, 422 `invalid_parent`",
    )
    regenerate: bool = Field(False, description="answer the user message `parent_message_id` again")

    @model_validator(mode="after")
    def _message_unless_regenerating(self) -> RunCreate:
        if not self.regenerate and "message" not in self.model_fields_set:
            raise ValueError("`message` is required (only a regenerate sends none)")
        return self


class RunAccepted(BaseModel):
    run_id: UUID
    mode: str
    model: str
    events_url: str
    status_url: str


class GatedToolOut(BaseModel):
    name: str
    server: str
    trust_tier: int
    required_tier: int = Field(description="the run's routing tier, above the tool's trust tier")


class RunToolOut(BaseModel):
    name: str
    server: str | None = Field(description="the MCP server the tool comes from; null for a first-party tool")
    trust_tier: int = Field(description="the trust tier of the tool's source (first-party: 2)")
    acts: bool
    untrusted: bool = Field(description="its results are untrusted (acting tools then need a person's approval)")


class ChildRunOut(BaseModel):
    id: str
    status: str
    mode: str
    task: str = Field(description="what the parent's `delegate` call asked of it")
    preset: str | None
    error: dict[str, Any] | None
    cost_usd: float = Field(description="USD so far, its own sub-agents included (unpriced usage counts 0)")
    created_at: str
    finished_at: str | None
    events_url: str


class RunView(BaseModel):
    id: str
    chat_id: str | None
    status: str = Field(description="queued, running, waiting, succeeded, failed, cancelled or skipped")
    mode: str = Field(description="inline or durable")
    model: str | None
    model_chain: Any = Field(description="the models the run may fall back through, best first")
    answered_model: str | None
    routing: Any
    trigger_source: str
    parent_run_id: str | None
    error: dict[str, Any] | None
    gated_tools: list[GatedToolOut] = Field(description="tools the tier gate kept from the run")
    tools: list[RunToolOut] = Field(description="the run's toolset as snapshotted at launch")
    created_at: str
    started_at: str | None
    finished_at: str | None
    events_url: str
    cost_usd: float = Field(description="USD so far of the run and every sub-agent below it (unpriced counts 0)")
    children: list[ChildRunOut] = Field(description="the sub-agents this run started, oldest first")


class CancelOut(BaseModel):
    run_id: str
    status: str = Field(description="`cancelling`, or the run's status when it had already ended")
    cancelled: bool


@router.post("/chats/{chat_id}/runs", status_code=202, operation_id="start_run", response_model=RunAccepted)
async def start_run(chat_id: UUID, body: RunCreate, principal: CurrentPrincipal) -> JSONResponse:
    spec = await launch_run(  # the chat must be the caller's: checked in the launch's one transaction
        LaunchRequest(
            org_id=principal.org_id,
            user_id=principal.user_id,
            chat_id=chat_id,
            message=body.message,
            model=body.model,
            mode=body.mode,
            tools=tuple(body.tools) if body.tools is not None else None,
            attachments=tuple(body.attachments),
            parent_message_id=body.parent_message_id if "parent_message_id" in body.model_fields_set else "latest",
            regenerate=body.regenerate,
            owned_chat=True,
        )
    )
    body_out = {
        "run_id": str(spec.run_id),
        "mode": spec.mode,
        "model": spec.model,
        "events_url": f"/api/v1/runs/{spec.run_id}/events",
        "status_url": f"/api/v1/runs/{spec.run_id}",
    }
    return JSONResponse(body_out, status_code=202, headers={"Location": body_out["status_url"]})


@router.get("/runs/{run_id}", operation_id="get_run", response_model=RunView)
async def get_run(run_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.run_view(principal, run_id)


@router.post("/runs/{run_id}/cancel", status_code=202, operation_id="cancel_run", response_model=CancelOut)
async def cancel_run(run_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.cancel(principal, run_id)
