"""Collections: `org` (the whole org), `personal` (one user's own), `chat:<chat_id>` (files attached in one
chat, searchable only in that chat) and a named collection's id (its members', `knowledge/collections.py`).
Who may see what is enforced in SQL (RLS, migration 0015); this module names
the collections a search covers."""

from __future__ import annotations

import re
from uuid import UUID

from personal_agent.errors import InvalidInput

ORG = "org"
PERSONAL = "personal"
CHAT_PREFIX = "chat:"
_CHAT = re.compile(r"^chat:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_NAMED = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def is_named(collection: str) -> bool:
    """A named collection's id (not `org`, `personal` nor a chat's)."""
    return bool(_NAMED.match(collection))


def chat_collection(chat_id: UUID) -> str:
    """The collection of the documents attached in one chat."""
    return f"{CHAT_PREFIX}{chat_id}"


def validate(collection: str) -> str:
    """The collection, or 422 `invalid_collection`."""
    if collection in (ORG, PERSONAL) or _CHAT.match(collection) or _NAMED.match(collection):
        return collection
    raise InvalidInput(
        "collection is `org`, `personal`, `chat:<chat id>` or a collection's id", code="invalid_collection"
    )


def owner_of(collection: str, user_id: UUID) -> UUID | None:
    """Who owns a document of the collection: nobody for the org's or a named one's (its members read it), the
    uploader for a personal or chat one."""
    return None if collection == ORG or is_named(collection) else user_id


def search_collections(requested: str | None, chat_id: UUID | None) -> tuple[str, ...]:
    """The collections a search covers: the one asked for, or the org's and the caller's own; inside a chat (a
    run's search) also that chat's, and never another chat's."""
    if requested is not None:
        requested = validate(requested)
        if chat_id is not None and requested.startswith(CHAT_PREFIX) and requested != chat_collection(chat_id):
            raise InvalidInput("a chat's files are searchable only in that chat", code="invalid_collection")
        return (requested,)
    own = (ORG, PERSONAL)
    return (*own, chat_collection(chat_id)) if chat_id is not None else own
