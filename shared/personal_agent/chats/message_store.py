"""A chat's messages: the only SQL on `messages` (the tree of turns, 0021, and the summaries that hang off it).
Every call runs inside an org transaction (RLS). A read returns a typed row (`MessageNode`, `TranscriptRow`,
`SummaryRow`), never a dict."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn, jsonb


@dataclass(frozen=True)
class MessageNode:
    """One stored message with its place in the chat's message tree (0021)."""

    id: int
    parent_id: int | None
    run_id: UUID | None
    kind: str
    message: Any
    """The pydantic-ai JSON of the message."""


@dataclass(frozen=True)
class TranscriptRow:
    """A message of a transcript page: its place in the tree and `sibling_ids`, the messages continuing from the
    same parent (itself included, oldest first)."""

    id: int
    parent_id: int | None
    run_id: UUID | None
    message: Any
    created_at: datetime
    sibling_ids: list[int] | None
    """None only for a summary reached as a branch's leaf (it has no siblings among the turns)."""


@dataclass(frozen=True)
class SummaryRow:
    """A stored summary of a branch's older turns: `parent_id` is the last message it covers."""

    id: int
    parent_id: int
    message: Any


_TOUCH_CHAT = "UPDATE chats SET updated_at = now() WHERE id = %s"


async def append_messages(
    conn: Conn,
    org_id: UUID,
    chat_id: UUID,
    run_id: UUID | None,
    messages: list[dict[str, Any]],
    parent_id: int | None = None,
) -> int | None:
    """Add messages (pydantic-ai JSON, each with its `kind`) to the chat as a chain below `parent_id` (None: a
    first turn) and mark the chat updated; the id of the last one (`parent_id` when there were none)."""
    if not messages:
        await conn.execute(_TOUCH_CHAT, [chat_id])
    if len(messages) > 2:
        return await _append_chain(conn, org_id, chat_id, run_id, messages, parent_id)
    for i, message in enumerate(messages):
        insert = (
            "INSERT INTO messages (org_id, chat_id, run_id, kind, message, parent_id) VALUES (%s, %s, %s, %s, %s, %s)"
            " RETURNING id"
        )
        params: list[Any] = [org_id, chat_id, run_id, message["kind"], jsonb(message), parent_id]
        if i == len(messages) - 1:  # the chat is marked updated in the same statement as its last message
            insert = f"WITH added AS ({insert}), touched AS ({_TOUCH_CHAT}) SELECT id FROM added"
            params.append(chat_id)
        cur = await conn.execute(insert, params)
        row = await cur.fetchone()
        assert row is not None
        parent_id = int(row["id"])
    return parent_id


async def _append_chain(
    conn: Conn, org_id: UUID, chat_id: UUID, run_id: UUID | None, messages: list[dict[str, Any]], parent_id: int | None
) -> int:
    """`append_messages` of three or more in two statements, whatever their number (a run's tool rounds end as
    many messages): their ids drawn first, ascending in the chain's order as one by one, then one insert."""
    cur = await conn.execute(
        "SELECT nextval(pg_get_serial_sequence('messages', 'id')) AS id FROM generate_series(1, %s)", [len(messages)]
    )
    ids = sorted(int(row["id"]) for row in await cur.fetchall())
    await conn.execute(
        "WITH added AS (INSERT INTO messages (id, org_id, chat_id, run_id, kind, message, parent_id)"
        " SELECT t.id, %s, %s, %s, t.kind, t.message, t.parent_id"
        " FROM unnest(%s::bigint[], %s::text[], %s::jsonb[], %s::bigint[]) AS t(id, kind, message, parent_id)),"
        f" touched AS ({_TOUCH_CHAT}) SELECT 1",
        [
            org_id,
            chat_id,
            run_id,
            ids,
            [m["kind"] for m in messages],
            [jsonb(m) for m in messages],
            [parent_id, *ids[:-1]],
            chat_id,
        ],
    )
    return ids[-1]


# The path from a message up to its chat's first turn (a branch of the message tree, 0021), newest first.
_ANCESTORS = (
    "WITH RECURSIVE branch AS (SELECT id, parent_id FROM messages WHERE id = %s AND chat_id = %s"
    " UNION ALL SELECT m.id, m.parent_id FROM messages m JOIN branch b ON m.id = b.parent_id)"
)


async def branch_messages(conn: Conn, chat_id: UUID, upto: int | None) -> list[Any]:
    """The messages of the branch that ends at message `upto` (pydantic-ai JSON), oldest first; [] for None.
    A message's ancestors never change, so the same `upto` always gives the same history."""
    if upto is None:
        return []
    cur = await conn.execute(
        f"{_ANCESTORS} SELECT m.message FROM messages m JOIN branch b ON b.id = m.id ORDER BY m.id", [upto, chat_id]
    )
    return [row["message"] for row in await cur.fetchall()]


async def message_node(conn: Conn, chat_id: UUID, message_id: int) -> MessageNode | None:
    """One message of the chat with its place in the tree (`parent_id`, `run_id`, `kind`), or None."""
    cur = await conn.execute(
        "SELECT id, parent_id, run_id, kind, message FROM messages WHERE id = %s AND chat_id = %s",
        [message_id, chat_id],
    )
    row = await cur.fetchone()
    return MessageNode(**row) if row is not None else None


