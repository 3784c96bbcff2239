"""A chat's transcript with everything its live view showed beside the messages (DESIGN: what the user saw is what
is stored): each tool call's approval (decision, who decided, why) and sub-agent (status, error, cost), and how each
run ended. The messages come from `chats.service`; the rest from the runs' approvals and child runs, joined to the
tool call that caused them, so a client renders them in the order they happened, live or after a reload.

A later kind of item hangs off its tool call the same way (a question for the user is a deferred call too)."""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Any
from uuid import UUID

from personal_agent.approvals import store as approval_store
from personal_agent.approvals.store import ApprovalRow
from personal_agent.chats import followup_store, service
from personal_agent.chats.followup_store import FollowUpRow
from personal_agent.db import org_transaction
from personal_agent.identity import user_store
from personal_agent.identity.principal import Principal
from personal_agent.runs import store as run_store
from personal_agent.runs.store import RunEnd, SubagentRun


async def transcript(
    principal: Principal, chat_id: UUID, limit: int, cursor: str | None, leaf: int | None
) -> dict[str, Any]:
    """A page of the chat's transcript (`chats.service.transcript_page`) with its tool calls' approvals and
    sub-agents, and `runs`: how each run of the page ended."""
    page = await service.transcript_page(principal, chat_id, limit, cursor, leaf)
    if cursor is None:  # the newest page: the messages queued behind the chat's run follow it
        async with org_transaction(principal.org_id) as conn:
            page["queued"] = [_queued(row) for row in await followup_store.queued_of(conn, chat_id)]
    run_ids = list(dict.fromkeys(UUID(item["run_id"]) for item in page["items"] if item.get("run_id")))
    if not run_ids:
        return page
    async with org_transaction(principal.org_id) as conn:
        ends = await run_store.run_ends(conn, run_ids)
        children = await run_store.subagents_of(conn, run_ids)
        approvals = await approval_store.of_runs(conn, run_ids + [child.id for child in children])
        deciders = list({a.decided_by for a in approvals if a.decided_by is not None})
        names = await user_store.display_names(conn, deciders) if deciders else {}
    _attach(page["items"], approvals, children, names)
    return {**page, "runs": [_run_end(end) for end in ends]}


def _attach(
    items: list[dict[str, Any]], approvals: list[ApprovalRow], children: list[SubagentRun], names: dict[UUID, str]
) -> None:
    """Give each tool call its approval and its sub-agent (a model that reuses a call id across rounds gets them
    in order), and each sub-agent the approvals of its own tool calls."""
    by_call: dict[tuple[str, str], deque[ApprovalRow]] = defaultdict(deque)
    by_child: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in approvals:
        by_call[(str(row.run_id), row.tool_call_id)].append(row)
        if row.kind == "approval":
            by_child[str(row.run_id)].append(approval_view(row, names))
    started: dict[tuple[str, str], deque[SubagentRun]] = defaultdict(deque)
    for child in children:
        started[(str(child.parent_run_id), child.tool_call_id or "")].append(child)
    for item in items:
        for call in item.get("tool_calls") or []:
            key = (str(item.get("run_id")), str(call["id"]))
            if by_call[key]:
                row = by_call[key].popleft()
                if row.kind == "question":
                    call["question"] = question_view(row)
                else:
                    call["approval"] = approval_view(row, names)
            if started[key]:
                child = started[key].popleft()
                call["subagent"] = _subagent(child, by_child[str(child.id)])


def approval_view(row: ApprovalRow, names: dict[UUID, str]) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "tool": row.tool_name,
        "args": row.args,
        "status": row.status,
        "decided_by": names.get(row.decided_by) if row.decided_by else None,
        "reason": row.reason,
        "decided_at": row.decided_at.isoformat() if row.decided_at else None,
        "expires_at": row.expires_at.isoformat(),
    }


def question_view(row: ApprovalRow) -> dict[str, Any]:
    """An `ask_user` call's question: its form, and the answer the run went on with."""
    form = row.args or {}
    return {
        "id": str(row.id),
        "question": str(form.get("question", "")),
        "choices": form.get("choices"),
        "schema": form.get("schema"),
        "default": form.get("default"),
        "status": row.status,
        "answer": row.answer,
        "answered_at": row.decided_at.isoformat() if row.decided_at else None,
        "expires_at": row.expires_at.isoformat(),
    }


def _queued(row: FollowUpRow) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "run_id": str(row.run_id),
        "message": row.message,
        "created_at": row.created_at.isoformat(),
    }


def _subagent(child: SubagentRun, approvals: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "run_id": str(child.id),
        "task": child.task,
        "preset": child.preset,
        "status": child.status,
        "error": _error(child.error),
        "cost_usd": float(child.cost_usd),
        "events_url": f"/api/v1/runs/{child.id}/events",
        "approvals": approvals,
    }


def _error(error: dict[str, Any] | None) -> dict[str, str] | None:
    if not error:
        return None
    return {"code": str(error.get("code") or "error"), "message": str(error.get("message") or "")}


def _run_end(end: RunEnd) -> dict[str, Any]:
    return {"id": str(end.id), "status": end.status, "error": _error(end.error)}
