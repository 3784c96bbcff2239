"""A run's trace for the web chat's trace view: its steps on a timeline, what each model request of the run was
given (the history as sent after the context cut among it) and what it cost."""

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
    server: str | None = Field(default=None, description="an MCP tool's server (its name)")
    acts: bool
    untrusted: bool
    parameters: dict[str, Any] | None = Field(
        description="its parameters' JSON schema (null for an MCP tool whose server describes it differently now)"
    )


class TracePart(BaseModel):
    kind: str = Field(description="a pydantic-ai part kind: user-prompt, tool-return, text, tool-call, ...")
    tool: str | None = None
    content: str | None = None


class TraceMessage(BaseModel):
    kind: str = Field(description="request (to the model) or response (from it)")
    parts: list[TracePart]


class TraceStep(BaseModel):
    kind: str = Field(description="model_request, tool_call, retrieval, gate or side_request")
    label: str = Field(description="what the step was: a model request, a tool's name, an approval, a rule, the budget")
    start_ms: int = Field(description="when it started, in milliseconds after the run was created")
    duration_ms: int
    request_index: int | None = Field(description="its model request (a tool call's: the one that asked for it)")
    tool_call_id: str | None
    outcome: str | None = Field(description="a gate's decision, a tool call's ok or error, passages found, the model")
    detail: str | None = Field(description="why a gate decided as it did")


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
    history_from: int = Field(
        description="the first message of the trace's `history` the request was sent; those before it were cut"
    )
    summary: str | None = Field(description="the summary sent in place of the cut messages (null: none, left out)")
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
    history: list[TraceMessage] = Field(
        description="the run's whole history (earlier turns, then its own): request i was sent"
        " history[history_from:history_messages]"
    )
    requests: list[TraceRequest]
    steps: list[TraceStep] = Field(description="the run's steps on a timeline, by start")
    summaries: list[TraceUsage] = Field(description="summary requests the run made to fit its history")
    created_at: str
    finished_at: str | None


@router.get("/runs/{run_id}/trace", operation_id="get_run_trace", response_model=RunTrace)
async def get_run_trace(run_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    """What each model request of the run was given (instructions, memories, passages, tools, the history as sent
    after the context cut) and what it answered and cost, and the run's steps on a timeline (model requests, tool
    calls, retrievals, gate decisions); the run's owner and org admins only (404 otherwise)."""
    return await run_trace(principal, run_id)
