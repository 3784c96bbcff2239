"""A person's or an org's chat data leaving, and a person's being erased (issue 38).

Export: a ZIP of JSON and Markdown — `manifest.json`; per chat `chats/<id>.json` (the chat and every stored message,
all branches, with `parent_id`: the tree as it is stored, pydantic-ai JSON) and `chats/<id>.md` (its latest branch
as text); `shares.json` (the links made, no tokens); a person's export also `memories.json`; attachments, knowledge
documents (the files themselves) and agents as `export_files` writes them. An org admin's export has every member's
chats and share links and the org's documents and agents, but no memories, attachments or personal documents (they
are private to each person, as the tables' policies keep them). Written entry by entry into a stream
(`write_archive`), chats and messages read page by page and files copied in chunks, so memory stays bounded whatever
the size; bounded by `MAX_CHATS` and `MAX_MESSAGES` per chat (`manifest.json` says when a bound cut it).

Erase: the person's files (attachments and their own documents, objects included: `erase_files`), their own data
exports, every chat of the person (runs, messages and share links with them) and every memory; the usage ledger and
the approval audit stay (content-free)."""

from __future__ import annotations

import json
import zipfile
from dataclasses import asdict
from datetime import UTC, datetime
from typing import IO, Any, Literal
from uuid import UUID

from personal_agent.chats import export_store, policy_store, share_store
from personal_agent.chats.export_store import ExportChat, ExportMessage
from personal_agent.db import org_transaction
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle import export_files
from personal_agent.lifecycle.erase_files import erase_exports, erase_files
from personal_agent.memories import service as memory_service
from personal_agent.memories import store as memory_store

FORMAT = "personal-agent-export"
MAX_CHATS = 5000
MAX_ORG_CHATS = 200_000
MAX_MESSAGES = 20000
MAX_MEMORIES = 100_000
PAGE = 200
# Messages can be large (a tool's result, a long answer): fewer per page.
MESSAGE_PAGE = 50

Scope = Literal["user", "org"]


def _json(value: Any) -> str:
    return json.dumps(value, default=str, indent=2, ensure_ascii=False)


def _text(message: Any, keep: str) -> str:
    parts = message.get("parts", []) if isinstance(message, dict) else []
    texts = []
    for part in parts:
        if isinstance(part, dict) and part.get("part_kind") == keep:
            content = part.get("content")
            texts.append(
                content if isinstance(content, str) else " ".join(c for c in content or [] if isinstance(c, str))
            )
    return "\n\n".join(t for t in texts if t)


def latest_branch(links: list[export_store.MessageLink]) -> list[int]:
    """The ids of the chat's latest branch (the newest message back to the first), first to last."""
    parents = {link.id: link.parent_id for link in links if link.kind != "summary"}
    branch: list[int] = []
    node = max(parents) if parents else None
    while node is not None and node in parents:
        branch.append(node)
        node = parents[node]
    return branch[::-1]


def markdown_head(chat: ExportChat) -> str:
    return "\n".join([f"# {chat.title}", "", f"_{chat.classification} · created {chat.created_at.isoformat()}_", ""])


def markdown_turn(message: ExportMessage) -> str:
    """One message of the branch as Markdown ("" for one with no text: a tool's return, a system prompt)."""
    kind = message.message.get("kind") if isinstance(message.message, dict) else None
    said = _text(message.message, "user-prompt" if kind == "request" else "text")
    return f"\n**{'You' if kind == 'request' else 'Assistant'}:**\n\n{said}\n" if said else ""


