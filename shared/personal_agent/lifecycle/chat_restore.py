"""Import of our own export (issue 38, `format: "personal-agent"`): each `chats/<id>.json` of the ZIP
(`lifecycle.user_data` writes it: the chat and every stored message, all branches, with `parent_id`) becomes a chat
of the importer's with the same tree — every message in the order it was written, with its kind, pydantic-ai JSON,
parent and time, so the branches, their order and each branch's transcript come back as they were.

Checked before anything is written, all or nothing: the manifest says it is ours; each message's parent is an
earlier message of the same chat; each request and response is valid pydantic-ai JSON. What is not restored: runs
(a message's `run_id` is null, so approvals and sub-agents no longer hang off its tool calls), the files (an
attachment shows by name, its model sees it as no longer available), memories (`memories.json`: a memory is recalled
into later runs, so one from a file would steer them; they stay readable in the export), agents, documents and share
links. The chat is labelled untrusted (its text came from a file)."""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.chats import restore_store
from personal_agent.chats import store as chat_store
from personal_agent.db import org_transaction
from personal_agent.errors import InvalidInput
from personal_agent.identity.principal import Principal
from personal_agent.spec.labels import Labels

FORMAT = "personal-agent-export"
MAX_CHATS = 5000
MAX_MESSAGES = 20000
CLASSIFICATIONS = ("standard", "confidential", "restricted")
_CHAT_ENTRY = re.compile(r"^chats/[^/]{1,100}\.json$")


@dataclass(frozen=True)
class RestoredMessage:
    id: int
    parent_id: int | None
    kind: str
    message: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class RestoredChat:
    title: str
    classification: str
    created_at: datetime
    updated_at: datetime
    temporary_until: datetime | None
    messages: list[RestoredMessage]


def _bad(why: str) -> InvalidInput:
    return InvalidInput(f"not a valid Personal Agent export: {why}", code="import_invalid")


def _time(value: Any, what: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        raise _bad(f"{what} is not a time") from None
    if parsed.tzinfo is None:
        raise _bad(f"{what} has no time zone")
    return parsed


def _message(raw: Any, seen: set[int], where: str) -> RestoredMessage:
    from pydantic import ValidationError
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    if not isinstance(raw, dict) or not isinstance(raw.get("id"), int) or not isinstance(raw.get("message"), dict):
        raise _bad(f"{where}: a message without an id or content")
    parent, kind, body = raw.get("parent_id"), raw.get("kind"), raw["message"]
    if parent is not None and parent not in seen:
        raise _bad(f"{where}: message {raw['id']}'s parent is not an earlier message of the chat")
    if kind not in ("request", "response", "summary") or body.get("kind") != kind:
        raise _bad(f"{where}: message {raw['id']} is of no known kind")
    if kind == "summary":
        if parent is None or not isinstance(body.get("parts"), list):
            raise _bad(f"{where}: summary {raw['id']} covers no message")
    else:
        try:
            ModelMessagesTypeAdapter.validate_python([body])
        except ValidationError:
            raise _bad(f"{where}: message {raw['id']} is not a model message") from None
    return RestoredMessage(raw["id"], parent, kind, body, _time(raw.get("created_at"), f"{where}: a message's time"))


def _order(message: Any) -> int:
    """Where a message was written (its id); anything without one first, to be refused."""
    found = message.get("id") if isinstance(message, dict) else None
    return found if isinstance(found, int) else -1


def _chat(raw: Any, where: str) -> RestoredChat:
    chat = raw.get("chat") if isinstance(raw, dict) else None
    messages = raw.get("messages") if isinstance(raw, dict) else None
    if not isinstance(chat, dict) or not isinstance(messages, list):
        raise _bad(f"{where} has no `chat` and `messages`")
    if len(messages) > MAX_MESSAGES:
        raise InvalidInput(f"{where}: at most {MAX_MESSAGES} messages a chat", code="import_too_large", status=413)
    classification = chat.get("classification")
    if classification not in CLASSIFICATIONS:
        raise _bad(f"{where}: unknown classification")
    ordered = sorted(messages, key=_order)
    seen: set[int] = set()
    restored = []
    for message in ordered:
        restored.append(_message(message, seen, where))
        seen.add(restored[-1].id)
    if len(seen) != len(restored):
        raise _bad(f"{where}: two messages with one id")
    until = chat.get("temporary_until")
    return RestoredChat(
        title=str(chat.get("title") or "Imported chat")[:200],
        classification=str(classification),
        created_at=_time(chat.get("created_at"), f"{where}: the chat's time"),
        updated_at=_time(chat.get("updated_at") or chat.get("created_at"), f"{where}: the chat's time"),
        temporary_until=_time(until, f"{where}: the chat's expiry") if until else None,
        messages=restored,
    )


def read_chats(archive: zipfile.ZipFile, read: Any) -> list[RestoredChat]:
    """Every chat of the export, checked; `read(name)` gives an entry's bytes within the import's bounds."""
    try:
        manifest = json.loads(read("manifest.json"))
    except (KeyError, ValueError):
        raise _bad("it has no manifest.json") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _bad("its manifest does not name the format")
    names = sorted(n for n in archive.namelist() if _CHAT_ENTRY.match(n))
    if len(names) > MAX_CHATS:
        raise InvalidInput(f"at most {MAX_CHATS} chats at once", code="import_too_large", status=413)
    chats = []
    for name in names:
        try:
            raw = json.loads(read(name))
        except ValueError:
            raise _bad(f"{name} is not JSON") from None
        chats.append(_chat(raw, name))
    return chats


async def restore_chats(principal: Principal, chats: list[RestoredChat]) -> list[UUID]:
    """Each chat as a new chat of the caller's with the same message tree, in one transaction; the chats' ids."""
    ids: list[UUID] = []
    async with org_transaction(principal.org_id) as conn:
        for chat in chats:
            chat_id = await restore_store.insert_chat(
                conn,
                principal.org_id,
                principal.user_id,
                chat.title,
                chat.classification,
                chat.created_at,
                chat.updated_at,
                chat.temporary_until,
            )
            await chat_store.raise_labels(conn, chat_id, Labels(untrusted=True))
            new_ids: dict[int, int] = {}
            for message in chat.messages:  # oldest first: a parent is always written before its children
                parent = new_ids[message.parent_id] if message.parent_id is not None else None
                new_ids[message.id] = await restore_store.insert_message(
                    conn, principal.org_id, chat_id, message.kind, message.message, parent, message.created_at
                )
            ids.append(chat_id)
    return ids
