"""Approval rows and their audit trail: the only SQL on `approvals` and `approval_audit`. Every call runs inside
an org transaction (RLS). A run's approvals are keyed per wait (`checkpoint_seq`) and tool call id, so a model
that reuses ids across rounds gets one approval per round. An `ask_user` question is a row of the same wait
(`kind = 'question'`: its form in `args`, the person's `answer`), so it waits, times out and resumes the same way.

Over 300 lines because the table holds both kinds of waits (approvals and questions) and its SQL lives here only."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn, jsonb
from personal_agent.spec.run_spec import RunSpec

PUBLIC = (
    "id, run_id, chat_id, tool_call_id, tool_name, args, status, reason, edited_args, decided_by, decided_at,"
    " expires_at, created_at, kind, answer, quorum, approvers"
)
EXPIRED_REASON = "no decision before the approval timed out"
RUN_ENDED_REASON = "the run ended before a decision"
DEFAULT_TAKEN_REASON = "no answer before the question timed out: its default was taken"


@dataclass(frozen=True)
class ApprovalRow:
    """An approval as its owner and org admins see it (`PUBLIC`)."""

    id: UUID
    run_id: UUID
    chat_id: UUID | None
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    status: str
    reason: str | None
    edited_args: dict[str, Any] | None
    decided_by: UUID | None
    decided_at: datetime | None
    expires_at: datetime
    created_at: datetime
    kind: str
    """`approval` (a tool call waiting for a decision) or `question` (an `ask_user` call waiting for an answer)."""
    answer: Any
    """A question's answer (None until answered)."""
    quorum: int
    """How many people must approve (2: a `quorum: 2` tool rule asked; neither may be the requester)."""
    approvers: list[UUID]
    """Who approved so far, in order (only while a quorum of two gathers; a decision is in `decided_by`)."""


@dataclass(frozen=True)
class LockedApproval(ApprovalRow):
    """The whole row, locked for a decision: who owns it and which wait of the run it belongs to."""

    org_id: UUID
    owner_id: UUID | None
    checkpoint_seq: int
    task_token: str | None


@dataclass(frozen=True)
class PendingApproval:
    """The row a wait stored for one deferred tool call (`inserted`: this call stored it, not a retried step)."""

    id: UUID
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    expires_at: datetime
    inserted: bool


@dataclass(frozen=True)
class ApprovalDecision:
    """One approval of a wait and its decision so far."""

    tool_call_id: str
    status: str
    reason: str | None
    edited_args: dict[str, Any] | None
    kind: str = "approval"
    answer: Any = None
    id: UUID | None = None


@dataclass(frozen=True)
class AuditEntry:
    """One line of the approval audit trail, with its approval's tool, run, chat, owner and status; a line a tool
    rule or the judge wrote without an approval (a deny, a log-only match) names its run, call and rule instead."""

    id: int
    approval_id: UUID | None
    actor_id: UUID | None
    action: str
    detail: dict[str, Any]
    at: datetime
    tool_name: str
    run_id: UUID
    chat_id: UUID | None
    owner_id: UUID | None
    status: str | None
    tool_call_id: str | None = None
    rule_id: UUID | None = None


@dataclass(frozen=True)
class WaitingApproval:
    """A pending approval as a notification names it."""

    id: UUID
    tool_name: str
    chat_id: UUID | None
    run_id: UUID


async def audit(
    conn: Conn, org_id: UUID, approval_id: UUID, actor: UUID | None, action: str, detail: dict[str, Any]
) -> None:
    await conn.execute(
        "INSERT INTO approval_audit (org_id, approval_id, actor_id, action, detail) VALUES (%s, %s, %s, %s, %s)",
        [org_id, approval_id, actor, action, jsonb(detail)],
    )


async def add_pending(
    conn: Conn,
    spec: RunSpec,
    seq: int,
    tool_call_id: str,
    tool_name: str,
    args: dict[str, Any],
    expires_at: datetime,
    kind: str = "approval",
) -> PendingApproval:
    """One pending approval (or question) of the wait at checkpoint `seq`; a retried step gets its own row back
    (audited once)."""
    cur = await conn.execute(
        "INSERT INTO approvals (org_id, run_id, chat_id, owner_id, checkpoint_seq, tool_call_id, tool_name,"
        " args, expires_at, kind) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (run_id, checkpoint_seq, tool_call_id) DO UPDATE SET tool_name = approvals.tool_name"
        " RETURNING id, tool_call_id, tool_name, args, expires_at, (xmax = 0) AS inserted",
        [
            spec.org_id,
            spec.run_id,
            spec.chat_id,
            spec.user_id,
            seq,
            tool_call_id,
            tool_name,
            jsonb(args),
            expires_at,
            kind,
        ],
    )
    row = await cur.fetchone()
    assert row is not None
    pending = PendingApproval(**row)
    if pending.inserted:
        action = "asked" if kind == "question" else "requested"
        await audit(conn, spec.org_id, pending.id, None, action, {"tool": tool_name})
    return pending


