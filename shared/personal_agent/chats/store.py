"""Chat rows and their messages: the only SQL on `chats` and `messages`. Every call runs inside an org
transaction (RLS); ownership is a `user_id` condition, so a chat of someone else reads as missing.

A read returns a typed row: a frozen dataclass named for what it holds (`ChatRow`, `MessageNode`, `TranscriptRow`,
`SummaryRow`), never a dict. The store stays free of the API's pydantic models; a route that returns a row as its
response model validates it from its attributes (FastAPI validates responses with `from_attributes`), so the
JSON is the same as the dict's was."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn, jsonb
from personal_agent.spec.labels import Labels

COLUMNS = "id, title, classification, created_at, updated_at"


@dataclass(frozen=True)
class ChatRow:
    """A chat as its owner sees it; `snippet` only in a search (`list_owned` with words)."""

    id: UUID
    title: str
    classification: str
    created_at: datetime
    updated_at: datetime
    snippet: str | None = None


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


async def insert_chat(
    conn: Conn, org_id: UUID, user_id: UUID | None, title: str, classification: str = "standard"
) -> ChatRow:
    cur = await conn.execute(
        f"INSERT INTO chats (org_id, user_id, title, classification) VALUES (%s, %s, %s, %s) RETURNING {COLUMNS}",
        [org_id, user_id, title, classification],
    )
    row = await cur.fetchone()
    assert row is not None
    return ChatRow(**row)


async def chat_for_thread(conn: Conn, org_id: UUID, user_id: UUID, title: str, thread_id: str) -> UUID:
    """The user's chat of an external (AG-UI) thread id, created on first use."""
    cur = await conn.execute(
        "INSERT INTO chats (org_id, user_id, title, external_thread_id) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (org_id, user_id, external_thread_id) WHERE external_thread_id IS NOT NULL"
        " DO UPDATE SET updated_at = now() RETURNING id",
        [org_id, user_id, title, thread_id],
    )
    row = await cur.fetchone()
    assert row is not None
    return UUID(str(row["id"]))


# The words people and the assistant wrote in a message (the same path as the `search_tsv` column, 0020).
_MESSAGE_TEXT = (
    "(SELECT string_agg(t #>> '{}', ' ') FROM jsonb_array_elements(jsonb_path_query_array(m.message,"
    ' \'lax $.parts[*] ? (@.part_kind == "user-prompt" || @.part_kind == "text").content\')) AS t)'
)


async def list_owned(
    conn: Conn,
    user_id: UUID,
    before: tuple[datetime, UUID] | None,
    title_like: str | None,
    limit: int,
    words: str | None = None,
) -> list[ChatRow]:
    """The user's chats, most recently updated first, after the keyset `before`; with `words`, those whose title
    matches `title_like` or whose messages match the full-text query, each with a `snippet` of its latest match."""
    clauses = ["c.user_id = %s"]
    params: list[Any] = [user_id]
    if before is not None:
        clauses.append("(c.updated_at, c.id) < (%s, %s)")
        params += list(before)
    if words is None:
        if title_like is not None:
            clauses.append("c.title ILIKE %s")
            params.append(title_like)
        sql = (
            f"SELECT c.id, c.title, c.classification, c.created_at, c.updated_at, NULL::text AS snippet FROM chats c"
            f" WHERE {' AND '.join(clauses)} ORDER BY c.updated_at DESC, c.id DESC LIMIT %s"
        )
        cur = await conn.execute(sql, [*params, limit])
        return [ChatRow(**row) for row in await cur.fetchall()]
    clauses.append("(c.title ILIKE %s OR hit.snippet IS NOT NULL)")
    sql = (
        "SELECT c.id, c.title, c.classification, c.created_at, c.updated_at, hit.snippet"
        " FROM chats c CROSS JOIN websearch_to_tsquery('english', %s) AS q(query)"
        " LEFT JOIN LATERAL ("
        f"  SELECT ts_headline('english', {_MESSAGE_TEXT}, q.query, 'MaxWords=16, MinWords=6, MaxFragments=1,"
        ' StartSel="", StopSel=""\') AS snippet'
        "  FROM messages m WHERE m.chat_id = c.id AND m.search_tsv @@ q.query ORDER BY m.id DESC LIMIT 1"
        " ) hit ON true"
        f" WHERE {' AND '.join(clauses)} ORDER BY c.updated_at DESC, c.id DESC LIMIT %s"
    )
    cur = await conn.execute(sql, [words, *params, title_like, limit])
    return [ChatRow(**row) for row in await cur.fetchall()]


async def get_owned(conn: Conn, chat_id: UUID, user_id: UUID | None) -> ChatRow | None:
    cur = await conn.execute(f"SELECT {COLUMNS} FROM chats WHERE id = %s AND user_id = %s", [chat_id, user_id])
    row = await cur.fetchone()
    return ChatRow(**row) if row is not None else None


async def update_owned(
    conn: Conn, chat_id: UUID, user_id: UUID, title: str | None, classification: str | None, min_tier: int = 0
) -> ChatRow | None:
    """Change what is given (None keeps it); None when the user has no such chat, or when the chat's content
    tier is above `min_tier` (the tier of the new classification): a classification never drops below what
    already entered the chat."""
    cur = await conn.execute(
        "UPDATE chats SET title = coalesce(%s, title), classification = coalesce(%s, classification),"
        f" updated_at = now() WHERE id = %s AND user_id = %s AND content_tier <= %s RETURNING {COLUMNS}",
        [title, classification, chat_id, user_id, min_tier],
    )
    row = await cur.fetchone()
    return ChatRow(**row) if row is not None else None


async def delete_owned(conn: Conn, chat_id: UUID, user_id: UUID) -> bool:
    cur = await conn.execute("DELETE FROM chats WHERE id = %s AND user_id = %s RETURNING id", [chat_id, user_id])
    return await cur.fetchone() is not None


@dataclass(frozen=True)
class LockedChat:
    """A chat locked for a launch: its classification and the labels of what entered it so far."""

    classification: str
    labels: Labels


async def lock_chat(conn: Conn, chat_id: UUID, owner: UUID | None = None, *, owned: bool = False) -> LockedChat | None:
    """Lock the chat until the transaction ends (a run and its message land together): its classification and
    labels, or None when there is no such chat (`owned`: of `owner`)."""
    columns = "classification, content_tier, untrusted"
    if owned:
        cur = await conn.execute(
            f"SELECT {columns} FROM chats WHERE id = %s AND user_id = %s FOR UPDATE", [chat_id, owner]
        )
    else:
        cur = await conn.execute(f"SELECT {columns} FROM chats WHERE id = %s FOR UPDATE", [chat_id])
    row = await cur.fetchone()
    if row is None:
        return None
    labels = Labels(content_tier=int(row["content_tier"]), untrusted=bool(row["untrusted"]))
    return LockedChat(str(row["classification"]), labels)


async def raise_labels(conn: Conn, chat_id: UUID, labels: Labels) -> None:
    """Raise the chat's labels to include `labels` (never lowers them)."""
    if labels.content_tier == 0 and not labels.untrusted:
        return
    await conn.execute(
        "UPDATE chats SET content_tier = greatest(content_tier, %s), untrusted = untrusted OR %s WHERE id = %s",
        [labels.content_tier, labels.untrusted, chat_id],
    )


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
