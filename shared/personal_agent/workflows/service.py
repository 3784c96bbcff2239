"""Workflow operations for the API. A workflow belongs to its owner: the owner and org admins see it (and an admin
may delete it); only the owner changes it, rotates its credentials or starts it, because its runs act as the owner
(an admin who is not the owner gets 404, as anyone else does). Secrets are returned once, when made."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from personal_agent.agents import service as agent_service
from personal_agent.chats import store as chat_store
from personal_agent.db import org_transaction
from personal_agent.db.keyset import decode_uuid_cursor, encode_cursor
from personal_agent.db.pool import Conn
from personal_agent.errors import InvalidInput, NotFound
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle.launch_snapshot import snapshot_tools
from personal_agent.workflows import delivery_store, ownership, schedule_store, schedules, store
from personal_agent.workflows.credentials import (
    HINT_CHARS,
    hash_token,
    new_bearer_token,
    new_signing_secret,
    seal,
)
from personal_agent.workflows.prompts import DEFAULT_TEMPLATE, validate_template
from personal_agent.workflows.schedule_expressions import parse_schedule

VIEW_FIELDS = (
    "id",
    "name",
    "owner_id",
    "chat_id",
    "instructions",
    "prompt_template",
    "model",
    "tools",
    "approval_policy",
    "approval_timeout_seconds",
    "rate_limit_per_minute",
    "recall_memories",
    "agent",
    "created_at",
    "updated_at",
)
SIMPLE_FIELDS = (
    "name",
    "instructions",
    "model",
    "approval_policy",
    "approval_timeout_seconds",
    "rate_limit_per_minute",
    "webhook_enabled",
    "recall_memories",
    "agent",
)


def _schedule(value: dict[str, Any]) -> schedules.ScheduleSpec:
    spec = schedules.ScheduleSpec(
        value["expression"].strip(), value.get("timezone") or "UTC", value.get("enabled", True)
    )
    parse_schedule(spec.expression, spec.timezone).next_after(datetime.now(UTC))  # refuses one that never fires
    return spec


def _tools(value: list[str] | None) -> list[str] | None:
    if value is not None:
        snapshot_tools(tuple(value))  # 422 `unknown_tool`
    return value


async def _check_agent(conn: Conn, principal: Principal, slug: str | None) -> None:
    """The agent a workflow names must be one its owner sees (404 `agent_not_found`)."""
    if slug is not None:
        await agent_service.for_launch(conn, principal.org_id, principal.user_id, slug=slug)


async def _visible(conn: Conn, principal: Principal, workflow_id: UUID, *, for_update: bool = False) -> store.Workflow:
    """The workflow for reading (its owner or an org admin), locked with `for_update`; 404 otherwise."""
    row = await store.get_row(conn, workflow_id, for_update=for_update)
    if row is None or not ownership.may_read(principal, row):
        raise ownership.not_found()
    return row


async def _owned(conn: Conn, principal: Principal, workflow_id: UUID) -> store.Workflow:
    """The caller's own workflow, locked for a change; 404 for anyone else's (an org admin's included)."""
    return await ownership.owned_row(conn, principal, workflow_id, for_update=True)


async def _owner_chat(conn: Conn, owner_id: UUID, chat_id: UUID) -> UUID:
    if await chat_store.get_owned(conn, chat_id, owner_id) is None:
        raise NotFound("chat not found", code="chat_not_found")
    return chat_id


async def _view(conn: Conn, row: store.Workflow) -> dict[str, Any]:
    hints = await store.credential_hints(conn, row.id)
    schedule = await schedule_store.get(conn, row.id)
    view = {k: getattr(row, k) for k in VIEW_FIELDS}
    view["tools"] = list(row.tools) if row.tools is not None else None
    view["webhook"] = {
        "url": f"/api/v1/hooks/{row.id}",
        "enabled": row.webhook_enabled,
        "signing_secret_hint": hints.get("signing_secret"),
        "bearer_token_hint": hints.get("bearer_token"),
    }
    view["schedule"] = schedule
    return view


async def create_workflow(principal: Principal, fields: dict[str, Any]) -> dict[str, Any]:
    """Store a workflow with a fresh signing secret (and a bearer token if asked), its chat, and its schedule."""
    template = validate_template(fields.get("prompt_template") or DEFAULT_TEMPLATE)
    tools = _tools(fields.get("tools"))
    schedule = _schedule(fields["schedule"]) if fields.get("schedule") else None
    workflow_id = uuid.uuid4()
    secret = new_signing_secret()
    sealed = await asyncio.to_thread(seal, principal.org_id, workflow_id, secret)
    bearer = new_bearer_token() if fields.get("bearer_token") else None
    async with org_transaction(principal.org_id) as conn:
        await _check_agent(conn, principal, fields.get("agent"))
        if fields.get("chat_id"):
            chat_id = await _owner_chat(conn, principal.user_id, fields["chat_id"])
        else:
            title = f"Workflow: {fields['name']}"[:200]
            chat_id = (await chat_store.insert_chat(conn, principal.org_id, principal.user_id, title)).id
        simple = {k: fields[k] for k in SIMPLE_FIELDS if k in fields}
        columns = ["id", "org_id", "owner_id", "chat_id", "prompt_template", "tools", *simple]
        values = [workflow_id, principal.org_id, principal.user_id, chat_id, template, tools, *simple.values()]
        await store.insert_workflow(conn, dict(zip(columns, values, strict=True)))
        await store.add_signing_secret(conn, principal.org_id, workflow_id, sealed, secret[:HINT_CHARS])
        if bearer:
            await store.add_bearer_token(conn, principal.org_id, workflow_id, hash_token(bearer), bearer[:HINT_CHARS])
        if schedule:
            await schedules.save_schedule(conn, principal.org_id, workflow_id, schedule)
        row = await store.get_row(conn, workflow_id)
        assert row is not None
        view = await _view(conn, row)
    return {**view, "signing_secret": secret, "bearer_token": bearer}


async def list_workflows(principal: Principal) -> list[dict[str, Any]]:
    owner = None if principal.is_org_admin else principal.user_id
    async with org_transaction(principal.org_id) as conn:
        return [await _view(conn, row) for row in await store.list_rows(conn, owner, 500)]


async def get_workflow(principal: Principal, workflow_id: UUID) -> dict[str, Any]:
    async with org_transaction(principal.org_id) as conn:
        return await _view(conn, await _visible(conn, principal, workflow_id))


async def update_workflow(principal: Principal, workflow_id: UUID, fields: dict[str, Any]) -> dict[str, Any]:
    """Change the given fields; `schedule: null` removes the schedule (here and in EventBridge Scheduler)."""
    for key in (
        "name",
        "approval_policy",
        "approval_timeout_seconds",
        "rate_limit_per_minute",
        "webhook_enabled",
        "recall_memories",
    ):
        if key in fields and fields[key] is None:
            raise InvalidInput(f"`{key}` cannot be null", code="field_required", field=key)
    sets = {k: fields[k] for k in SIMPLE_FIELDS if k in fields}
    if "prompt_template" in fields:
        sets["prompt_template"] = validate_template(fields["prompt_template"] or DEFAULT_TEMPLATE)
    if "tools" in fields:
        sets["tools"] = _tools(fields["tools"])
    schedule = _schedule(fields["schedule"]) if fields.get("schedule") else None
    async with org_transaction(principal.org_id) as conn:
        row = await _owned(conn, principal, workflow_id)
        if fields.get("agent"):
            await _check_agent(conn, principal, fields["agent"])
        if "chat_id" in fields:
            sets["chat_id"] = await _owner_chat(conn, row.owner_id, fields["chat_id"]) if fields["chat_id"] else None
        if sets:
            await store.update_workflow(conn, workflow_id, sets)
        if schedule is not None:
            await schedules.save_schedule(conn, principal.org_id, workflow_id, schedule)
        elif "schedule" in fields and await schedule_store.get(conn, workflow_id):
            await schedules.remove_schedule(conn, workflow_id)
        updated = await store.get_row(conn, workflow_id)
        assert updated is not None
        return await _view(conn, updated)


async def delete_workflow(principal: Principal, workflow_id: UUID) -> None:
    """Delete the workflow and its schedule; its chat and past runs stay."""
    async with org_transaction(principal.org_id) as conn:
        await _visible(conn, principal, workflow_id, for_update=True)
        had_schedule = await schedule_store.get(conn, workflow_id) is not None
        await store.delete_workflow(conn, workflow_id)
        if had_schedule:
            await asyncio.to_thread(schedules.delete_aws_schedule, workflow_id)


async def rotate_signing_secret(principal: Principal, workflow_id: UUID, grace_seconds: int) -> dict[str, Any]:
    """A new signing secret (returned once); the old one keeps working for `grace_seconds`."""
    secret = new_signing_secret()
    sealed = await asyncio.to_thread(seal, principal.org_id, workflow_id, secret)
    async with org_transaction(principal.org_id) as conn:
        await _owned(conn, principal, workflow_id)
        await store.retire_credentials(conn, workflow_id, "signing_secret", grace_seconds)
        await store.add_signing_secret(conn, principal.org_id, workflow_id, sealed, secret[:HINT_CHARS])
    return {"signing_secret": secret, "previous_valid_until": _until(grace_seconds)}


async def issue_bearer_token(principal: Principal, workflow_id: UUID, grace_seconds: int) -> dict[str, Any]:
    """A new bearer token (returned once); a previous one keeps working for `grace_seconds`."""
    token = new_bearer_token()
    async with org_transaction(principal.org_id) as conn:
        await _owned(conn, principal, workflow_id)
        await store.retire_credentials(conn, workflow_id, "bearer_token", grace_seconds)
        await store.add_bearer_token(conn, principal.org_id, workflow_id, hash_token(token), token[:HINT_CHARS])
    return {"bearer_token": token, "previous_valid_until": _until(grace_seconds)}


async def revoke_bearer_token(principal: Principal, workflow_id: UUID) -> None:
    async with org_transaction(principal.org_id) as conn:
        await _owned(conn, principal, workflow_id)
        await store.retire_credentials(conn, workflow_id, "bearer_token", 0)


def _until(grace_seconds: int) -> datetime | None:
    return datetime.now(UTC) + timedelta(seconds=grace_seconds) if grace_seconds > 0 else None


def _cursor(row: delivery_store.HistoryRow) -> str:
    return encode_cursor(row.received_at, row.delivery_id)


async def run_history(principal: Principal, workflow_id: UUID, limit: int, cursor: str | None) -> dict[str, Any]:
    """The workflow's deliveries, newest first, each with the run it started (or why it did not)."""
    before = decode_uuid_cursor(cursor) if cursor else None
    async with org_transaction(principal.org_id) as conn:
        await _visible(conn, principal, workflow_id)
        rows = await delivery_store.history(conn, workflow_id, before, limit + 1)
    items = [
        {
            "delivery_id": row.delivery_id,
            "trigger": row.source,
            "key": row.dedupe_key,
            "received_at": row.received_at,
            "run_id": row.run_id,
            "status": row.run_status or row.delivery_status,
            "mode": row.mode,
            "error": row.run_error or row.delivery_error,
            "started_at": row.started_at,
            "finished_at": row.finished_at,
            "status_url": f"/api/v1/runs/{row.run_id}" if row.run_id else None,
        }
        for row in rows[:limit]
    ]
    return {"items": items, "next_cursor": _cursor(rows[limit - 1]) if len(rows) > limit else None}