async def decisions_for(conn: Conn, run_id: UUID, seq: int) -> list[ApprovalDecision]:
    """The approvals (and questions) of one wait, with their decisions (and answers) so far."""
    cur = await conn.execute(
        "SELECT tool_call_id, status, reason, edited_args, kind, answer, id FROM approvals"
        " WHERE run_id = %s AND checkpoint_seq = %s",
        [run_id, seq],
    )
    return [ApprovalDecision(**row) for row in await cur.fetchall()]


async def list_rows(conn: Conn, owner_id: UUID | None, status: str | None, kind: str = "approval") -> list[ApprovalRow]:
    """The newest 200 approvals (or questions: `kind`), of one owner (None: everyone's) and in one status (None:
    any)."""
    clauses: list[str] = ["kind = %s"]
    params: list[Any] = [kind]
    if owner_id is not None:
        clauses.append("owner_id = %s")
        params.append(owner_id)
    if status:
        clauses.append("status = %s")
        params.append(status)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    cur = await conn.execute(f"SELECT {PUBLIC} FROM approvals {where} ORDER BY created_at DESC LIMIT 200", params)
    return [ApprovalRow(**row) for row in await cur.fetchall()]


async def lock(conn: Conn, approval_id: UUID) -> LockedApproval | None:
    """The whole row, locked until the transaction ends."""
    cur = await conn.execute(
        f"SELECT {PUBLIC}, org_id, owner_id, checkpoint_seq, task_token FROM approvals WHERE id = %s FOR UPDATE",
        [approval_id],
    )
    row = await cur.fetchone()
    return LockedApproval(**row) if row is not None else None


async def expire(conn: Conn, org_id: UUID, approval_id: UUID) -> None:
    await conn.execute(
        "UPDATE approvals SET status = 'expired', reason = %s, decided_at = now() WHERE id = %s",
        [EXPIRED_REASON, approval_id],
    )
    await audit(conn, org_id, approval_id, None, "expired", {})


async def record_decision(
    conn: Conn, approval_id: UUID, status: str, reason: str | None, edited: dict[str, Any] | None, by: UUID
) -> ApprovalRow | None:
    """Decide a pending approval; None when it was no longer pending (another decision won the race)."""
    cur = await conn.execute(
        "UPDATE approvals SET status = %s, reason = %s, edited_args = %s, decided_by = %s, decided_at = now()"
        f" WHERE id = %s AND status = 'pending' RETURNING {PUBLIC}",
        [status, reason, jsonb(edited) if edited is not None else None, by, approval_id],
    )
    row = await cur.fetchone()
    return ApprovalRow(**row) if row is not None else None


async def record_answer(conn: Conn, question_id: UUID, answer: Any, by: UUID) -> ApprovalRow | None:
    """Answer a pending question; None when it was no longer pending (another answer or its timeout won)."""
    cur = await conn.execute(
        "UPDATE approvals SET status = 'answered', answer = %s, decided_by = %s, decided_at = now()"
        f" WHERE id = %s AND kind = 'question' AND status = 'pending' RETURNING {PUBLIC}",
        [jsonb(answer), by, question_id],
    )
    row = await cur.fetchone()
    return ApprovalRow(**row) if row is not None else None


async def take_default_answers(conn: Conn, org_id: UUID, run_id: UUID) -> int:
    """The run's wait timed out: each pending question that has a default answer takes it (audited); how many.
    A question without one expires with the approvals (`resolve_pending`)."""
    cur = await conn.execute(
        "UPDATE approvals SET status = 'answered', answer = args -> 'default', reason = %s, decided_at = now()"
        " WHERE run_id = %s AND kind = 'question' AND status = 'pending' AND args ? 'default' RETURNING id",
        [DEFAULT_TAKEN_REASON, run_id],
    )
    rows = await cur.fetchall()
    for row in rows:
        await audit(conn, org_id, row["id"], None, "default_taken", {})
    return len(rows)


async def resolve_pending(
    conn: Conn, org_id: UUID, run_id: UUID, status: str, reason: str, detail: dict[str, Any]
) -> int:
    """Resolve every pending approval of the run without a person (policy or timeout), audited; how many."""
    cur = await conn.execute(
        "UPDATE approvals SET status = %s, reason = %s, decided_at = now()"
        " WHERE run_id = %s AND status = 'pending' RETURNING id",
        [status, reason, run_id],
    )
    rows = await cur.fetchall()
    for row in rows:
        await audit(conn, org_id, row["id"], None, status, detail)
    return len(rows)


