"""Chat rows: the only SQL on `chats` (their messages: `chats/message_store.py`). Every call runs inside an org
transaction (RLS); ownership is a `user_id` condition, so a chat of someone else reads as missing.

A read returns a typed row: a frozen dataclass named for what it holds (`ChatRow`, `LockedChat`), never a dict. The
store stays free of the API's pydantic models; a route that returns a row as its response model validates it from
its attributes (FastAPI validates responses with `from_attributes`), so the JSON is the same as a dict's was."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn
from personal_agent.spec.labels import Labels

COLUMNS = "id, title, classification, created_at, updated_at, agent_id, project_id, temporary_until"
# Who may read a chat besides its owner: the members of its project (0041), never for a restricted chat.
_PROJECT_MEMBER = (
    "(c.classification <> 'restricted' AND EXISTS (SELECT 1 FROM project_members pm"
    " WHERE pm.project_id = c.project_id AND pm.user_id = %s AND pm.role = ANY(%s)))"
)
READERS = ["owner", "editor", "viewer"]
WRITERS = ["owner", "editor"]
_CAN_POST = f"(c.user_id = %s OR {_PROJECT_MEMBER}) AS can_post"  # params: user, user, WRITERS


@dataclass(frozen=True)
class ChatRow:
    """A chat as its owner sees it; `snippet` only in a search (`list_owned` with words)."""

    id: UUID
    title: str
    classification: str
    created_at: datetime
    updated_at: datetime
    snippet: str | None = None
    agent_id: UUID | None = None
    """The agent the chat is bound to (its runs use that agent's published version); None: the built-in one."""
    project_id: UUID | None = None
    """The project the chat is in (0041); None: none."""
    temporary_until: datetime | None = None
    """A temporary chat (0036): when it is deleted; None: a chat kept by the org's retention."""
    can_post: bool = True
    """Whether the reader may start runs in it: its owner, or an editor or owner of its project (a viewer: False).
    Read where a member may see someone else's chat (`get_visible`, `list_owned` by project); True elsewhere, where
    only its owner or a writer of its project gets the row."""


async def insert_chat(
    conn: Conn,
    org_id: UUID,
    user_id: UUID | None,
    title: str,
    classification: str = "standard",
    agent_id: UUID | None = None,
) -> ChatRow:
    cur = await conn.execute(
        "INSERT INTO chats (org_id, user_id, title, classification, agent_id) VALUES (%s, %s, %s, %s, %s)"
        f" RETURNING {COLUMNS}",
        [org_id, user_id, title, classification, agent_id],
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
    project_id: UUID | None = None,
) -> list[ChatRow]:
    """The user's chats, most recently updated first, after the keyset `before`; with `words`, those whose title
    matches `title_like` or whose messages match the full-text query, each with a `snippet` of its latest match.
    With `project_id`: that project's chats the user may read (theirs, and its members' unless restricted)."""
    clauses = ["c.user_id = %s", "c.temporary_until IS NULL"]  # a temporary chat is never listed (0036)
    params: list[Any] = [user_id]
    if project_id is not None:
        clauses[0] = f"c.project_id = %s AND (c.user_id = %s OR {_PROJECT_MEMBER})"
        params = [project_id, user_id, user_id, READERS]
    can_post = [user_id, user_id, WRITERS]
    if before is not None:
        clauses.append("(c.updated_at, c.id) < (%s, %s)")
        params += list(before)
    if words is None:
        if title_like is not None:
            clauses.append("c.title ILIKE %s")
            params.append(title_like)
        sql = (
            "SELECT c.id, c.title, c.classification, c.created_at, c.updated_at, c.agent_id, c.project_id,"
            f" NULL::text AS snippet, {_CAN_POST}"
            f" FROM chats c"
            f" WHERE {' AND '.join(clauses)} ORDER BY c.updated_at DESC, c.id DESC LIMIT %s"
        )
        cur = await conn.execute(sql, [*can_post, *params, limit])
        return [ChatRow(**row) for row in await cur.fetchall()]
    clauses.append("(c.title ILIKE %s OR hit.snippet IS NOT NULL)")
    sql = (
        "SELECT c.id, c.title, c.classification, c.created_at, c.updated_at, c.agent_id, c.project_id, hit.snippet,"
        f" {_CAN_POST} FROM chats c CROSS JOIN websearch_to_tsquery('english', %s) AS q(query)"
        " LEFT JOIN LATERAL ("
        f"  SELECT ts_headline('english', {_MESSAGE_TEXT}, q.query, 'MaxWords=16, MinWords=6, MaxFragments=1,"
        ' StartSel="", StopSel=""\') AS snippet'
        "  FROM messages m WHERE m.chat_id = c.id AND m.search_tsv @@ q.query ORDER BY m.id DESC LIMIT 1"
        " ) hit ON true"
        f" WHERE {' AND '.join(clauses)} ORDER BY c.updated_at DESC, c.id DESC LIMIT %s"
    )
    cur = await conn.execute(sql, [*can_post, words, *params, title_like, limit])
    return [ChatRow(**row) for row in await cur.fetchall()]


async def get_owned(conn: Conn, chat_id: UUID, user_id: UUID | None) -> ChatRow | None:
    cur = await conn.execute(f"SELECT {COLUMNS} FROM chats WHERE id = %s AND user_id = %s", [chat_id, user_id])
    row = await cur.fetchone()
    return ChatRow(**row) if row is not None else None


async def get_visible(conn: Conn, chat_id: UUID, user_id: UUID | None, *, write: bool = False) -> ChatRow | None:
    """The chat if the user owns it or is a member of its project (`write`: an editor or owner of it), with whether
    they may post in it; else None."""
    roles = WRITERS if write else READERS
    cur = await conn.execute(
        f"SELECT {', '.join('c.' + c for c in COLUMNS.split(', '))}, {_CAN_POST} FROM chats c"
        f" WHERE c.id = %s AND (c.user_id = %s OR {_PROJECT_MEMBER})",
        [user_id, user_id, WRITERS, chat_id, user_id, user_id, roles],
    )
    row = await cur.fetchone()
    return ChatRow(**row) if row is not None else None


async def move_to_project(conn: Conn, chat_id: UUID, project_id: UUID | None) -> ChatRow | None:
    """Put the chat in `project_id` (None: out of any); the caller checked who may. None: no such chat."""
    cur = await conn.execute(
        f"UPDATE chats SET project_id = %s, updated_at = now() WHERE id = %s RETURNING {COLUMNS}",
        [project_id, chat_id],
    )
    row = await cur.fetchone()
    return ChatRow(**row) if row is not None else None


async def is_temporary(conn: Conn, chat_id: UUID) -> bool:
    cur = await conn.execute("SELECT temporary_until IS NOT NULL AS t FROM chats WHERE id = %s", [chat_id])
    row = await cur.fetchone()
    return bool(row and row["t"])


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


async def bound_agent(conn: Conn, chat_id: UUID) -> UUID | None:
    """The agent the chat is bound to (None: none, or no such chat)."""
    cur = await conn.execute("SELECT agent_id FROM chats WHERE id = %s", [chat_id])
    row = await cur.fetchone()
    return row["agent_id"] if row else None


async def review_mode(conn: Conn, chat_id: UUID) -> str | None:
    """The chat's review mode (None: its agent's; also for no such chat)."""
    cur = await conn.execute("SELECT review_mode FROM chats WHERE id = %s", [chat_id])
    row = await cur.fetchone()
    return row["review_mode"] if row else None


async def set_review_mode(conn: Conn, chat_id: UUID, user_id: UUID, mode: str | None) -> bool:
    """Set the review mode of the user's chat (None: its agent's); False when the user has no such chat."""
    cur = await conn.execute(
        "UPDATE chats SET review_mode = %s, updated_at = now() WHERE id = %s AND user_id = %s RETURNING id",
        [mode, chat_id, user_id],
    )
    return await cur.fetchone() is not None


async def set_default_title(conn: Conn, chat_id: UUID, title: str, default: str) -> bool:
    """Name a chat still called `default` (one a person named keeps its name); whether it was renamed."""
    cur = await conn.execute(
        "UPDATE chats SET title = %s WHERE id = %s AND title = %s RETURNING id", [title, chat_id, default]
    )
    return await cur.fetchone() is not None


async def delete_owned(conn: Conn, chat_id: UUID, user_id: UUID) -> bool:
    cur = await conn.execute("DELETE FROM chats WHERE id = %s AND user_id = %s RETURNING id", [chat_id, user_id])
    return await cur.fetchone() is not None


@dataclass(frozen=True)
class LockedChat:
    """A chat locked for a launch: its classification and the labels of what entered it so far."""

    classification: str
    labels: Labels
    temporary: bool = False
    """A temporary chat (0036): its runs neither recall nor save memories."""
    project_id: UUID | None = None
    """The chat's project (0041): its instructions, collection and memory scope go into the run."""


async def lock_chat(conn: Conn, chat_id: UUID, owner: UUID | None = None, *, owned: bool = False) -> LockedChat | None:
    """Lock the chat until the transaction ends (a run and its message land together): its classification and
    labels, or None when there is no such chat (`owned`: of `owner`)."""
    columns = "c.classification, c.content_tier, c.untrusted, c.temporary_until IS NOT NULL AS temporary, c.project_id"
    if owned:  # the owner's, or a chat of a project where `owner` is an editor or owner (0041)
        cur = await conn.execute(
            f"SELECT {columns} FROM chats c WHERE c.id = %s AND (c.user_id = %s OR {_PROJECT_MEMBER}) FOR UPDATE OF c",
            [chat_id, owner, owner, WRITERS],
        )
    else:
        cur = await conn.execute(f"SELECT {columns} FROM chats c WHERE c.id = %s FOR UPDATE", [chat_id])
    row = await cur.fetchone()
    if row is None:
        return None
    labels = Labels(content_tier=int(row["content_tier"]), untrusted=bool(row["untrusted"]))
    return LockedChat(str(row["classification"]), labels, bool(row["temporary"]), row["project_id"])


async def raise_labels(conn: Conn, chat_id: UUID, labels: Labels) -> None:
    """Raise the chat's labels to include `labels` (never lowers them)."""
    if labels.content_tier == 0 and not labels.untrusted:
        return
    await conn.execute(
        "UPDATE chats SET content_tier = greatest(content_tier, %s), untrusted = untrusted OR %s WHERE id = %s",
        [labels.content_tier, labels.untrusted, chat_id],
    )


async def followup_policy(conn: Conn, chat_id: UUID, user_id: UUID) -> str | None:
    """The owner's chat's policy for a message sent while one of its runs is active (None: no such chat)."""
    cur = await conn.execute("SELECT followup_policy FROM chats WHERE id = %s AND user_id = %s", [chat_id, user_id])
    row = await cur.fetchone()
    return str(row["followup_policy"]) if row else None


async def set_followup_policy(conn: Conn, chat_id: UUID, user_id: UUID, policy: str) -> bool:
    """Set it (`reject`, `enqueue` or `interrupt`); False when the user has no such chat."""
    cur = await conn.execute(
        "UPDATE chats SET followup_policy = %s WHERE id = %s AND user_id = %s RETURNING id", [policy, chat_id, user_id]
    )
    return await cur.fetchone() is not None
