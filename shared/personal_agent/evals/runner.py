"""An evaluation run: every case of a dataset as a normal, metered run of one agent version (or model), a bounded
number at a time, under the budget the evaluation was given; each answer scored by the evaluation's scorers.

The cases run in the process that accepted the evaluation (`pa dev`, a long-lived API); a case already scored is
never run again (`eval_results` is keyed by evaluation and case)."""

from __future__ import annotations

import asyncio
import logging
from decimal import Decimal
from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.evals import dataset_store, run_store, scorers
from personal_agent.evals.case_runs import Outcome, Target, run_prompt

log = logging.getLogger(__name__)
PARALLEL = 2
JUDGE_INSTRUCTIONS = (
    "You grade an assistant's answer. Read the question, the criteria and the reference answer when given, then "
    "the answer. Reply with one line `SCORE: n` where n is 0 (wrong) to 10 (fully meets the criteria), then one "
    "short sentence saying why."
)
_TASKS: set[asyncio.Task[None]] = set()


def start(org_id: UUID, user_id: UUID, row: run_store.EvalRunRow) -> None:
    """Run the evaluation in the background of this process."""
    task = asyncio.create_task(execute(org_id, user_id, row))
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)


async def execute(org_id: UUID, user_id: UUID, row: run_store.EvalRunRow) -> None:
    """Run every case not yet scored; the evaluation ends `succeeded`, or `budget_exhausted` when the budget ran out
    before every case ran (the cases done so far are its results), or `failed` on an unexpected error."""
    try:
        async with org_transaction(org_id) as conn:
            await run_store.set_status(conn, row.id, "running")
            dataset = await dataset_store.get_dataset(conn, row.dataset_id)
            cases = await dataset_store.cases(conn, row.dataset_id)
            done = {r.case_id: r.cost_usd for r in await run_store.results(conn, row.id)}
        ledger = _Ledger(row.budget_usd, sum(done.values(), Decimal(0)))
        name = dataset.name if dataset else "dataset"
        gate = asyncio.Semaphore(PARALLEL)
        target = Target(agent=_agent_name(row), model=row.model)

        async def one(case: dataset_store.CaseRow) -> None:
            async with gate:
                if ledger.exhausted():
                    ledger.skipped += 1
                    return
                await _run_case(org_id, user_id, row, case, target, name, ledger)

        await asyncio.gather(*(one(case) for case in cases if case.id not in done))
        status = "budget_exhausted" if ledger.skipped else "succeeded"
        async with org_transaction(org_id) as conn:
            await run_store.set_status(conn, row.id, status)
    except Exception as exc:
        log.exception("an evaluation run failed", extra={"eval_run_id": str(row.id)})
        async with org_transaction(org_id) as conn:
            await run_store.set_status(conn, row.id, "failed", {"code": "eval_failed", "message": type(exc).__name__})


class _Ledger:
    """What the evaluation spent so far against its budget, and how many cases it left out for lack of it."""

    def __init__(self, budget: Decimal, spent: Decimal) -> None:
        self.budget, self.spent, self.skipped = budget, spent, 0

    def exhausted(self) -> bool:
        return self.spent >= self.budget

    def add(self, cost: Decimal) -> None:
        self.spent += cost


def _agent_name(row: run_store.EvalRunRow) -> str | None:
    if row.agent is None:
        return None
    return f"{row.agent}@{row.version}" if row.version else row.agent


async def _run_case(
    org_id: UUID,
    user_id: UUID,
    row: run_store.EvalRunRow,
    case: dataset_store.CaseRow,
    target: Target,
    name: str,
    ledger: _Ledger,
) -> None:
    outcome = await run_prompt(org_id, user_id, f"Eval · {name} #{case.position + 1}", case.input, target)
    ledger.add(outcome.cost_usd)
    scores, judge_cost = await _scores(org_id, user_id, row.scorers, case, outcome)
    ledger.add(judge_cost)
    values = list(scores.values())
    result = run_store.NewResult(
        case_id=case.id,
        run_id=outcome.run_id,
        status=outcome.status if outcome.error is None else f"skipped:{outcome.error}",
        answer=outcome.answer,
        scores=scores,
        score=sum(values) / len(values) if values and outcome.status == "succeeded" else 0.0,
        cost_usd=outcome.cost_usd + judge_cost,
        latency_ms=outcome.latency_ms,
    )
    async with org_transaction(org_id) as conn:
        await run_store.add_result(conn, org_id, row.id, result)


async def _scores(
    org_id: UUID, user_id: UUID, chosen: list[dict[str, Any]], case: dataset_store.CaseRow, outcome: Outcome
) -> tuple[dict[str, float], Decimal]:
    """Each scorer's score of the answer (a scorer with nothing to compare is left out), and what judging cost."""
    scores: dict[str, float] = {}
    cost = Decimal(0)
    if outcome.status != "succeeded":
        return {scorer["kind"]: 0.0 for scorer in chosen}, cost
    for scorer in chosen:
        if scorer["kind"] == "judge":
            value, spent = await _judge(org_id, user_id, scorer, case, outcome)
            scores["judge"], cost = value, cost + spent
            continue
        answered = scorers.Answered(outcome.answer, outcome.tool_calls, outcome.latency_ms, float(outcome.cost_usd))
        found = scorers.score(scorer, answered, case.expected)
        if found is not None:
            scores[scorer["kind"]] = found
    return scores, cost


async def _judge(
    org_id: UUID, user_id: UUID, scorer: dict[str, Any], case: dataset_store.CaseRow, outcome: Outcome
) -> tuple[float, Decimal]:
    """An LLM judge's score: a metered run of the org's routing model (or the scorer's `model`) with a rubric."""
    parts = [f"Question:\n{case.input}"]
    if case.criteria or scorer.get("rubric"):
        parts.append(f"Criteria:\n{case.criteria or scorer['rubric']}")
    if case.expected:
        parts.append(f"Reference answer:\n{case.expected}")
    parts.append(f"Answer:\n{outcome.answer}")
    target = Target(model=scorer.get("model") or outcome.router_model, instructions=JUDGE_INSTRUCTIONS, tools=())
    judged = await run_prompt(org_id, user_id, "Eval · judge", "\n\n".join(parts), target)
    return scorers.verdict(judged.answer), judged.cost_usd
