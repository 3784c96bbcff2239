"""The caller's own memories for the API: list, add, edit, delete. Another person's memory (or another org's)
is a 404, never data."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from personal_agent.db import org_transaction
from personal_agent.errors import NotFound
from personal_agent.identity.principal import Principal
from personal_agent.memories import saving, store


def view(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": str(row["id"]),
        "text": row["text"],
        "source_run_id": str(row["source_run_id"]) if row["source_run_id"] else None,
        "project_id": str(row["project_id"]) if row.get("project_id") else None,
        "created_at": row["created_at"].isoformat(),
        "updated_at": row["updated_at"].isoformat(),
    }


def _missing() -> NotFound:
    return NotFound("memory not found", code="memory_not_found")


async def list_memories(principal: Principal) -> dict[str, Any]:
    async with org_transaction(principal.org_id) as conn:
        await store.as_user(conn, principal.user_id)
        rows = await store.list_own(conn, principal.user_id, saving.MAX_MEMORIES)
    return {"items": [view(r) for r in rows], "limit": saving.MAX_MEMORIES}


async def add(principal: Principal, text: str) -> tuple[dict[str, Any], bool]:
    async with org_transaction(principal.org_id) as conn:
        row, created = await saving.save(conn, principal.org_id, principal.user_id, text)
    return view(row), created


async def edit(principal: Principal, memory_id: UUID, text: str) -> dict[str, Any]:
    cleaned = saving.clean_text(text)
    async with org_transaction(principal.org_id) as conn:
        await store.as_user(conn, principal.user_id)
        row = await store.update_text(conn, memory_id, principal.user_id, cleaned)
    if row is None:
        raise _missing()
    return view(row)


async def delete(principal: Principal, memory_id: UUID) -> None:
    async with org_transaction(principal.org_id) as conn:
        await store.as_user(conn, principal.user_id)
        deleted = await store.delete(conn, memory_id, principal.user_id)
    if not deleted:
        raise _missing()
