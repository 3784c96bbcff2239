"""Runs: start one in a chat (202 with its events URL), read its status, cancel it. (Starting one with its events
in the same response is the stream app's: `stream/run_stream.py`.)"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.api.run_create import RunCreate
from personal_agent.lifecycle import run_views as service
from personal_agent.lifecycle.launch import launch_run

router = APIRouter(prefix="/api/v1", tags=["runs"])


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


class RunAgentOut(BaseModel):
    id: UUID
    slug: str
    version: int = Field(description="the agent's version the run launched with")


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
    agent: RunAgentOut | None = Field(None, description="the agent (and its version) the run launched with")
    output: Any = Field(
        None, description="an agent with an `output_schema`: the run's validated structured answer once it succeeded"
    )
    created_at: str
    started_at: str | None
    finished_at: str | None
    events_url: str
    cost_usd: float = Field(description="USD so far of the run and every sub-agent below it (unpriced counts 0)")
    sandbox_seconds: float = Field(0.0, description="wall-clock seconds the run's `run_python` calls held a sandbox")
    children: list[ChildRunOut] = Field(description="the sub-agents this run started, oldest first")


class RunSummaryOut(BaseModel):
    id: UUID
    chat_id: UUID | None
    status: str
    mode: str
    trigger_source: str = Field(description="chat, agui, webhook, schedule, openai_api, a2a, ...")
    model: str | None
    agent: RunAgentOut | None
    created_at: datetime
    finished_at: datetime | None
    cost_usd: float = Field(description="USD of the run and its sub-agents (unpriced counts 0)")


class RunList(BaseModel):
    items: list[RunSummaryOut]
    next_before: datetime | None = Field(description="pass as `before` for the next page; null on the last one")


class CancelOut(BaseModel):
    run_id: str
    status: str = Field(description="`cancelling`, or the run's status when it had already ended")
    cancelled: bool


@router.post("/chats/{chat_id}/runs", status_code=202, operation_id="start_run", response_model=RunAccepted)
async def start_run(chat_id: UUID, body: RunCreate, principal: CurrentPrincipal) -> JSONResponse:
    spec = await launch_run(body.launch_request(principal, chat_id))
    body_out = {
        "run_id": str(spec.run_id),
        "mode": spec.mode,
        "model": spec.model,
        "events_url": f"/api/v1/runs/{spec.run_id}/events",
        "status_url": f"/api/v1/runs/{spec.run_id}",
    }
    return JSONResponse(body_out, status_code=202, headers={"Location": body_out["status_url"]})


@router.get("/runs", operation_id="list_runs", response_model=RunList)
async def list_runs(
    principal: CurrentPrincipal,
    trigger_source: Annotated[str | None, Query(max_length=32)] = None,
    status: Annotated[str | None, Query(max_length=32)] = None,
    before: datetime | None = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
) -> dict[str, Any]:
    """The caller's runs (not sub-agents), newest first, whatever started them; `before` pages back."""
    return await service.list_runs(principal, trigger_source=trigger_source, status=status, before=before, limit=limit)


@router.get("/runs/{run_id}", operation_id="get_run", response_model=RunView)
async def get_run(run_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.run_view(principal, run_id)


@router.post("/runs/{run_id}/cancel", status_code=202, operation_id="cancel_run", response_model=CancelOut)
async def cancel_run(run_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    return await service.cancel(principal, run_id)
