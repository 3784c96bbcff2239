"""A person's files erased with them (issue 38): their attachments and the knowledge documents they own (personal
and chat collections; the org's and named collections' documents belong to the org and stay). Objects first, every
version of each, then the rows (a document's chunks go with it), in bounded batches; run before the chats are
erased, whose deletion would otherwise drop the attachment rows and leave their objects behind. Their own data
exports go too (`erase_exports`)."""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID

from personal_agent.attachments import store as attachment_store
from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.knowledge import objects
from personal_agent.knowledge import store as document_store
from personal_agent.knowledge.transaction import worker_transaction
from personal_agent.lifecycle import data_export_store
from personal_agent.lifecycle.object_batches import BATCH, delete_with_objects

MAX_BATCHES = 500


async def _delete_objects(rows: list[dict[str, Any]], gone: set[str]) -> None:
    """Every version of each row's object, once (a chat's document attachment and its document share one)."""
    for key in {row["object_key"] for row in rows} - gone:
        await asyncio.to_thread(objects.delete_every_version, key)
        gone.add(key)


async def erase_attachments(org_id: UUID, user_id: UUID, gone: set[str]) -> None:
    async def delete_own(conn: Conn, ids: list[Any]) -> int:
        await attachment_store.as_user(conn, user_id)
        return await attachment_store.delete_ids(conn, ids)

    due = lambda conn: attachment_store.export_page(conn, user_id, None, BATCH)  # noqa: E731
    await delete_with_objects(org_id, org_transaction, due, delete_own, gone, MAX_BATCHES)


async def erase_documents(org_id: UUID, user_id: UUID, gone: set[str]) -> None:
    due = lambda conn: document_store.owned_by(conn, user_id, BATCH)  # noqa: E731
    await delete_with_objects(org_id, worker_transaction, due, document_store.delete_ids, gone, MAX_BATCHES)


async def erase_files(org_id: UUID, user_id: UUID) -> int:
    """Every attachment and owned document of the person, objects and rows; how many files (objects) went."""
    gone: set[str] = set()
    await erase_attachments(org_id, user_id, gone)
    await erase_documents(org_id, user_id, gone)
    return len(gone)


async def erase_exports(org_id: UUID, user_id: UUID) -> int:
    """The person's own data exports (each ZIP holds their content until it expires): every version of each object,
    then the rows; how many. An org export they made as an admin holds the org's data and stays until it expires."""
    deleted = 0
    for _ in range(MAX_BATCHES):
        async with org_transaction(org_id) as conn:
            exports = await data_export_store.of_user(conn, user_id, "user", BATCH)
        await _delete_objects([{"object_key": e.object_key} for e in exports if e.object_key], set())
        async with org_transaction(org_id) as conn:
            deleted += await data_export_store.delete(conn, [e.id for e in exports])
        if len(exports) < BATCH:
            break
    return deleted
