"""The SQL of `eval_case_runs`: where each case of an evaluation run is (pending, running, judging, done) and the
runs it launched, with those runs' statuses. Runs inside an org transaction (RLS), except `unended` (a system
transaction: pointers across orgs)."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from personal_agent.db.pool import Conn
from personal_agent.runs.store import TERMINAL as ENDED


@dataclass(frozen=True)
class CaseState:
    case_id: UUID
    state: str
    run_id: UUID | None
    judge_run_id: UUID | None
    run_status: str | None
    """The case's run's status (None: no run, or it is gone)."""
    judge_status: str | None

    @property
    def run_ended(self) -> bool:
        return self.run_status in ENDED

    @property
    def judge_ended(self) -> bool:
        return self.judge_status in ENDED


async def add_pending(conn: Conn, org_id: UUID, eval_run_id: UUID, case_ids: list[UUID]) -> None:
    for case_id in case_ids:
        await conn.execute(
            "INSERT INTO eval_case_runs (eval_run_id, case_id, org_id) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
            [eval_run_id, case_id, org_id],
        )


async def states(conn: Conn, eval_run_id: UUID) -> list[CaseState]:
    """Every case of the evaluation in the dataset's order, with its runs' statuses."""
    cur = await conn.execute(
        "SELECT s.case_id, s.state, s.run_id, s.judge_run_id, r.status AS run_status, j.status AS judge_status"
        " FROM eval_case_runs s JOIN eval_cases c ON c.id = s.case_id"
        " LEFT JOIN runs r ON r.id = s.run_id LEFT JOIN runs j ON j.id = s.judge_run_id"
        " WHERE s.eval_run_id = %s ORDER BY c.position",
        [eval_run_id],
    )
    return [CaseState(**row) for row in await cur.fetchall()]


async def set_state(
    conn: Conn, eval_run_id: UUID, case_id: UUID, state: str, run_id: UUID | None = None, judge: UUID | None = None
) -> None:
    await conn.execute(
        "UPDATE eval_case_runs SET state = %s, run_id = coalesce(%s, run_id), judge_run_id = coalesce(%s,"
        " judge_run_id), started_at = coalesce(started_at, CASE WHEN %s = 'running' THEN now() END)"
        " WHERE eval_run_id = %s AND case_id = %s",
        [state, run_id, judge, state, eval_run_id, case_id],
    )


async def eval_of_run(conn: Conn, run_id: UUID) -> UUID | None:
    """The evaluation whose case (or case's judge) the run is; None for another run."""
    cur = await conn.execute(
        "SELECT eval_run_id FROM eval_case_runs WHERE run_id = %s OR judge_run_id = %s LIMIT 1", [run_id, run_id]
    )
    row = await cur.fetchone()
    return row["eval_run_id"] if row else None


async def case_runs_of(conn: Conn, dataset_id: UUID, case_id: UUID | None = None) -> dict[UUID, list[UUID]]:
    """The case runs (not the judges) of every evaluation of the dataset (of one case of it, with `case_id`), by the
    person each evaluation ran as."""
    cur = await conn.execute(
        "SELECT e.created_by, s.run_id FROM eval_case_runs s JOIN eval_runs e ON e.id = s.eval_run_id"
        " WHERE e.dataset_id = %s AND (%s::uuid IS NULL OR s.case_id = %s) AND s.run_id IS NOT NULL"
        " AND e.created_by IS NOT NULL",
        [dataset_id, case_id, case_id],
    )
    found: dict[UUID, list[UUID]] = {}
    for row in await cur.fetchall():
        found.setdefault(row["created_by"], []).append(row["run_id"])
    return found


async def unended(conn: Conn, limit: int) -> list[tuple[UUID, UUID]]:
    """(org, evaluation) of every evaluation not ended, across orgs (a system transaction)."""
    cur = await conn.execute("SELECT org_id, eval_run_id FROM pa_unended_evals(%s)", [limit])
    return [(row["org_id"], row["eval_run_id"]) for row in await cur.fetchall()]
