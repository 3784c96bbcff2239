"""Online sampling: a share of an agent's production runs (the org's `agent_sampling` rate, snapshotted into the
RunSpec at launch; which runs by the hash of their id, `spec/sampling.py`) is judged by an LLM with the org's rubric.
The run's end sends the outbox's `sample_run` pointer; the deliver function launches the judge as a normal metered
run (trigger `eval`, in a temporary chat of the run's user, carrying the run's chat's labels so the tier gate holds,
under the user's and the org's budgets); the judge's end (`eval_run_ended`) stores its score. Nothing waits in a
process between the two."""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any
from uuid import UUID

from personal_agent.agents import sampling_store
from personal_agent.chats import message_store
from personal_agent.chats import store as chat_store
from personal_agent.db import org_transaction
from personal_agent.errors import AppError
from personal_agent.evals import online_store
from personal_agent.evals.case_runs import Target, answer_text, drive_launched, launch_prompt, outcome_of
from personal_agent.evals.case_scores import JUDGE_INSTRUCTIONS, judge_prompt
from personal_agent.evals.datasets import question_of
from personal_agent.evals.scorers import verdict
from personal_agent.models.answered import answered_model_id, stored_refs
from personal_agent.runs import store as run_rows
from personal_agent.spec.labels import CLEAN

log = logging.getLogger(__name__)
DEFAULT_RUBRIC = "The answer is correct, helpful and answers what was asked."


async def sample(org_id: UUID, message: dict[str, Any]) -> UUID | None:
    """The outbox's `sample_run`: launch the judge of a sampled run (once); the judge's run id, or None."""
    run_id = UUID(str(message["run_id"]))
    async with org_transaction(org_id) as conn:
        run = await run_rows.get_run(conn, run_id)
        agent = (run.spec or {}).get("agent") if run else None
        if run is None or run.user_id is None or not agent:
            return None
        model = answered_model_id(stored_refs(run.spec), run.answered_model) or run.model_name
        if not await online_store.add(conn, org_id, run_id, (agent["slug"], agent.get("version")), model):
            return None  # a repeated pointer: judged already, or being judged
        config = await sampling_store.get(conn, agent["slug"])
        messages = await message_store.run_messages(conn, run_id)
        chat = await chat_store.lock_chat(conn, run.chat_id) if run.chat_id else None
    prompt = judge_prompt(
        question_of(messages), (config.rubric if config else "") or DEFAULT_RUBRIC, None, answer_text(messages)
    )
    router = (run.spec.get("router_model") or {}).get("id")
    target = Target(model=(config.model if config else None) or router, instructions=JUDGE_INSTRUCTIONS, tools=())
    try:
        spec = await launch_prompt(
            org_id,
            run.user_id,
            "Sampled run · judge",
            prompt,
            target,
            temporary=True,
            entered=chat.labels if chat else CLEAN,
        )
    except AppError as exc:  # over budget, no model may read the run's data: no score, and why
        log.info("a sampled run's judge was refused: %s", exc.code, extra={"run_id": str(run_id)})
        async with org_transaction(org_id) as conn:
            await online_store.finish(conn, run_id, "failed", None, Decimal(0))
        return None
    async with org_transaction(org_id) as conn:
        await online_store.judging(conn, run_id, spec.run_id)
    await drive_launched()
    return spec.run_id


async def judged(org_id: UUID, judge_run_id: UUID) -> bool:
    """A judge's run ended: its verdict is the sampled run's score (failed when the judge did not answer)."""
    async with org_transaction(org_id) as conn:
        run_id = await online_store.judged_run(conn, judge_run_id)
        if run_id is None:
            return False
        outcome = await outcome_of(conn, judge_run_id)
        ok = outcome.status == "succeeded"
        await online_store.finish(
            conn, run_id, "scored" if ok else "failed", verdict(outcome.answer) if ok else None, outcome.cost_usd
        )
    return True
