"""Summaries of a branch's older turns, for a history that does not fit the model (`engine.context_window`).

A summary is written by the run's cheap routing model, its request reserved against the budget and its usage
recorded in the ledger like any request (request indexes -2, -3, ... of the run that made it), and stored as a
`summary` row that hangs off the last chat message it covers. Later requests, runs and resumed steps on the same
branch reuse it until the turns after it outgrow the window again; then a new summary covers the old one too."""

from __future__ import annotations

import logging
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse

from personal_agent.chats import message_store
from personal_agent.db import org_transaction
from personal_agent.engine import usage
from personal_agent.engine.context_window import (
    SUMMARY_LEAD,
    as_text,
    summary_budget,
    text_tokens,
    tokens,
    user_turns,
    with_summary,
)
from personal_agent.governance.budgets import reserve_request
from personal_agent.governance.tiers import passes
from personal_agent.spec.labels import Labels, metadata_labels, result_metadata, run_labels, run_tier
from personal_agent.spec.run_spec import RunSpec

log = logging.getLogger(__name__)
SUMMARY_INSTRUCTIONS = (
    "Summarise this conversation for the assistant that continues it: the user's goals, facts and decisions, "
    "names, numbers and open questions. Be brief and factual; write no greeting and no commentary."
)
Fitted = tuple[list[ModelMessage] | None, dict[str, Any] | None, int | None]


async def _prior_ids(spec: RunSpec) -> list[int]:
    """The chat messages at the start of the run's history (its branch before it), oldest first."""
    if spec.history != "chat":
        return []
    async with org_transaction(spec.org_id) as conn:
        upto = spec.parent_message_id
        if upto is None and not spec.regenerate:
            upto = await message_store.run_parent(conn, spec.run_id)
        return await message_store.branch_ids(conn, spec.chat_id, upto) if upto is not None else []


def _fits(messages: list[ModelMessage], cut: int, summary_tokens: int, budget: int) -> bool:
    return tokens(messages[cut:]) + summary_tokens + text_tokens(SUMMARY_LEAD) <= budget


async def fit(spec: RunSpec, messages: list[ModelMessage], budget: int) -> Fitted:
    """The messages to send (a stored or new summary of the older turns, then the newer ones), the event to report
    and the summary's message id (None: the older turns were left out unsummarised), or (None, None, None) when even
    the current turn alone does not fit."""
    ids = await _prior_ids(spec)
    ids = ids if len(ids) <= len(messages) else []
    cuts = [c for c in user_turns(messages) if 0 < c <= len(ids)]
    async with org_transaction(spec.org_id) as conn:
        stored = await message_store.latest_summary(conn, spec.chat_id, ids) if cuts else None
    if stored is not None:
        reuse = ids.index(stored.parent_id) + 1
        text = str(stored.message["parts"][0]["content"])
        if reuse in cuts and _fits(messages, reuse, text_tokens(text), budget):
            labels = metadata_labels(stored.message.get("metadata")).join(run_labels(spec, messages[:reuse]))
            return with_summary(messages, reuse, text, labels), None, stored.id
    limit = summary_budget(budget)
    cut = next((c for c in cuts if _fits(messages, c, limit, budget)), None)
    if cut is None:
        return None, None, None
    async with org_transaction(spec.org_id) as conn:
        base = await message_store.latest_summary(conn, spec.chat_id, ids[:cut])
    start = ids.index(base.parent_id) + 1 if base else 0
    earlier = f"Earlier summary: {base.message['parts'][0]['content']}\n" if base else ""
    # A summary of tainted or classified turns is itself tainted or classified; the router that writes it must
    # pass the tier of what it reads.
    labels = run_labels(spec, messages[:cut])
    if base is not None:
        labels = labels.join(metadata_labels(base.message.get("metadata")))
    covered = earlier + as_text(messages[start:cut])
    tier = max(run_tier(spec, messages), labels.content_tier)
    text, summary_id = await _summarise(spec, covered, limit, ids[cut - 1], labels, tier)
    turns = len([c for c in user_turns(messages) if c < cut])
    event = {"covers_message_id": ids[cut - 1], "summary_message_id": summary_id, "turns": turns}
    return with_summary(messages, cut, text, labels), event, summary_id


async def _summarise(
    spec: RunSpec, conversation: str, limit: int, covers: int, labels: Labels, tier: int
) -> tuple[str, int | None]:
    """The routing model's summary, stored with its usage and labels; without a routing model (or when it fails,
    or when it may not receive data of `tier`), a note that the older turns were left out, not stored."""
    router = spec.router_model
    left_out = "[Older turns of this conversation were left out to fit the model's context.]"
    if router is None or not passes(tier, router.tier):
        return left_out, None
    from personal_agent.governance.model_build import build_one

    room = max(1000, (router.context_window - limit - 500) * 3)
    prompt = conversation[-room:]
    async with org_transaction(spec.org_id) as conn:
        index = -2 - await message_store.count_run_summaries(conn, spec.run_id)
    await reserve_request(spec, index, [ModelRequest.user_text_prompt(prompt)], (router,))
    try:
        agent: Agent[None, str] = Agent(await build_one(spec.org_id, router, tier), instructions=SUMMARY_INSTRUCTIONS)
        result = await agent.run(prompt, model_settings={"max_tokens": limit})
    except Exception as exc:  # a failed summary leaves the older turns out rather than fail the run
        log.warning("summarising older turns failed: %s", type(exc).__name__)
        return left_out, None
    text = result.output.strip()[: limit * 3] or left_out
    response = next((m for m in reversed(result.all_messages()) if isinstance(m, ModelResponse)), None)
    async with org_transaction(spec.org_id) as conn:
        summary_id = await message_store.insert_summary(
            conn, spec.org_id, spec.chat_id, spec.run_id, covers, text, result_metadata(labels)
        )
        if response is not None:
            await usage.record(conn, spec, index, response)
    return text, summary_id
