"""Human approval of deferred tool calls: request, list, decide, expire; and resuming the run after."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from uuid import UUID

from ag_ui.core import CustomEvent, Interrupt, RunFinishedEvent, RunFinishedInterruptOutcome

from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn, jsonb
from personal_agent.engine.emitter import RunEmitter
from personal_agent.errors import Conflict, InvalidInput, NotFound
from personal_agent.identity.principal import Principal
from personal_agent.runs.spec import RunSpec

log = logging.getLogger("personal_agent.approvals")
PUBLIC = (
    "id, run_id, chat_id, tool_call_id, tool_name, args, status, reason, edited_args, decided_by, decided_at,"
    " expires_at, created_at"
)


def _args(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw or "{}")
    except ValueError:
        return {"_raw": str(raw)}
    return parsed if isinstance(parsed, dict) else {"_value": parsed}


async def _audit(
    conn: Conn, org_id: UUID, approval_id: UUID, actor: UUID | None, action: str, detail: dict[str, Any]
) -> None:
    await conn.execute(
        "INSERT INTO approval_audit (org_id, approval_id, actor_id, action, detail) VALUES (%s, %s, %s, %s, %s)",
        [org_id, approval_id, actor, action, jsonb(detail)],
    )


async def request_approvals(
    spec: RunSpec, emitter: RunEmitter, requests: Any, seq: int, messages_json: bytes, state: dict[str, Any]
) -> list[str]:
    """Checkpoint the paused run and store one pending approval per deferred call (in one transaction,
    idempotent per round and tool call: a retried step finds its own rows), then announce each."""
    from personal_agent.runs import store

    expires = datetime.now(UTC) + timedelta(seconds=spec.approval_timeout_seconds)
    created: list[dict[str, Any]] = []
    async with org_transaction(spec.org_id) as conn:
        await store.save_checkpoint(conn, spec, seq, "awaiting_approval", messages_json, state)
        for call in requests.approvals:
            cur = await conn.execute(
                "INSERT INTO approvals (org_id, run_id, chat_id, owner_id, checkpoint_seq, tool_call_id, tool_name,"
                " args, expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (run_id, checkpoint_seq, tool_call_id) DO UPDATE SET tool_name = approvals.tool_name"
                " RETURNING id, tool_call_id, tool_name, args, expires_at, (xmax = 0) AS inserted",
                [
                    spec.org_id,
                    spec.run_id,
                    spec.chat_id,
                    spec.user_id,
                    seq,
                    call.tool_call_id,
                    call.tool_name,
                    jsonb(_args(call.args)),
                    expires,
                ],
            )
            row = await cur.fetchone()
            assert row is not None
            if row["inserted"]:
                await _audit(conn, spec.org_id, row["id"], None, "requested", {"tool": call.tool_name})
            created.append(row)
        await conn.execute("UPDATE runs SET status = 'waiting' WHERE id = %s AND status = 'running'", [spec.run_id])
    interrupts = []
    for row in created:
        value = {
            "approval_id": str(row["id"]),
            "run_id": str(spec.run_id),
            "tool": row["tool_name"],
            "tool_call_id": row["tool_call_id"],
            "args": row["args"],
            "expires_at": row["expires_at"].isoformat(),
        }
        await emitter.emit(CustomEvent(name="approval_requested", value=value))
        interrupts.append(
            Interrupt(
                id=str(row["id"]),
                reason="tool_approval",
                tool_call_id=row["tool_call_id"],
                message=f"Approve {row['tool_name']}?",
                expires_at=value["expires_at"],
            )
        )
    await emitter.emit(
        RunFinishedEvent(
            thread_id=str(spec.chat_id),
            run_id=str(spec.run_id),
            outcome=RunFinishedInterruptOutcome(interrupts=interrupts),
        )
    )
    await emitter.announce(
        "approval_requested", {"run_id": str(spec.run_id), "chat_id": str(spec.chat_id), "count": len(created)}
    )
    return [str(row["id"]) for row in created]


async def decisions_for(conn: Conn, run_id: UUID, seq: int) -> list[dict[str, Any]]:
    cur = await conn.execute(
        "SELECT tool_call_id, status, reason, edited_args FROM approvals WHERE run_id = %s AND checkpoint_seq = %s",
        [run_id, seq],
    )
    return await cur.fetchall()


async def list_approvals(principal: Principal, status: str | None) -> list[dict[str, Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if not principal.is_org_admin:
        clauses.append("owner_id = %s")
        params.append(principal.user_id)
    if status:
        clauses.append("status = %s")
        params.append(status)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    async with org_transaction(principal.org_id) as conn:
        cur = await conn.execute(f"SELECT {PUBLIC} FROM approvals {where} ORDER BY created_at DESC LIMIT 200", params)
        return await cur.fetchall()


Decision = Literal["approve", "deny"]


async def decide(
    principal: Principal, approval_id: UUID, decision: Decision, reason: str | None, arguments: dict[str, Any] | None
) -> dict[str, Any]:
    """Record a decision (owner of the chat or an org admin), audit it, and resume the run when none is pending."""
    async with org_transaction(principal.org_id) as conn:
        cur = await conn.execute("SELECT * FROM approvals WHERE id = %s FOR UPDATE", [approval_id])
        row = await cur.fetchone()
        if row is None or (row["owner_id"] != principal.user_id and not principal.is_org_admin):
            raise NotFound("approval not found", code="approval_not_found")
        if row["status"] != "pending":
            raise Conflict(f"this approval was already {row['status']}", code="approval_already_decided")
        expired = row["expires_at"] <= datetime.now(UTC)
        if expired:
            await conn.execute(
                "UPDATE approvals SET status = 'expired', reason = 'no decision before the approval timed out',"
                " decided_at = now() WHERE id = %s",
                [approval_id],
            )
            await _audit(conn, principal.org_id, approval_id, None, "expired", {})
        elif arguments is not None and decision != "approve":
            raise InvalidInput("edited arguments only go with `approve`", code="arguments_without_approval")
    if expired:
        # Nothing else resolves an expired wait of an inline run: the run goes on as if denied.
        await resume_if_decided(principal.org_id, row["run_id"], row["checkpoint_seq"])
        raise Conflict("this approval has expired", code="approval_expired")
    async with org_transaction(principal.org_id) as conn:
        status = "approved" if decision == "approve" else "denied"
        cur = await conn.execute(
            "UPDATE approvals SET status = %s, reason = %s, edited_args = %s, decided_by = %s, decided_at = now()"
            f" WHERE id = %s AND status = 'pending' RETURNING {PUBLIC}",
            [status, reason, jsonb(arguments) if arguments is not None else None, principal.user_id, approval_id],
        )
        updated = await cur.fetchone()
        if updated is not None:
            from personal_agent.observability import record_approval_wait

            record_approval_wait((datetime.now(UTC) - row["created_at"]).total_seconds())
        if updated is None:  # another decision won the race
            raise Conflict("this approval was already decided", code="approval_already_decided")
        await _audit(
            conn,
            principal.org_id,
            approval_id,
            principal.user_id,
            status,
            {"reason": reason, "edited": arguments is not None},
        )
    assert updated is not None
    await resume_if_decided(principal.org_id, row["run_id"], row["checkpoint_seq"])
    return updated


async def _resolve_pending(org_id: UUID, run_id: UUID, status: str, reason: str, detail: dict[str, Any]) -> int:
    """Resolve every pending approval of the run without a person (policy or timeout), audited."""
    async with org_transaction(org_id) as conn:
        cur = await conn.execute(
            "UPDATE approvals SET status = %s, reason = %s, decided_at = now()"
            " WHERE run_id = %s AND status = 'pending' RETURNING id",
            [status, reason, run_id],
        )
        rows = await cur.fetchall()
        for row in rows:
            await _audit(conn, org_id, row["id"], None, status, detail)
        await conn.execute("UPDATE runs SET status = 'running' WHERE id = %s AND status = 'waiting'", [run_id])
    return len(rows)


async def deny_by_policy(org_id: UUID, run_id: UUID) -> int:
    """Deny the run's pending approvals because its workflow's policy is to deny, not to wait."""
    return await _resolve_pending(
        org_id, run_id, "denied", "the workflow denies actions that need approval", {"policy": "deny"}
    )


async def expire_pending(org_id: UUID, run_id: UUID) -> int:
    """Resolve the run's pending approvals after the wait timed out: they count as denied."""
    return await _resolve_pending(org_id, run_id, "expired", "no decision before the approval timed out", {})


