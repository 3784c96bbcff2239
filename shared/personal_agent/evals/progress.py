"""An evaluation run's progress, driven by its runs' ends and nothing held in a process: every case of the dataset is
a normal, metered run launched through the one chokepoint (its own driver makes it durable: the run worker's
retries and recovery, or Step Functions), a bounded number at a time under the evaluation's budget; each case's
answer is scored by its scorers (an LLM judge is one more run). `advance` is the one step: it looks at where the
cases are (`eval_case_runs`), scores the ended ones, launches judges and the next cases, and ends the evaluation
when none is left. It runs when the evaluation is accepted, when one of its runs ends (the outbox's
`eval_run_ended` pointer, handled by the deliver function), and in the dev server's sweep (a restart's messages on
moto are gone), with the evaluation's row locked, so two of them never launch the same case twice."""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any
from uuid import UUID

from personal_agent.chats import store as chat_store
from personal_agent.db import org_transaction, system_transaction
from personal_agent.db.pool import Conn
from personal_agent.errors import AppError
from personal_agent.evals import case_store, dataset_store, online, run_store
from personal_agent.evals.case_runs import Outcome, Target, drive_launched, launch_prompt, outcome_of
from personal_agent.evals.case_scores import JUDGE_INSTRUCTIONS, judge_prompt, pure_scores
from personal_agent.evals.scorers import verdict
from personal_agent.periodic import Periodic
from personal_agent.runs import store as run_rows
from personal_agent.spec.labels import Labels

log = logging.getLogger(__name__)
PARALLEL = 2
ENDED = ("succeeded", "failed", "budget_exhausted")


async def run_ended(org_id: UUID, message: dict[str, Any]) -> bool:
    """The outbox's `eval_run_ended`: move on the evaluation the run belongs to, or score the sampled run it judged;
    False when it is neither."""
    async with org_transaction(org_id) as conn:
        eval_run_id = await case_store.eval_of_run(conn, UUID(str(message["run_id"])))
    if eval_run_id is None:
        return await online.judged(org_id, UUID(str(message["run_id"])))
    await advance(org_id, eval_run_id)
    await drive_launched()
    return True


async def advance(org_id: UUID, eval_run_id: UUID) -> str | None:
    """One step of the evaluation (see the module); its status afterwards (None when it is gone)."""
    try:
        async with org_transaction(org_id) as conn:
            row = await run_store.lock_run(conn, eval_run_id)
            if row is None or row.status in ENDED:
                return row.status if row else None
            return await _step(conn, org_id, row)
    except Exception as exc:
        log.exception("an evaluation run failed", extra={"eval_run_id": str(eval_run_id)})
        async with org_transaction(org_id) as conn:
            await run_store.set_status(
                conn, eval_run_id, "failed", {"code": "eval_failed", "message": type(exc).__name__}
            )
        return "failed"


async def _step(conn: Conn, org_id: UUID, row: run_store.EvalRunRow) -> str:
    user_id = await run_store.created_by(conn, row.id)
    cases = {case.id: case for case in await dataset_store.cases(conn, row.dataset_id)}
    states = await case_store.states(conn, row.id)
    if not states:  # an evaluation started before its cases had states: the ones it scored are done
        await case_store.add_pending(conn, org_id, row.id, list(cases))
        for result in await run_store.results(conn, row.id):
            await case_store.set_state(conn, row.id, result.case_id, "done")
        states = await case_store.states(conn, row.id)
    for state in states:
        case = cases[state.case_id]
        if state.state == "running" and state.run_ended and state.run_id is not None:
            await _case_ended(conn, org_id, user_id, row, case, await outcome_of(conn, state.run_id))
        elif state.state == "judging" and state.judge_ended and state.run_id and state.judge_run_id:
            judged = await outcome_of(conn, state.judge_run_id)
            outcome = await outcome_of(conn, state.run_id)
            await _record(conn, org_id, row, case, outcome, {"judge": verdict(judged.answer)}, judged.cost_usd)
    states = await case_store.states(conn, row.id)
    await _launch_next(conn, org_id, user_id, row, cases, states)
    states = await case_store.states(conn, row.id)
    if any(s.state != "done" for s in states):
        if row.status == "queued":
            await run_store.set_status(conn, row.id, "running")
        return "running"
    done = {r.case_id for r in await run_store.results(conn, row.id)}
    status = "succeeded" if all(s.case_id in done for s in states) else "budget_exhausted"
    await run_store.set_status(conn, row.id, status)
    return status


