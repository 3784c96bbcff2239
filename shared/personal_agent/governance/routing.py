"""Cheap routes, capable writes: a cheap model classifies each request with structured output; its
confidence gates tools that act on the world (a code path, not a prompt)."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel, Field

from personal_agent.spec.run_spec import RunSpec

log = logging.getLogger("personal_agent.routing")
ROUTER_INSTRUCTIONS = (
    "Classify the user's request. intent: a few words. acts_on_world: true if fulfilling it changes something "
    "outside this conversation (sends, posts, buys, deletes, books). confidence: how sure you are (0 to 1) "
    "that you understood what the user wants. title: a short title (2 to 6 words) for a conversation that starts "
    "with this request, in its language, without quotes."
)


class RoutingDecision(BaseModel):
    intent: str = Field(max_length=200)
    acts_on_world: bool
    confidence: float = Field(ge=0, le=1)
    title: str | None = Field(None, max_length=120)
    """What to call a chat that starts with this request (`chats/titles.py`); a router may leave it out."""


async def classify_request(spec: RunSpec, text: str) -> tuple[RoutingDecision | None, Any]:
    """The router's decision and its model response (for the ledger), or (None, None) when it failed."""
    if spec.router_model is None:
        return None, None
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse

    from personal_agent.governance.model_build import build_one

    try:
        model = await build_one(spec.org_id, spec.router_model, spec.routing_tier)
        agent: Agent[None, RoutingDecision] = Agent(
            model, output_type=RoutingDecision, instructions=ROUTER_INSTRUCTIONS
        )
        result = await agent.run(text[:4000])
    except Exception as exc:  # a failed classification is a result: acting tools then need approval
        log.warning("routing classification failed: %s", type(exc).__name__)
        return None, None
    responses = [m for m in result.all_messages() if isinstance(m, ModelResponse)]
    return result.output, (responses[-1] if responses else None)


def tool_needs_approval(acts: bool, declared: bool, decision: dict[str, Any] | None, threshold: float) -> bool:
    """The confidence gate: an acting tool needs approval below the threshold or without a classification."""
    if declared:
        return True
    if not acts:
        return False
    if decision is None:
        return True
    return float(decision.get("confidence", 0.0)) < threshold
