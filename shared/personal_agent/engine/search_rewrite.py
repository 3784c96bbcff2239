"""Query rewriting as a metered model request (`knowledge/query_rewrite.py`, on with `PA_KNOWLEDGE_QUERY_REWRITE`):
before `search_knowledge` runs, the run's cheap router model turns the follow-up query into a standalone one. Like
every model request of a run, the rewrite is first reserved against the org's, the member's and the platform's
budgets (none with room: the query is searched as the model wrote it, and nothing is sent), and its response is on
the usage ledger with its tokens and cost. A router that may not read the conversation (the classification gate)
or a failed rewrite also leaves the query as it was."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart
from pydantic_ai.tools import ToolDefinition

from personal_agent.db import org_transaction
from personal_agent.db.retry import retrying
from personal_agent.engine import usage
from personal_agent.governance import reservation_store
from personal_agent.governance.budgets import BudgetExceeded, reserve_request
from personal_agent.governance.tiers import ClassificationBlocked
from personal_agent.knowledge.query_rewrite import rewrite, rewrite_prompt, user_turns
from personal_agent.spec.labels import run_tier
from personal_agent.spec.run_deps import RunDeps

log = logging.getLogger(__name__)
SEARCH_TOOL = "search_knowledge"
REWRITE_INDEX_BASE = -1_000_000
"""The rewrites' ledger rows: request index -1,000,000 for the run's first tool call, -1,000,001 for its second, ...
(clear of the router's -1 and the summaries' and judge's -2, -3, ...); the same call always gets the same index, so
a retried step records its rewrite once."""


def rewrite_index(messages: list[Any], tool_call_id: str) -> int:
    ids = [p.tool_call_id for m in messages if isinstance(m, ModelResponse) for p in m.tool_calls]
    position = ids.index(tool_call_id) if tool_call_id in ids else len(ids)
    return REWRITE_INDEX_BASE - position


async def standalone(ctx: RunContext[RunDeps], call: ToolCallPart, query: str) -> str:
    """The query as the router rewrote it, reserved and metered; else as it was."""
    spec = ctx.deps.spec
    history = user_turns(ctx.messages)
    if not ctx.deps.settings.knowledge_query_rewrite or spec.router_model is None or not history:
        return query
    from personal_agent.governance.model_build import build_one

    try:
        model = await build_one(spec.org_id, spec.router_model, run_tier(spec, ctx.messages))
    except ClassificationBlocked:
        return query
    index = rewrite_index(list(ctx.messages), call.tool_call_id)
    try:
        prompt = [ModelRequest.user_text_prompt(rewrite_prompt(history, query))]
        await reserve_request(spec, index, prompt, (spec.router_model,))
    except BudgetExceeded:
        log.info("a query rewrite was skipped: the budget has no room for it")
        return query
    rewritten, response = await rewrite(model, history, query)

    async def ledger() -> None:
        async with org_transaction(spec.org_id) as conn:
            if response is not None:
                await usage.record(conn, spec, index, response)
            else:  # nothing answered: nothing to bill, and the hold goes
                await reservation_store.settle(conn, spec.run_id, index)

    await retrying(ledger, what="a usage record")  # idempotent: UNIQUE(run_id, request_index)
    return rewritten


@dataclass
class QueryRewrite(AbstractCapability[RunDeps]):
    """Rewrites `search_knowledge`'s query once the call is reviewed and about to run (see the module)."""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def before_tool_execute(
        self, ctx: RunContext[RunDeps], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any
    ) -> Any:
        if call.tool_name == SEARCH_TOOL and isinstance(args, dict) and isinstance(args.get("query"), str):
            return {**args, "query": await standalone(ctx, call, args["query"])}
        return args
