"""Chats for the API: a chat is private to its owner and, in a project, readable by the project's members
(0041); anyone else (same org or not) gets 404."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any
from uuid import UUID

from personal_agent.chats import message_store, policy_store, store
from personal_agent.chats.branches import branch_leaf
from personal_agent.chats.store import ChatRow
from personal_agent.chats.transcript import TranscriptPage, parse_cursor
from personal_agent.db import org_transaction
from personal_agent.db.keyset import decode_uuid_cursor, encode_cursor
from personal_agent.errors import Conflict, InvalidInput, NotFound
from personal_agent.governance.tiers import MAX_TIER, classification_tier
from personal_agent.identity.principal import Principal

MAX_TITLE = 200
TRANSCRIPT_BATCH = 50  # message rows read at a time while a page fills


def _title(title: str | None) -> str:
    text = (title or "").strip() or "New chat"
    if len(text) > MAX_TITLE:
        raise InvalidInput(f"the title is longer than {MAX_TITLE} characters", code="title_too_long")
    return text


@dataclass(frozen=True)
class ChatList:
    """A page of the user's chats and the cursor of the next one (None: the last page)."""

    items: list[ChatRow]
    next_cursor: str | None


def _chat_cursor(row: ChatRow) -> str:
    return encode_cursor(row.updated_at, row.id)


async def create_chat(
    principal: Principal,
    title: str | None,
    classification: str = "standard",
    agent_id: UUID | None = None,
    *,
    temporary: bool = False,
) -> ChatRow:
    """`temporary`: never listed, deleted after the org's `temporary_hours` (`chats.retention`), in the same
    transaction as the chat is made."""
    async with org_transaction(principal.org_id) as conn:
        row = await store.insert_chat(
            conn, principal.org_id, principal.user_id, _title(title), classification, agent_id
        )
        if temporary:
            row = replace(row, temporary_until=await policy_store.mark_temporary(conn, principal.org_id, row.id))
        return row


async def list_chats(
    principal: Principal, limit: int, cursor: str | None, q: str | None, project_id: UUID | None = None
) -> ChatList:
    """A page of the caller's chats (with `project_id`: that project's chats they may read; the caller checked
    they are a member)."""
    before = decode_uuid_cursor(cursor) if cursor else None
    like = "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" if q else None
    async with org_transaction(principal.org_id) as conn:
        rows = await store.list_owned(
            conn, principal.user_id, before, like, limit + 1, words=q or None, project_id=project_id
        )
    next_cursor = _chat_cursor(rows[limit - 1]) if len(rows) > limit else None
    return ChatList(rows[:limit], next_cursor)


async def get_chat(principal: Principal, chat_id: UUID) -> ChatRow:
    """The caller's chat, or one of a project they are a member of (not a restricted one); else 404."""
    async with org_transaction(principal.org_id) as conn:
        row = await store.get_visible(conn, chat_id, principal.user_id)
    if row is None:
        raise NotFound("chat not found", code="chat_not_found")
    return row


async def update_chat(principal: Principal, chat_id: UUID, title: str | None, classification: str | None) -> ChatRow:
    """Rename a chat and/or change its data classification (which decides the models it may reach). The
    classification never goes below what already entered the chat (409 `classification_below_content`)."""
    floor = classification_tier(classification) if classification is not None else MAX_TIER
    async with org_transaction(principal.org_id) as conn:
        row = await store.update_owned(
            conn, chat_id, principal.user_id, _title(title) if title is not None else None, classification, floor
        )
        if row is None and await store.get_owned(conn, chat_id, principal.user_id) is not None:
            raise Conflict(
                f"this chat already holds data that needs more than {classification!r}; start a new chat instead",
                code="classification_below_content",
            )
    if row is None:
        raise NotFound("chat not found", code="chat_not_found")
    return row


async def delete_chat(principal: Principal, chat_id: UUID) -> None:
    async with org_transaction(principal.org_id) as conn:
        if not await store.delete_owned(conn, chat_id, principal.user_id):
            raise NotFound("chat not found", code="chat_not_found")


async def transcript_page(
    principal: Principal, chat_id: UUID, limit: int, cursor: str | None, leaf: int | None = None
) -> dict[str, Any]:
    """A page of one branch of the chat's transcript (the branch through `leaf` down to its newest message; without
    `leaf`, the chat's latest branch), newest first across pages (`chats.transcript` says how it is cut)."""
    page = TranscriptPage(limit, parse_cursor(cursor) if cursor else None)
    await get_chat(principal, chat_id)
    upper = page.before[0] if page.before else None
    async with org_transaction(principal.org_id) as conn:
        tip = await branch_leaf(conn, chat_id, leaf)
        while tip is not None and not page.full:
            rows = await message_store.message_rows_before(conn, chat_id, tip, upper, TRANSCRIPT_BATCH)
            for row in rows:
                if not page.add_row(row):
                    break
            if len(rows) < TRANSCRIPT_BATCH:
                break
            upper = rows[-1].id - 1
        covered = await message_store.branch_ids(conn, chat_id, tip) if tip else []
        summary = await message_store.latest_summary(conn, chat_id, covered) if tip else None
    marker = {"summarised_upto": summary.parent_id} if summary else {}
    return {**page.body(), "leaf_id": tip, **marker}
