"""Run views and actions for the API (ownership checks live here, not in the routers)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.chats import message_store
from personal_agent.chats import store as chat_store
from personal_agent.db import org_transaction
from personal_agent.errors import NotFound
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle import drivers
from personal_agent.models.answered import answered_model_id, stored_refs
from personal_agent.runs import store
from personal_agent.sandbox import usage_store as sandbox_usage
from personal_agent.spec.run_spec import OUTPUT_TOOL


async def ensure_own_chat(principal: Principal, chat_id: UUID) -> None:
    async with org_transaction(principal.org_id) as conn:
        if await chat_store.get_owned(conn, chat_id, principal.user_id) is None:
            raise NotFound("chat not found", code="chat_not_found")


def _acts_on(principal: Principal, row: store.RunRow) -> bool:
    return row.user_id == principal.user_id or principal.is_org_admin


async def visible_run(principal: Principal, run_id: UUID) -> store.RunRow:
    """The run if the caller may act on it (cancel it, rate it, trace it): its own runs, or any run of the org for
    org admins; else 404."""
    async with org_transaction(principal.org_id) as conn:
        row = await store.get_run(conn, run_id)
    if row is None or not _acts_on(principal, row):
        raise NotFound("run not found", code="run_not_found")
    return row


async def readable_run(principal: Principal, run_id: UUID) -> tuple[store.RunRow, bool]:
    """The run if the caller may read it (its status, its events): as `visible_run`, or a run in a chat they read,
    such as a chat of a project they are a member of (any role; never a restricted one); else 404. With whether
    only that membership lets them read it (then it is checked again while they stream it)."""
    async with org_transaction(principal.org_id) as conn:
        row = await store.get_run(conn, run_id)
        if row is not None and _acts_on(principal, row):
            return row, False
        chat = row.chat_id if row is not None else None
        readable = chat is not None and await chat_store.get_visible(conn, chat, principal.user_id) is not None
    if row is None or not readable:
        raise NotFound("run not found", code="run_not_found")
    return row, True


async def list_runs(
    principal: Principal, *, trigger_source: str | None, status: str | None, before: datetime | None, limit: int
) -> dict[str, Any]:
    """A page of the caller's runs, newest first."""
    async with org_transaction(principal.org_id) as conn:
        rows = await store.list_runs(
            conn, principal.user_id, trigger_source=trigger_source, status=status, before=before, limit=limit
        )
    items = [
        {
            **{k: getattr(row, k) for k in ("id", "chat_id", "status", "mode", "trigger_source", "created_at")},
            "finished_at": row.finished_at,
            "model": row.model_name,
            "agent": {k: row.agent[k] for k in ("id", "slug", "version")} if row.agent else None,
            "cost_usd": float(row.cost_usd),
        }
        for row in rows
    ]
    return {"items": items, "next_before": rows[-1].created_at if len(rows) == limit else None}


async def run_view(principal: Principal, run_id: UUID) -> dict[str, Any]:
    """The run as `GET /runs/{id}` shows it, to whoever may read it (`readable_run`)."""
    row, _ = await readable_run(principal, run_id)
    async with org_transaction(principal.org_id) as conn:
        children = await store.children(conn, run_id)
        cost = await store.tree_cost(conn, run_id)
        sandbox_seconds = await sandbox_usage.run_seconds(conn, run_id)
        structured = await message_store.run_messages(conn, run_id) if _wants_output(row) else None
    return {
        "id": str(row.id),
        "chat_id": str(row.chat_id) if row.chat_id else None,
        "status": row.status,
        "mode": row.mode,
        "model": row.model_name,
        "model_chain": row.model_chain,
        "answered_model": answered_model_id(stored_refs(row.spec), row.answered_model),
        "routing": row.routing,
        "trigger_source": row.trigger_source,
        "parent_run_id": str(row.parent_run_id) if row.parent_run_id else None,
        "error": row.error,
        "gated_tools": (row.spec or {}).get("gated_tools", []),
        "tools": _tools_view(row.spec or {}),
        "agent": _agent_view(row.spec or {}),
        "output": structured_output(structured) if structured else None,
        "created_at": row.created_at.isoformat(),
        "started_at": row.started_at.isoformat() if row.started_at else None,
        "finished_at": row.finished_at.isoformat() if row.finished_at else None,
        "events_url": f"/api/v1/runs/{row.id}/events",
        "cost_usd": float(cost),
        "sandbox_seconds": sandbox_seconds,
        "children": [_child_view(child) for child in children],
    }