async def store_task_token(org_id: UUID, run_id: UUID, token: str) -> None:
    """Remember the waiting task; if every approval was already decided, resume right away."""
    async with org_transaction(org_id) as conn:
        await conn.execute("SELECT 1 FROM runs WHERE id = %s FOR UPDATE", [run_id])
        cur = await conn.execute(
            "UPDATE approvals SET task_token = %s WHERE run_id = %s AND checkpoint_seq ="
            " (SELECT max(checkpoint_seq) FROM approvals WHERE run_id = %s) RETURNING checkpoint_seq",
            [token, run_id, run_id],
        )
        rows = await cur.fetchall()
    if rows:
        await resume_if_decided(org_id, run_id, rows[0]["checkpoint_seq"])


async def resume_if_decided(org_id: UUID, run_id: UUID, seq: int) -> bool:
    """When no approval of this wait is pending, continue the run on its driver (once)."""
    async with org_transaction(org_id) as conn:
        await conn.execute("SELECT 1 FROM runs WHERE id = %s FOR UPDATE", [run_id])
        cur = await conn.execute(
            "SELECT count(*) FILTER (WHERE status = 'pending') AS pending, max(task_token) AS token"
            " FROM approvals WHERE run_id = %s AND checkpoint_seq = %s",
            [run_id, seq],
        )
        counts = await cur.fetchone()
        run_cur = await conn.execute("SELECT mode, status, spec FROM runs WHERE id = %s", [run_id])
        run = await run_cur.fetchone()
        if counts is None or run is None or counts["pending"] or run["status"] != "waiting":
            return False
        if run["mode"] == "durable":
            if not counts["token"]:
                return False  # the waiting task stores its token next and resumes then
            await conn.execute(
                "UPDATE approvals SET task_token = NULL WHERE run_id = %s AND checkpoint_seq = %s", [run_id, seq]
            )
        await conn.execute("UPDATE runs SET status = 'running' WHERE id = %s", [run_id])
    if run["mode"] == "durable":
        await asyncio.to_thread(_send_task_success, counts["token"], run_id, org_id)
    else:
        from personal_agent.runs.drivers import start_run

        await start_run(RunSpec.model_validate(run["spec"]))
    return True


def _send_task_success(token: str, run_id: UUID, org_id: UUID) -> None:
    from personal_agent.durable.executions import sfn_client

    client = sfn_client()
    try:
        client.send_task_success(
            taskToken=token, output=json.dumps({"run_id": str(run_id), "org_id": str(org_id), "status": "continue"})
        )
    except (client.exceptions.TaskTimedOut, client.exceptions.InvalidToken, client.exceptions.TaskDoesNotExist):
        log.warning("the waiting task is gone", extra={"run_id": str(run_id)})
