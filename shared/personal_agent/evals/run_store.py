"""The SQL of `eval_runs` and `eval_results`. Runs inside an org transaction (RLS)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn, jsonb
from personal_agent.evals.dataset_store import decode_input, prompt_of

RUN_COLUMNS = "id, dataset_id, agent, version, model, budget_usd, scorers, status, error, created_at, finished_at"
RESULT_COLUMNS = (
    "r.case_id, c.position, c.input, r.run_id, r.status, r.answer, r.scores, r.notes, r.score, r.cost_usd, r.latency_ms"
)


@dataclass(frozen=True)
class EvalRunRow:
    id: UUID
    dataset_id: UUID
    agent: str | None
    version: int | None
    model: str | None
    budget_usd: Decimal
    scorers: list[dict[str, Any]]
    status: str
    error: dict[str, Any] | None
    created_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True)
class ResultRow:
    case_id: UUID
    position: int
    input: str
    run_id: UUID | None
    status: str
    answer: str
    scores: dict[str, float]
    score: float
    cost_usd: Decimal
    latency_ms: int
    notes: dict[str, str] = field(default_factory=dict)
    """Why a scorer gave what it gave, by scorer (e.g. `{"judge": "judge_refused: ..."}`); empty when nothing."""


@dataclass(frozen=True)
class NewResult:
    case_id: UUID
    run_id: UUID | None
    status: str
    answer: str
    scores: dict[str, float]
    score: float
    cost_usd: Decimal
    latency_ms: int
    notes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class NewEvalRun:
    dataset_id: UUID
    agent: str | None
    version: int | None
    model: str | None
    budget_usd: Decimal
    scorers: list[dict[str, Any]]


async def insert_eval_run(conn: Conn, org_id: UUID, user_id: UUID, run: NewEvalRun) -> EvalRunRow:
    cur = await conn.execute(
        "INSERT INTO eval_runs (org_id, dataset_id, created_by, agent, version, model, budget_usd, scorers)"
        f" VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING {RUN_COLUMNS}",
        [org_id, run.dataset_id, user_id, run.agent, run.version, run.model, run.budget_usd, jsonb(run.scorers)],
    )
    row = await cur.fetchone()
    assert row is not None
    return EvalRunRow(**row)


async def get_run(conn: Conn, eval_run_id: UUID) -> EvalRunRow | None:
    cur = await conn.execute(f"SELECT {RUN_COLUMNS} FROM eval_runs WHERE id = %s", [eval_run_id])
    row = await cur.fetchone()
    return EvalRunRow(**row) if row else None


async def lock_run(conn: Conn, eval_run_id: UUID) -> EvalRunRow | None:
    """The evaluation, locked until the transaction ends: one advance at a time (`evals.progress`)."""
    cur = await conn.execute(f"SELECT {RUN_COLUMNS} FROM eval_runs WHERE id = %s FOR UPDATE", [eval_run_id])
    row = await cur.fetchone()
    return EvalRunRow(**row) if row else None


async def created_by(conn: Conn, eval_run_id: UUID) -> UUID | None:
    cur = await conn.execute("SELECT created_by FROM eval_runs WHERE id = %s", [eval_run_id])
    row = await cur.fetchone()
    return row["created_by"] if row else None


async def spent(conn: Conn, eval_run_id: UUID) -> Decimal:
    """What the cases done so far cost (their runs and judges)."""
    cur = await conn.execute(
        "SELECT coalesce(sum(cost_usd), 0) AS spent FROM eval_results WHERE eval_run_id = %s", [eval_run_id]
    )
    row = await cur.fetchone()
    return Decimal(row["spent"]) if row else Decimal(0)


async def list_runs(conn: Conn, limit: int) -> list[EvalRunRow]:
    cur = await conn.execute(f"SELECT {RUN_COLUMNS} FROM eval_runs ORDER BY created_at DESC LIMIT %s", [limit])
    return [EvalRunRow(**row) for row in await cur.fetchall()]


async def set_status(conn: Conn, eval_run_id: UUID, status: str, error: dict[str, Any] | None = None) -> None:
    ended = status in ("succeeded", "failed", "budget_exhausted")
    await conn.execute(
        "UPDATE eval_runs SET status = %s, error = %s,"
        " finished_at = CASE WHEN %s THEN now() ELSE finished_at END WHERE id = %s",
        [status, jsonb(error) if error else None, ended, eval_run_id],
    )


async def add_result(conn: Conn, org_id: UUID, eval_run_id: UUID, result: NewResult) -> None:
    await conn.execute(
        "INSERT INTO eval_results (eval_run_id, case_id, org_id, run_id, status, answer, scores, notes, score,"
        " cost_usd, latency_ms) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (eval_run_id, case_id) DO NOTHING",
        [
            eval_run_id,
            result.case_id,
            org_id,
            result.run_id,
            result.status,
            result.answer,
            jsonb(result.scores),
            jsonb(result.notes),
            result.score,
            result.cost_usd,
            result.latency_ms,
        ],
    )


async def results(conn: Conn, eval_run_id: UUID) -> list[ResultRow]:
    cur = await conn.execute(
        f"SELECT {RESULT_COLUMNS} FROM eval_results r JOIN eval_cases c ON c.id = r.case_id"
        " WHERE r.eval_run_id = %s ORDER BY c.position",
        [eval_run_id],
    )
    return [_result(row) for row in await cur.fetchall()]


def _result(row: dict[str, Any]) -> ResultRow:
    """A stored result, its case's input as the prompt its run was sent."""
    return ResultRow(**{**row, "input": prompt_of(decode_input(row["input"]))})