def _wants_output(row: store.RunRow) -> bool:
    spec = row.spec or {}
    agent = spec.get("agent") or {}
    return row.status == "succeeded" and (spec.get("output_schema") or agent.get("output_schema")) is not None


def structured_output(messages: list[Any]) -> Any:
    """A structured answer (an agent with an `output_schema`): the arguments of the run's last `final_result`
    call, as the engine validated them."""
    for message in reversed(messages):
        for part in reversed(message.get("parts", []) if isinstance(message, dict) else []):
            if part.get("part_kind") == "tool-call" and part.get("tool_name") == OUTPUT_TOOL:
                args = part.get("args")
                return json.loads(args) if isinstance(args, str) else args
    return None


def _agent_view(spec: dict[str, Any]) -> dict[str, Any] | None:
    """Which agent, at which version, the run launched with (None: a run from before agents)."""
    agent = spec.get("agent")
    return {"id": agent["id"], "slug": agent["slug"], "version": agent["version"]} if agent else None


def _tools_view(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The snapshot's tools with their source (server name, tier) and whether their results are untrusted."""
    servers = {str(server["id"]): server["name"] for server in spec.get("mcp_servers", [])}
    return [
        {
            "name": tool["name"],
            "server": servers.get(str(tool.get("server_id"))) if tool.get("server_id") else None,
            "trust_tier": tool.get("trust_tier", 2),
            "acts": tool.get("acts", False),
            "untrusted": tool.get("untrusted", False),
        }
        for tool in spec.get("tools", [])
    ]


def _child_view(row: store.ChildRun) -> dict[str, Any]:
    delegation = row.delegation or {}
    return {
        "id": str(row.id),
        "status": row.status,
        "mode": row.mode,
        "task": delegation.get("task", ""),
        "preset": delegation.get("preset"),
        "error": row.error,
        "cost_usd": float(row.cost_usd),
        "created_at": row.created_at.isoformat(),
        "finished_at": row.finished_at.isoformat() if row.finished_at else None,
        "events_url": f"/api/v1/runs/{row.id}/events",
    }


async def cancel(principal: Principal, run_id: UUID) -> dict[str, Any]:
    """Set the cancel flag (the engine stops between stream chunks) and stop a durable execution."""
    return await stop_run(principal.org_id, await visible_run(principal, run_id))


async def stop_run(org_id: UUID, row: store.RunRow) -> dict[str, Any]:
    """Stop a run (the caller may): its engine at its next safe point, a waiting one here, its sub-agents too."""
    run_id = row.id
    if row.status in store.TERMINAL:
        return {"run_id": str(run_id), "status": row.status, "cancelled": False}
    async with org_transaction(org_id) as conn:
        await store.request_cancel(conn, run_id)
    await drivers.stop(org_id, run_id, row.mode, row.execution_arn)
    status = row.status
    if status == "running":
        # It may have begun waiting for a person since it was read: its engine, past its last flag check, no
        # longer ends it (it checks once more after the wait is stored: `engine.cancellation.stopped_while_waiting`).
        async with org_transaction(org_id) as conn:
            now = await store.get_run(conn, run_id)
        status = now.status if now is not None else status
    idle = status in ("waiting", "queued")  # no engine advances it: it ends with the cancelled outcome
    await drivers.finish_cancel(org_id, run_id, idle=idle, sub_agent=row.parent_run_id is not None)
    return {"run_id": str(run_id), "status": "cancelling", "cancelled": True}