async def write_archive(org_id: UUID, user_id: UUID, scope: Scope, org_slug: str, out: IO[bytes]) -> dict[str, Any]:
    """Write the export's ZIP into `out` (a stream; it need not seek); the manifest."""
    cut = False
    count = 0
    limit = MAX_CHATS if scope == "user" else MAX_ORG_CHATS
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        after: tuple[datetime, UUID] | None = None
        while count < limit:
            async with org_transaction(org_id) as conn:
                page = await export_store.chats_page(
                    conn, user_id if scope == "user" else None, after, min(PAGE, limit - count)
                )
            for chat in page:
                cut = await _write_chat(archive, org_id, chat) or cut
            count += len(page)
            if len(page) < PAGE:
                break
            after = (page[-1].created_at, page[-1].id)
        async with org_transaction(org_id) as conn:
            cut = cut or (
                count >= limit
                and bool(await export_store.chats_page(conn, user_id if scope == "user" else None, after, 1))
            )
            shares = (
                await share_store.list_of_user(conn, user_id, MAX_CHATS)
                if scope == "user"
                else await share_store.list_of_org(conn, MAX_ORG_CHATS)
            )
        archive.writestr("shares.json", _json([asdict(s) for s in shares]))
        owner = user_id if scope == "user" else None
        files = {
            "attachments": await export_files.write_attachments(archive, org_id, user_id) if scope == "user" else 0,
            "documents": await export_files.write_documents(archive, org_id, owner),
            "agents": await export_files.write_agents(archive, org_id, owner),
        }
        if scope == "user":
            async with org_transaction(org_id) as conn:
                await memory_store.as_user(conn, user_id)
                rows = await memory_store.list_own(conn, user_id, MAX_MEMORIES)
            archive.writestr("memories.json", _json({"items": [memory_service.view(r) for r in rows]}))
        manifest = {
            "format": FORMAT,
            "version": 1,
            "scope": scope,
            "org": org_slug,
            "user_id": str(user_id) if scope == "user" else None,
            "exported_by": str(user_id),
            "exported_at": datetime.now(UTC).isoformat(),
            "chats": count,
            **files,
            "complete": not cut,
        }
        archive.writestr("manifest.json", _json(manifest))
    return manifest


async def _write_chat(archive: zipfile.ZipFile, org_id: UUID, chat: ExportChat) -> bool:
    """The chat's JSON (every message, page by page) and its latest branch as Markdown; whether a bound cut it."""
    written, after_id = 0, 0
    with archive.open(f"chats/{chat.id}.json", "w") as entry:
        entry.write(f'{{"chat": {_json(asdict(chat))},\n"messages": ['.encode())
        while written < MAX_MESSAGES:
            async with org_transaction(org_id) as conn:
                page = await export_store.messages_page(
                    conn, chat.id, after_id, min(MESSAGE_PAGE, MAX_MESSAGES - written)
                )
            for message in page:
                entry.write(((",\n" if written else "\n") + _json(asdict(message))).encode())
                written += 1
            if len(page) < MESSAGE_PAGE:
                break
            after_id = page[-1].id
        entry.write(b"\n]}\n")
    async with org_transaction(org_id) as conn:
        links = await export_store.message_links(conn, chat.id, MAX_MESSAGES + 1)
    cut = len(links) > MAX_MESSAGES
    branch = latest_branch(links[:MAX_MESSAGES])
    with archive.open(f"chats/{chat.id}.md", "w") as entry:
        entry.write(markdown_head(chat).encode())
        for start in range(0, len(branch), MESSAGE_PAGE):
            async with org_transaction(org_id) as conn:
                ids = branch[start : start + MESSAGE_PAGE]
                for message in await export_store.messages_by_id(conn, chat.id, ids):
                    entry.write(markdown_turn(message).encode())
    return cut


async def erase_person(org_id: UUID, user_id: UUID) -> dict[str, int]:
    """Delete the person's files, data exports, chats (with their runs, messages and shares) and memories in the
    org; the counts. What `POST /me/erase` does for the caller and an org admin's erase for an offboarded member."""
    files = await erase_files(org_id, user_id)
    exports = await erase_exports(org_id, user_id)
    async with org_transaction(org_id) as conn:
        chats = await policy_store.erase_owned_chats(conn, user_id)
        await memory_store.as_user(conn, user_id)
        rows = await memory_store.list_own(conn, user_id, 100_000)
        memories = sum([await memory_store.delete(conn, row["id"], user_id) for row in rows])
    return {"chats": chats, "memories": memories, "files": files, "exports": exports}


async def erase(principal: Principal) -> dict[str, int]:
    """Delete the caller's content (`erase_person`); the counts."""
    return await erase_person(principal.org_id, principal.user_id)
