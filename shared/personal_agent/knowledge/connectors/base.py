"""What every connector is: a listing of remote items, a fetch of one, and the failure of one item."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from personal_agent.knowledge.sources_store import Item, Source


@dataclass(frozen=True)
class RemoteItem:
    """One object or page as the listing shows it; `etag` (when the listing has one) lets an unchanged item be
    skipped without fetching it."""

    key: str
    etag: str | None = None


@dataclass(frozen=True)
class Fetched:
    data: bytes
    content_type: str
    filename: str
    etag: str | None = None
    last_modified: str | None = None


class ItemFailed(Exception):
    """This item could not be read (the message says why); the sync counts it failed and goes on."""


class Connector(Protocol):
    web: bool
    """Its content comes from the web: untrusted for every reader of the documents."""

    async def list_items(self, source: Source) -> list[RemoteItem]:
        """Everything the source holds now (at most `MAX_ITEMS`)."""
        ...

    async def fetch(self, source: Source, item: RemoteItem, known: Item | None) -> Fetched | None:
        """The item's content; None when it has not changed since `known` (a 304). Raises `ItemFailed`."""
        ...


MAX_ITEMS = 50_000
"""The most items a source lists (a sitemap's own limit); they sync in chunks (`source_chunks.py`)."""
