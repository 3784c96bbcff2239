"""The SQL of tool reviews on `approvals` and `approval_audit`: what a rule asks of an approval (a quorum of two,
an escalation time), the approvers gathered so far, the escalation itself, and the audit lines a rule or the
judge writes without a person (a deny, a log-only rule's "would have"). Every call runs inside an org
transaction (RLS), except the escalation scan (`due_escalations`, pointers across orgs)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn, jsonb


@dataclass(frozen=True)
class DueEscalation:
    org_id: UUID
    approval_id: UUID


@dataclass(frozen=True)
class Escalated:
    """An approval just escalated: what its admins are told."""

    id: UUID
    run_id: UUID
    chat_id: UUID | None
    tool_name: str
    owner_id: UUID | None


@dataclass(frozen=True)
class PolicyMatchCount:
    """How often one rule matched (or would have, log-only) with one effect over a period."""

    rule_id: UUID
    action: str
    effect: str
    tool_name: str | None
    count: int
    last_at: datetime


async def require(
    conn: Conn, org_id: UUID, approval_id: UUID, quorum: int, escalate_at: datetime | None, why: dict[str, Any]
) -> None:
    """What asked for the approval wants of it: its quorum and escalation time; `why` (the rule or review mode
    that asked, its reason) goes on an audit line of its own, with the rule's id."""
    await conn.execute(
        "UPDATE approvals SET quorum = %s, escalate_at = %s WHERE id = %s AND status = 'pending'",
        [quorum, escalate_at, approval_id],
    )
    if why:
        rule = why.get("rule_id")
        await conn.execute(
            "INSERT INTO approval_audit (org_id, approval_id, action, detail, rule_id)"
            " SELECT %s, %s, 'review_asked', %s, %s WHERE NOT EXISTS (SELECT 1 FROM approval_audit"
            " WHERE approval_id = %s AND action = 'review_asked')",
            [org_id, approval_id, jsonb(why), UUID(rule) if rule else None, approval_id],
        )


async def quorum_of(conn: Conn, approval_id: UUID) -> tuple[int, list[UUID]]:
    """The approval's quorum and who approved it so far (its row locked by the caller)."""
    cur = await conn.execute("SELECT quorum, approvers FROM approvals WHERE id = %s", [approval_id])
    row = await cur.fetchone()
    return (int(row["quorum"]), list(row["approvers"])) if row else (1, [])


async def add_approver(conn: Conn, approval_id: UUID, user_id: UUID) -> list[UUID]:
    """Record one approver of a pending approval that needs more than one; the approvers so far."""
    cur = await conn.execute(
        "UPDATE approvals SET approvers = array_append(approvers, %s) WHERE id = %s AND status = 'pending'"
        " AND NOT (%s = ANY(approvers)) RETURNING approvers",
        [user_id, approval_id, user_id],
    )
    row = await cur.fetchone()
    return list(row["approvers"]) if row else []


async def due_escalations(conn: Conn, limit: int) -> list[DueEscalation]:
    """Pending approvals of every org past their escalation time and not yet escalated (a system transaction)."""
    cur = await conn.execute("SELECT org_id, approval_id FROM pa_due_escalations(%s)", [limit])
    return [DueEscalation(**row) for row in await cur.fetchall()]


async def mark_escalated(conn: Conn, org_id: UUID, approval_id: UUID) -> Escalated | None:
    """Escalate one approval (once: None when it was decided or escalated meanwhile), audited."""
    cur = await conn.execute(
        "UPDATE approvals SET escalated_at = now() WHERE id = %s AND status = 'pending' AND escalated_at IS NULL"
        " RETURNING id, run_id, chat_id, tool_name, owner_id",
        [approval_id],
    )
    row = await cur.fetchone()
    if row is None:
        return None
    await conn.execute(
        "INSERT INTO approval_audit (org_id, approval_id, actor_id, action, detail) VALUES (%s, %s, NULL, %s, %s)",
        [org_id, approval_id, "escalated", jsonb({"to": "org admins"})],
    )
    return Escalated(**row)


async def audit_call(
    conn: Conn,
    org_id: UUID,
    call: dict[str, Any],
    rule_id: UUID | None,
    action: str,
    detail: dict[str, Any],
) -> bool:
    """One audit line for a call no approval row stands for (`call`: run_id, chat_id, tool_name, tool_call_id):
    written once per run, call, rule and action (a retried step does not write it again); whether it was."""
    cur = await conn.execute(
        "INSERT INTO approval_audit (org_id, run_id, chat_id, tool_name, tool_call_id, rule_id, action, detail)"
        " SELECT %s, %s, %s, %s, %s, %s, %s, %s WHERE NOT EXISTS (SELECT 1 FROM approval_audit WHERE run_id = %s"
        " AND tool_call_id = %s AND action = %s AND rule_id IS NOT DISTINCT FROM %s) RETURNING id",
        [
            org_id,
            call["run_id"],
            call["chat_id"],
            call["tool_name"],
            call["tool_call_id"],
            rule_id,
            action,
            jsonb(detail),
            call["run_id"],
            call["tool_call_id"],
            action,
            rule_id,
        ],
    )
    return await cur.fetchone() is not None


async def policy_matches(conn: Conn, since: datetime, until: datetime) -> list[PolicyMatchCount]:
    """Per rule, action and effect: how many calls it matched between `since` and `until`, and the last one."""
    cur = await conn.execute(
        "SELECT rule_id, action, coalesce(detail ->> 'effect', '') AS effect, max(tool_name) AS tool_name,"
        " count(*) AS count, max(at) AS last_at FROM approval_audit"
        " WHERE rule_id IS NOT NULL AND at >= %s AND at < %s GROUP BY rule_id, action, detail ->> 'effect'"
        " ORDER BY count(*) DESC",
        [since, until],
    )
    return [PolicyMatchCount(**row) for row in await cur.fetchall()]
