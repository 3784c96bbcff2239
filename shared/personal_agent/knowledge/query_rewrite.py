"""Query rewriting for conversational follow-ups ("and what about the second one?"): the run's cheap router model
turns the user's last message and the turns before it into one standalone search query. Off unless the deployment
sets `PA_KNOWLEDGE_QUERY_REWRITE`; the router must pass the tier of the conversation it reads (the classification
gate, as for the summariser), and any failure keeps the query as it was (a rewrite is a help, never a gate). Its
request is reserved against the budgets and its response metered on the usage ledger like any model request
(`engine/search_rewrite.py`).
bench/retrieval_eval.py measures follow-ups as asked and with the previous question prefixed (its offline stand-in)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from personal_agent.knowledge.query_embedding import MAX_QUERY_CHARS

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ModelResponse
    from pydantic_ai.models import Model

log = logging.getLogger("personal_agent.knowledge.query_rewrite")
REWRITE_INSTRUCTIONS = (
    "You rewrite the last message of a conversation into one standalone search query for a document search: "
    "resolve pronouns and references ('the second one', 'it', 'that') from the earlier turns, keep the names, "
    "numbers and terms the user used, add nothing they did not ask. Answer with the query only."
)
MAX_TURNS = 6
"""The earlier user turns the router reads (the newest)."""


class StandaloneQuery(BaseModel):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)


def user_turns(messages: Sequence[ModelMessage]) -> list[str]:
    """The text of the user's prompts in a run's messages, oldest first."""
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    turns: list[str] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            turns += [p.content for p in message.parts if isinstance(p, UserPromptPart) and isinstance(p.content, str)]
    return turns


def rewrite_prompt(history: Sequence[str], query: str) -> str:
    earlier = "\n".join(f"- {turn[:1000]}" for turn in history[-MAX_TURNS:])
    return f"Earlier turns:\n{earlier}\n\nLast message: {query}"


async def rewrite(model: Model | Any, history: Sequence[str], query: str) -> tuple[str, ModelResponse | None]:
    """The standalone query for `query` after `history` (the user's earlier turns), and the model's response to meter
    (`engine/search_rewrite.py`); `query` itself (and no response) when there is no history or the model fails."""
    if not history:
        return query, None
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse

    agent: Agent[None, StandaloneQuery] = Agent(model, output_type=StandaloneQuery, instructions=REWRITE_INSTRUCTIONS)
    try:
        result = await agent.run(rewrite_prompt(history, query))
    except Exception as exc:  # a failed rewrite searches what was asked
        log.warning("query rewrite failed: %s", type(exc).__name__)
        return query, None
    response = next((m for m in reversed(result.all_messages()) if isinstance(m, ModelResponse)), None)
    return " ".join(result.output.query.split()) or query, response


async def rewrite_query(model: Model | Any, history: Sequence[str], query: str) -> str:
    """The standalone query alone (see `rewrite`)."""
    return (await rewrite(model, history, query))[0]