async def latest_message_id(conn: Conn, chat_id: UUID) -> int | None:
    """The chat's newest message: the leaf of its latest branch (None for an empty chat)."""
    cur = await conn.execute("SELECT max(id) AS id FROM messages WHERE chat_id = %s AND kind <> 'summary'", [chat_id])
    row = await cur.fetchone()
    return int(row["id"]) if row and row["id"] is not None else None


async def newest_descendant(conn: Conn, chat_id: UUID, message_id: int) -> int:
    """The newest message below `message_id` (itself when it is a leaf): where its latest branch ends."""
    cur = await conn.execute(
        "WITH RECURSIVE below AS (SELECT id FROM messages WHERE id = %s AND chat_id = %s"
        " UNION ALL SELECT m.id FROM messages m JOIN below b ON m.parent_id = b.id AND m.chat_id = %s"
        " AND m.kind <> 'summary')"
        " SELECT max(id) AS id FROM below",
        [message_id, chat_id, chat_id],
    )
    row = await cur.fetchone()
    return int(row["id"]) if row and row["id"] is not None else message_id


async def run_parent(conn: Conn, run_id: UUID) -> int | None:
    """The message a run's first stored message continues from (None: it started the chat, or has none)."""
    cur = await conn.execute(
        "SELECT parent_id FROM messages WHERE run_id = %s AND kind <> 'summary' ORDER BY id LIMIT 1", [run_id]
    )
    row = await cur.fetchone()
    return int(row["parent_id"]) if row and row["parent_id"] is not None else None


async def run_tip(conn: Conn, run_id: UUID) -> int | None:
    """The newest message a run stored (its user turn while it runs), or None."""
    cur = await conn.execute("SELECT max(id) AS id FROM messages WHERE run_id = %s AND kind <> 'summary'", [run_id])
    row = await cur.fetchone()
    return int(row["id"]) if row and row["id"] is not None else None


async def run_messages(conn: Conn, run_id: UUID) -> list[Any]:
    """The messages stored for one run (its user turn before it ends), oldest first."""
    cur = await conn.execute(
        "SELECT message FROM messages WHERE run_id = %s AND kind <> 'summary' ORDER BY id", [run_id]
    )
    return [row["message"] for row in await cur.fetchall()]


async def message_rows_before(
    conn: Conn, chat_id: UUID, leaf: int, upper: int | None, limit: int
) -> list[TranscriptRow]:
    """Up to `limit` message rows of the branch ending at `leaf`, newest first, with ids at most `upper` (all when
    None); each with its `parent_id` and `sibling_ids` (the messages continuing from the same parent, itself
    included, oldest first)."""
    below = "" if upper is None else " AND m.id <= %s"
    cur = await conn.execute(
        f"{_ANCESTORS} SELECT m.id, m.parent_id, m.run_id, m.message, m.created_at,"
        " (SELECT array_agg(s.id ORDER BY s.id) FROM messages s WHERE s.chat_id = m.chat_id AND s.kind <> 'summary'"
        "  AND (s.parent_id = m.parent_id OR (s.parent_id IS NULL AND m.parent_id IS NULL))) AS sibling_ids"
        f" FROM messages m JOIN branch b ON b.id = m.id WHERE true{below} ORDER BY m.id DESC LIMIT %s",
        [leaf, chat_id, *([] if upper is None else [upper]), limit],
    )
    return [TranscriptRow(**row) for row in await cur.fetchall()]


# ---- Summaries of a branch's older turns (0021: `summary` rows hang off the last message they cover) ----


async def branch_ids(conn: Conn, chat_id: UUID, upto: int) -> list[int]:
    """The ids of `branch_messages(chat_id, upto)`, oldest first."""
    cur = await conn.execute(f"{_ANCESTORS} SELECT id FROM branch ORDER BY id", [upto, chat_id])
    return [int(row["id"]) for row in await cur.fetchall()]


async def latest_summary(conn: Conn, chat_id: UUID, covered: list[int]) -> SummaryRow | None:
    """The summary that covers the most of the branch messages `covered` (its `parent_id` is the last it covers)."""
    cur = await conn.execute(
        "SELECT id, parent_id, message FROM messages WHERE chat_id = %s AND kind = 'summary'"
        " AND parent_id = ANY(%s::bigint[]) ORDER BY parent_id DESC, id DESC LIMIT 1",
        [chat_id, covered],
    )
    row = await cur.fetchone()
    return SummaryRow(**row) if row is not None else None


async def insert_summary(
    conn: Conn, org_id: UUID, chat_id: UUID, run_id: UUID, covers: int, text: str, metadata: dict[str, Any]
) -> int:
    """Store a summary of the branch up to message `covers` (made by run `run_id`) with the labels of the turns
    it covers in `metadata`; its id."""
    message = {"kind": "summary", "parts": [{"part_kind": "user-prompt", "content": text}], "metadata": metadata}
    cur = await conn.execute(
        "INSERT INTO messages (org_id, chat_id, run_id, kind, message, parent_id)"
        " VALUES (%s, %s, %s, 'summary', %s, %s) RETURNING id",
        [org_id, chat_id, run_id, jsonb(message), covers],
    )
    row = await cur.fetchone()
    assert row is not None
    return int(row["id"])


async def count_run_summaries(conn: Conn, run_id: UUID) -> int:
    cur = await conn.execute("SELECT count(*) AS n FROM messages WHERE run_id = %s AND kind = 'summary'", [run_id])
    row = await cur.fetchone()
    return int(row["n"]) if row else 0