async def expire_for_ended_run(conn: Conn, org_id: UUID, run_id: UUID, run_status: str) -> int:
    """The run ended (finished, failed, cancelled): its approvals still pending can no longer let anything run, so
    they become `expired`, audited; how many."""
    return await resolve_pending(conn, org_id, run_id, "expired", RUN_ENDED_REASON, {"run_status": run_status})


async def attach_task_token(conn: Conn, run_id: UUID, token: str) -> int | None:
    """Give the run's latest wait the token of the durable Task waiting on it; that wait's checkpoint seq."""
    cur = await conn.execute(
        "UPDATE approvals SET task_token = %s WHERE run_id = %s AND checkpoint_seq ="
        " (SELECT max(checkpoint_seq) FROM approvals WHERE run_id = %s) RETURNING checkpoint_seq",
        [token, run_id, run_id],
    )
    rows = await cur.fetchall()
    return int(rows[0]["checkpoint_seq"]) if rows else None


async def wait_state(conn: Conn, run_id: UUID, seq: int) -> tuple[int, str | None]:
    """How many approvals of the wait are still pending, and the waiting Task's token (None: no Task yet)."""
    cur = await conn.execute(
        "SELECT count(*) FILTER (WHERE status = 'pending') AS pending, max(task_token) AS token"
        " FROM approvals WHERE run_id = %s AND checkpoint_seq = %s",
        [run_id, seq],
    )
    row = await cur.fetchone()
    assert row is not None  # an aggregate always returns a row
    return int(row["pending"]), row["token"]


async def clear_task_token(conn: Conn, run_id: UUID, seq: int) -> None:
    """The wait's token was used (or is about to be): nobody sends it again."""
    await conn.execute(
        "UPDATE approvals SET task_token = NULL WHERE run_id = %s AND checkpoint_seq = %s", [run_id, seq]
    )


async def take_task_tokens(conn: Conn, run_id: UUID) -> set[str]:
    """Remove and return the tokens of every Task waiting on the run (a cancel fails them)."""
    cur = await conn.execute(
        "UPDATE approvals a SET task_token = NULL FROM (SELECT id, task_token FROM approvals"
        " WHERE run_id = %s AND task_token IS NOT NULL FOR UPDATE) old WHERE a.id = old.id"
        " RETURNING old.task_token",
        [run_id],
    )
    return {row["task_token"] for row in await cur.fetchall()}


_AUDIT_SELECT = (
    "SELECT t.id, t.approval_id, t.actor_id, t.action, t.detail, t.at,"
    " coalesce(a.tool_name, t.tool_name) AS tool_name, coalesce(a.run_id, t.run_id) AS run_id,"
    " coalesce(a.chat_id, t.chat_id) AS chat_id, a.owner_id, a.status,"
    " coalesce(a.tool_call_id, t.tool_call_id) AS tool_call_id, t.rule_id"
    " FROM approval_audit t LEFT JOIN approvals a ON a.id = t.approval_id"
)


async def audit_page(conn: Conn, before: int | None, limit: int) -> list[AuditEntry]:
    """The org's approval audit trail, newest first (ids below `before`), with each approval's tool and run."""
    keyset = "WHERE t.id < %s" if before is not None else ""
    cur = await conn.execute(
        f"{_AUDIT_SELECT} {keyset} ORDER BY t.id DESC LIMIT %s", [*([before] if before is not None else []), limit]
    )
    return [AuditEntry(**row) for row in await cur.fetchall()]


async def audit_of_run(conn: Conn, run_id: UUID) -> list[AuditEntry]:
    """One run's audit lines, oldest first: its approvals' and those its tool review wrote without one (a rule's or
    the reviewing model's decision), for the run's trace."""
    cur = await conn.execute(f"{_AUDIT_SELECT} WHERE t.run_id = %s ORDER BY t.at, t.id", [run_id])
    return [AuditEntry(**row) for row in await cur.fetchall()]


async def pending_of(conn: Conn, run_id: UUID, approval_ids: list[str]) -> list[WaitingApproval]:
    """The run's approvals among `approval_ids` still waiting for a decision (what a notification names)."""
    cur = await conn.execute(
        "SELECT id, tool_name, chat_id, run_id FROM approvals WHERE run_id = %s AND id = ANY(%s::uuid[])"
        " AND status = 'pending' ORDER BY created_at, id",
        [run_id, approval_ids],
    )
    return [WaitingApproval(**row) for row in await cur.fetchall()]


async def of_runs(conn: Conn, run_ids: list[UUID]) -> list[ApprovalRow]:
    """Every approval of the runs `run_ids`, oldest first (a chat's transcript shows each with its decision)."""
    cur = await conn.execute(
        f"SELECT {PUBLIC} FROM approvals WHERE run_id = ANY(%s::uuid[]) ORDER BY created_at, id", [run_ids]
    )
    return [ApprovalRow(**row) for row in await cur.fetchall()]
