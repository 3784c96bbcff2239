"""Where a new run joins a chat's message tree (0021): after the latest message, after a chosen answer, as a
new first turn (editing the first message), or below a user turn whose answer it regenerates."""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from personal_agent.chats import message_store
from personal_agent.db.pool import Conn
from personal_agent.errors import InvalidInput, NotFound

Parent = int | None | Literal["latest"]
"""The message a run continues from: an id, None for a new first turn, or `latest` (the chat's newest message)."""


def _is_user_turn(message: Any) -> bool:
    parts = message.get("parts", []) if isinstance(message, dict) else []
    return any(isinstance(p, dict) and p.get("part_kind") == "user-prompt" for p in parts)


async def resolve_parent(conn: Conn, chat_id: UUID, parent: Parent, regenerate: bool) -> int | None:
    """The id a run's first message hangs below (call with the chat locked). A new user turn continues from an
    answer (a model response) or starts the chat over (None); a regenerate names the user turn to answer again."""
    if parent == "latest":
        if regenerate:
            raise InvalidInput("a regenerate names the user message to answer again", code="parent_required")
        return await message_store.latest_message_id(conn, chat_id)
    if parent is None:
        if regenerate:
            raise InvalidInput("a regenerate names the user message to answer again", code="parent_required")
        return None
    node = await message_store.message_node(conn, chat_id, parent)
    if node is None:
        raise NotFound("message not found", code="message_not_found")
    if regenerate and not (node.kind == "request" and _is_user_turn(node.message)):
        raise InvalidInput("only a user message's answer can be regenerated", code="invalid_parent")
    if not regenerate and node.kind != "response":
        raise InvalidInput("a new message continues from an answer", code="invalid_parent")
    return node.id


async def branch_leaf(conn: Conn, chat_id: UUID, leaf: int | None) -> int | None:
    """The leaf of the branch to show: the newest message below `leaf` (the chat's newest message when None)."""
    if leaf is None:
        return await message_store.latest_message_id(conn, chat_id)
    if await message_store.message_node(conn, chat_id, leaf) is None:
        raise NotFound("message not found", code="message_not_found")
    return await message_store.newest_descendant(conn, chat_id, leaf)