async def _launch_next(
    conn: Conn,
    org_id: UUID,
    user_id: UUID | None,
    row: run_store.EvalRunRow,
    cases: dict[UUID, dataset_store.CaseRow],
    states: list[case_store.CaseState],
) -> None:
    """Launch pending cases while fewer than PARALLEL are out and the budget lasts; once it is spent, the pending
    cases are left out (done without a result: the evaluation ends `budget_exhausted`). The budget is soft: only the
    done cases count, so the cases out (at most PARALLEL) and their judges may pass it (docs/evals.md gives the
    bound)."""
    out = sum(1 for s in states if s.state in ("running", "judging"))
    for state in (s for s in states if s.state == "pending"):
        if user_id is None or await run_store.spent(conn, row.id) >= row.budget_usd:
            await case_store.set_state(conn, row.id, state.case_id, "done")
            continue
        if out >= PARALLEL:
            break
        case = cases[state.case_id]
        target = Target(agent=_agent_name(row), model=row.model)
        try:
            title = f"Eval · #{case.position + 1}"
            prompt, history = _split(case.input)
            labels = Labels(content_tier=case.content_tier, untrusted=case.untrusted)  # a real run's, if from one
            spec = await launch_prompt(
                org_id, user_id, title, prompt, target, case_id=case.id, history=history, entered=labels
            )
        except AppError as exc:  # refused (over budget, no model for the data): the case is scored 0
            refused = Outcome(None, f"skipped:{exc.code}", "", Decimal(0), 0, error=exc.code)
            await _record(conn, org_id, row, case, refused, {}, Decimal(0))
            continue
        await case_store.set_state(conn, row.id, case.id, "running", run_id=spec.run_id)
        out += 1


async def _case_ended(
    conn: Conn,
    org_id: UUID,
    user_id: UUID | None,
    row: run_store.EvalRunRow,
    case: dataset_store.CaseRow,
    outcome: Outcome,
) -> None:
    """A case's run ended: scored now, or handed to its judge (a run of its own) when a judge scores it."""
    judge = next((s for s in row.scorers if s["kind"] == "judge"), None)
    if judge is None or outcome.status != "succeeded" or user_id is None:
        await _record(conn, org_id, row, case, outcome, {}, Decimal(0))
        return
    assert outcome.run_id is not None
    run = await run_rows.get_run(conn, outcome.run_id)
    locked = await chat_store.lock_chat(conn, run.chat_id) if run and run.chat_id else None
    entered = locked.labels if locked else Labels()  # the judge reads what the case's chat holds
    target = Target(model=judge.get("model") or outcome.router_model, instructions=JUDGE_INSTRUCTIONS, tools=())
    prompt = judge_prompt(
        dataset_store.prompt_of(case.input), case.criteria or judge.get("rubric"), case.expected, outcome.answer
    )
    try:
        spec = await launch_prompt(org_id, user_id, "Eval · judge", prompt, target, temporary=True, entered=entered)
    except AppError as exc:  # the judge could not run (its tier, the org's floor, the budget): 0, and why
        refused = {"judge": f"judge_refused: {exc.code}: {exc.message}"}
        await _record(conn, org_id, row, case, outcome, {"judge": 0.0}, Decimal(0), refused)
        return
    await case_store.set_state(conn, row.id, case.id, "judging", judge=spec.run_id)


async def _record(
    conn: Conn,
    org_id: UUID,
    row: run_store.EvalRunRow,
    case: dataset_store.CaseRow,
    outcome: Outcome,
    judged: dict[str, float],
    judge_cost: Decimal,
    notes: dict[str, str] | None = None,
) -> None:
    scores = {**pure_scores(row.scorers, case, outcome), **judged}
    values = list(scores.values())
    result = run_store.NewResult(
        case_id=case.id,
        run_id=outcome.run_id,
        status=outcome.status,
        answer=outcome.answer,
        scores=scores,
        score=sum(values) / len(values) if values and outcome.status == "succeeded" else 0.0,
        cost_usd=outcome.cost_usd + judge_cost,
        latency_ms=outcome.latency_ms,
        notes=notes or {},
    )
    await run_store.add_result(conn, org_id, row.id, result)
    await case_store.set_state(conn, row.id, case.id, "done")


def _split(value: dataset_store.Input) -> tuple[str, tuple[dict[str, str], ...]]:
    """A case's prompt (its input, or its last user message) and the turns before it."""
    if isinstance(value, str):
        return value, ()
    return dataset_store.prompt_of(value), tuple(value[:-1])


def _agent_name(row: run_store.EvalRunRow) -> str | None:
    if row.agent is None:
        return None
    return f"{row.agent}@{row.version}" if row.version else row.agent


async def advance_unended(limit: int = 50) -> list[UUID]:
    """Advance every evaluation not ended, in every org (a restart's sweep: its runs' ends may have been told to a
    queue that is gone); the ones that moved."""
    async with system_transaction() as conn:
        pointers = await case_store.unended(conn, limit)
    moved = []
    for org_id, eval_run_id in pointers:
        if await advance(org_id, eval_run_id) is not None:
            moved.append(eval_run_id)
    return moved


class EvalSweep(Periodic):
    """The dev server's sweep of evaluations: once at `start()`, then every `interval` seconds until `stop()`."""

    def __init__(self, interval: float) -> None:
        super().__init__("pa-eval-sweep", interval, advance_unended, log)
