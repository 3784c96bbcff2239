"""A person's chat data leaving and being erased (issue 38).

Export: a ZIP of JSON and Markdown — `manifest.json`; per chat `chats/<id>.json` (the chat and every stored message,
all branches, with `parent_id`: the tree as it is stored, pydantic-ai JSON) and `chats/<id>.md` (its latest branch
as text); `memories.json`; `shares.json` (the links made, no tokens). Built in memory, bounded by `MAX_CHATS` and
`MAX_MESSAGES` per chat (`manifest.json` says when a bound cut it).

Erase: every chat of the person (runs, messages and share links with them) and every memory; the usage ledger and
the approval audit stay (content-free)."""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from personal_agent.chats import export_store, policy_store, share_store
from personal_agent.chats.export_store import ExportChat, ExportMessage
from personal_agent.db import org_transaction
from personal_agent.identity.principal import Principal
from personal_agent.memories import service as memory_service
from personal_agent.memories import store as memory_store

FORMAT = "personal-agent-export"
MAX_CHATS = 5000
MAX_MESSAGES = 20000


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


def markdown(chat: ExportChat, messages: list[ExportMessage]) -> str:
    """The chat's latest branch (the newest turn back to the first) as Markdown."""
    by_id = {m.id: m for m in messages if m.kind != "summary"}
    branch: list[ExportMessage] = []
    node = by_id.get(max(by_id)) if by_id else None
    while node is not None:
        branch.append(node)
        node = by_id.get(node.parent_id) if node.parent_id is not None else None
    lines = [f"# {chat.title}", "", f"_{chat.classification} · created {chat.created_at.isoformat()}_", ""]
    for message in reversed(branch):
        kind = message.message.get("kind") if isinstance(message.message, dict) else None
        said = _text(message.message, "user-prompt" if kind == "request" else "text")
        if said:
            lines += [f"**{'You' if kind == 'request' else 'Assistant'}:**", "", said, ""]
    return "\n".join(lines)


async def export_zip(principal: Principal) -> bytes:
    """The person's chats, memories and share links as a ZIP."""
    buffer = io.BytesIO()
    cut = False
    async with org_transaction(principal.org_id) as conn:
        chats = await export_store.chats_of(conn, principal.user_id, MAX_CHATS + 1)
        shares = await share_store.list_of_user(conn, principal.user_id, MAX_CHATS)
    cut = len(chats) > MAX_CHATS
    memories = await memory_service.list_memories(principal)
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for chat in chats[:MAX_CHATS]:
            async with org_transaction(principal.org_id) as conn:
                messages = await export_store.messages_of(conn, chat.id, MAX_MESSAGES + 1)
            cut = cut or len(messages) > MAX_MESSAGES
            body = {"chat": asdict(chat), "messages": [asdict(m) for m in messages[:MAX_MESSAGES]]}
            archive.writestr(f"chats/{chat.id}.json", _json(body))
            archive.writestr(f"chats/{chat.id}.md", markdown(chat, messages[:MAX_MESSAGES]))
        archive.writestr("memories.json", _json(memories))
        archive.writestr("shares.json", _json([asdict(s) for s in shares]))
        manifest = {
            "format": FORMAT,
            "version": 1,
            "org": principal.org_slug,
            "user_id": str(principal.user_id),
            "exported_at": datetime.now(UTC).isoformat(),
            "chats": min(len(chats), MAX_CHATS),
            "complete": not cut,
        }
        archive.writestr("manifest.json", _json(manifest))
    return buffer.getvalue()


async def erase(principal: Principal) -> dict[str, int]:
    """Delete the person's chats (with their runs, messages and shares) and memories; the counts."""
    async with org_transaction(principal.org_id) as conn:
        chats = await policy_store.erase_owned_chats(conn, principal.user_id)
        await memory_store.as_user(conn, principal.user_id)
        rows = await memory_store.list_own(conn, principal.user_id, 100_000)
        memories = sum([await memory_store.delete(conn, row["id"], principal.user_id) for row in rows])
    return {"chats": chats, "memories": memories}
