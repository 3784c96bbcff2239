"""The files and definitions in a data export (issue 38), beside the chats: a person's attachments
(`attachments/<id>/<name>`, the bytes, and `attachments.json`), knowledge documents (`documents/<id>/<name>`, the
original file, and `documents.json`) and agents (`agents/<slug>.json`, the agent and every version's configuration).
A person's export has the attachments they uploaded, the documents they uploaded (not a chat's: those are its
attachments) and the agents they own; an org admin's has the org's shared documents and agents (a member's
attachments, personal documents and private agents stay private, as the tables' policies keep them). Each file is
copied from the bucket in chunks of `CHUNK` bytes, so memory stays bounded whatever its size; rows are read page
by page."""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import asdict
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.agents import store as agent_store
from personal_agent.attachments import store as attachment_store
from personal_agent.db import org_transaction
from personal_agent.knowledge import objects
from personal_agent.knowledge import store as document_store
from personal_agent.knowledge.transaction import worker_transaction

CHUNK = 1024 * 1024
PAGE = 200
MAX_FILES = 20_000
MAX_AGENTS = 10_000
_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")

_ATTACHMENT = ("id", "chat_id", "kind", "filename", "content_type", "size", "run_id", "document_id", "created_at")
_DOCUMENT = (
    "id",
    "collection",
    "filename",
    "content_type",
    "size",
    "classification",
    "status",
    "pages",
    "chunk_count",
    "trusted",
    "source_id",
    "web",
    "created_by",
    "created_at",
    "updated_at",
)


def _json(value: Any) -> str:
    return json.dumps(value, default=str, indent=2, ensure_ascii=False)


def entry_name(folder: str, item_id: UUID, filename: str) -> str:
    """`folder/<id>/<name>` with a name that cannot climb out of its folder."""
    name = _UNSAFE.sub("_", filename.replace("\\", "/").rsplit("/", 1)[-1]).strip(". ") or "file"
    return f"{folder}/{item_id}/{name}"


def copy_object(archive: zipfile.ZipFile, key: str, name: str) -> bool:
    """Stream the object into the archive as `name`; False when it is gone from the bucket (nothing written)."""
    body = objects.open_object(key)
    if body is None:
        return False
    try:
        with archive.open(name, "w", force_zip64=True) as entry:
            for chunk in body.iter_chunks(CHUNK):
                entry.write(chunk)
    finally:
        body.close()
    return True


async def write_attachments(archive: zipfile.ZipFile, org_id: UUID, user_id: UUID) -> int:
    """The user's attachments with their bytes; how many files were written."""
    listed: list[dict[str, Any]] = []
    written = 0
    after: tuple[datetime, UUID] | None = None
    while len(listed) < MAX_FILES:
        async with org_transaction(org_id) as conn:
            page = await attachment_store.export_page(conn, user_id, after, PAGE)
        for row in page:
            name = entry_name("attachments", row["id"], row["filename"])
            present = copy_object(archive, row["object_key"], name)
            written += present
            listed.append({**{k: row[k] for k in _ATTACHMENT}, "file": name if present else None})
        if len(page) < PAGE:
            break
        after = (page[-1]["created_at"], page[-1]["id"])
    archive.writestr("attachments.json", _json({"items": listed}))
    return written


async def write_documents(archive: zipfile.ZipFile, org_id: UUID, user_id: UUID | None) -> int:
    """The documents `user_id` uploaded (None: the org's shared ones) with their original files; how many."""
    listed: list[dict[str, Any]] = []
    written = 0
    after: tuple[datetime, UUID] | None = None
    while len(listed) < MAX_FILES:
        async with worker_transaction(org_id) as conn:
            page = await document_store.export_page(conn, user_id, after, PAGE)
        for row in page:
            name = entry_name("documents", row["id"], row["filename"])
            present = copy_object(archive, row["object_key"], name)
            written += present
            listed.append({**{k: row[k] for k in _DOCUMENT}, "file": name if present else None})
        if len(page) < PAGE:
            break
        after = (page[-1]["created_at"], page[-1]["id"])
    archive.writestr("documents.json", _json({"items": listed}))
    return written


async def write_agents(archive: zipfile.ZipFile, org_id: UUID, user_id: UUID | None) -> int:
    """The agents `user_id` owns (None: the org's), each with every version; how many."""
    async with org_transaction(org_id) as conn:
        agents = await agent_store.for_export(conn, user_id, MAX_AGENTS)
    for agent in agents:
        async with org_transaction(org_id) as conn:
            versions = await agent_store.versions(conn, agent.id)
        body = {"agent": asdict(agent), "versions": [asdict(v) for v in versions]}
        archive.writestr(f"agents/{agent.slug}.json", _json(body))
    return len(agents)
