"""A run's trace for the web chat's trace view: what each model request of the run was given and what it cost."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from fastapi import APIRouter
from pydantic import BaseModel, Field

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.lifecycle.run_trace import run_trace

router = APIRouter(prefix="/api/v1", tags=["runs"])


class TraceTool(BaseModel):
    name: str
    description: str
    source: str = Field(description="first_party, mcp or client")
    acts: bool
    untrusted: bool
    parameters: dict[str, Any] | None = Field(description="its parameters' JSON schema (null for an MCP tool)")


class TracePart(BaseModel):
    kind: str = Field(description="a pydantic-ai part kind: user-prompt, tool-return, text, tool-call, ...")
    tool: str | None = None
    content: str | None = None


class TraceUsage(BaseModel):
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    at: str


class TraceRequest(BaseModel):
    index: int
    instructions: str = Field(description="the instructions the request carried (the agent's, then memories)")
    memories: str = Field(description="what the instructions add to the agent's: the user's recalled memories")
    sent: list[TracePart] = Field(description="the parts new since the previous response (user turn, tool results)")
    passages: list[str] = Field(description="knowledge passages retrieved for it (search results)")
    history_messages: int
    history_tokens: int = Field(description="an estimate of the history's size, 3 characters a token")
    cut: bool = Field(description="the history was over the context budget: older turns were summarised")
    response: list[TracePart]
    usage: TraceUsage | None


class TraceAgent(BaseModel):
    slug: str
    version: int


class TraceContext(BaseModel):
    window_tokens: int
    answer_tokens: int
    budget_tokens: int


class RunTrace(BaseModel):
    run_id: str
    status: str
    model: str | None
    agent: TraceAgent | None
    instructions: str
    tools: list[TraceTool]
    context: TraceContext
    requests: list[TraceRequest]
    summaries: list[TraceUsage] = Field(description="summary requests the run made to fit its history")
    created_at: str
    finished_at: str | None


@router.get("/runs/{run_id}/trace", operation_id="get_run_trace", response_model=RunTrace)
async def get_run_trace(run_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    """What each model request of the run was given (instructions, memories, passages, tools, the history against
    the context budget) and what it answered and cost; the run's owner and org admins only (404 otherwise)."""
    return await run_trace(principal, run_id)
