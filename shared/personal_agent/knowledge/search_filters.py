"""What narrows a search besides its collections (issue 36, item 5): one document, a date range (when the
document last changed) and a type (a format such as `pdf` or a content type). They become one SQL condition on a
chunk's document, added to both lists of the hybrid search, so a filtered-out chunk never competes for a rank; and
which collections a search covers (`search_scope`), named ones only for their members."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from personal_agent.db.pool import Conn
from personal_agent.errors import InvalidInput
from personal_agent.knowledge import collections, scopes
from personal_agent.knowledge.formats import CONTENT_TYPES, format_of


@dataclass(frozen=True)
class SearchFilters:
    document_id: UUID | None = None
    since: datetime | None = None
    until: datetime | None = None
    types: tuple[str, ...] = ()
    """Formats (`pdf`, `html`, …) or content types; a document matches any of them."""

    def content_types(self) -> list[str]:
        """The content types the `types` name (422 `invalid_type` for one nobody uploads)."""
        chosen: list[str] = []
        for name in self.types:
            name = name.strip().lower()
            matching = [ct for ct, fmt in CONTENT_TYPES.items() if fmt == name or ct == name]
            if not matching and format_of(name) is None:
                raise InvalidInput(f"unknown document type {name!r}", code="invalid_type")
            chosen.extend(matching)
        return chosen

    def sql(self) -> tuple[str, dict[str, Any]]:
        """` AND …` on a chunk's `document_id` (empty when nothing is filtered) and its parameters."""
        if self.since is not None and self.until is not None and self.since > self.until:
            raise InvalidInput("`since` is after `until`", code="invalid_date_range")
        conditions: list[str] = []
        params: dict[str, Any] = {}
        if self.document_id is not None:
            conditions.append("fd.id = %(f_document)s")
            params["f_document"] = self.document_id
        if self.since is not None:
            conditions.append("fd.updated_at >= %(f_since)s")
            params["f_since"] = self.since
        if self.until is not None:
            conditions.append("fd.updated_at <= %(f_until)s")
            params["f_until"] = self.until
        if self.types:
            conditions.append("fd.content_type = ANY(%(f_types)s)")
            params["f_types"] = self.content_types()
        if not conditions:
            return "", {}
        where = " AND ".join(conditions)
        return f" AND document_id IN (SELECT fd.id FROM knowledge_documents fd WHERE {where})", params


async def search_scope(
    conn: Conn, user_id: UUID | None, collection: str | None, entries: tuple[str, ...] | None, chat_id: UUID | None
) -> tuple[str, ...]:
    """The collections a search covers: the one asked for (404 for a named one the caller is not in); else an
    agent's `entries` (`org`, `personal`, collection ids or names; those the user is not in are left out) with the
    chat's files; else the org's, the caller's own, the chat's and every named collection the caller is in."""
    if collection is not None:
        chosen = scopes.search_collections(collection, chat_id)
        if scopes.is_named(collection):
            if user_id is None:
                raise collections.not_found()
            await collections.check_member(conn, UUID(collection), user_id, write=False)
        return chosen
    chat = (scopes.chat_collection(chat_id),) if chat_id is not None else ()
    if entries:
        fixed = tuple(e for e in entries if e in (scopes.ORG, scopes.PERSONAL))
        named = [e for e in entries if e not in (scopes.ORG, scopes.PERSONAL)]
        return (*fixed, *chat, *(await collections.readable(conn, user_id, tuple(named)) if named else ()))
    return (scopes.ORG, scopes.PERSONAL, *chat, *await collections.readable(conn, user_id, None))
