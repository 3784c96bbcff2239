"""Named knowledge collections (owners, writers, readers) and the sources that keep one in sync (an S3 prefix, a
sitemap, a page). Logic in `personal_agent.knowledge.collections` and `.sources`."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from personal_agent.api.deps import CurrentPrincipal

router = APIRouter(prefix="/api/v1/knowledge", tags=["knowledge"])

Role = Literal["owner", "writer", "reader"]
Person = str
_PEOPLE = "members of the org, by user id or e-mail"


class CollectionIn(BaseModel):
    name: str = Field(min_length=1, max_length=100)
    description: str = Field("", max_length=2000)
    owners: list[Person] = Field(default_factory=list, max_length=100, description=f"{_PEOPLE}; none: you")
    writers: list[Person] = Field(default_factory=list, max_length=500, description=f"{_PEOPLE}: may add documents")
    readers: list[Person] = Field(default_factory=list, max_length=500, description=f"{_PEOPLE}: may search it")


class CollectionPatch(BaseModel):
    name: str | None = Field(None, min_length=1, max_length=100)
    description: str | None = Field(None, max_length=2000)
    owners: list[Person] | None = Field(None, max_length=100)
    writers: list[Person] | None = Field(None, max_length=500)
    readers: list[Person] | None = Field(None, max_length=500)


class CollectionMemberOut(BaseModel):
    user_id: UUID
    email: str | None
    role: Role


class CollectionOut(BaseModel):
    id: UUID = Field(description="use it as a document's `collection`, a search's `collection`, an agent's knowledge")
    name: str
    description: str
    owners: list[str]
    writers: list[str]
    readers: list[str]
    members: list[CollectionMemberOut]
    role: Role | None = Field(description="yours (null: an org admin who is not a member)")
    created_at: datetime
    updated_at: datetime


class CollectionList(BaseModel):
    items: list[CollectionOut]


class SourceIn(BaseModel):
    kind: Literal["s3", "sitemap", "url"]
    collection: str = Field(max_length=100, description="a named collection's id or name (you write to it)")
    bucket: str | None = Field(None, max_length=63, description="s3: the bucket")
    prefix: str = Field("", max_length=1024, description="s3: the key prefix")
    url: str | None = Field(None, max_length=2000, description="sitemap: the sitemap's URL; url: the page's")
    every: str | None = Field(
        None, max_length=200, description="re-sync on this schedule: `rate(1 day)`, `cron(0 6 * * ? *)`"
    )
    allow_hosts: list[str] = Field(
        default_factory=list, max_length=20, description="web: hosts the crawl may fetch (default: the URL's)"
    )
    classification: Literal["standard", "confidential", "restricted"] = "standard"


class SyncError(BaseModel):
    item: str
    message: str


class SyncReport(BaseModel):
    at: datetime
    listed: bool = Field(description="the source could be listed (false: nothing else was tried)")
    added: int
    updated: int
    unchanged: int
    removed: int
    failed: int
    errors: list[SyncError]


class SourceOut(BaseModel):
    id: UUID
    kind: Literal["s3", "sitemap", "url"]
    collection: UUID
    bucket: str | None
    prefix: str
    url: str | None
    allow_hosts: list[str]
    every: str | None
    classification: str
    created_by: UUID
    created_at: datetime
    next_sync_at: datetime | None
    last_sync: SyncReport | None = Field(description="what the last sync did (null: none finished yet)")
    events_queue_arn: str | None = Field(
        description="s3: send the bucket's ObjectCreated/ObjectRemoved notifications here to sync as they happen"
    )


class SourceList(BaseModel):
    items: list[SourceOut]


def _source_out(source: Any) -> dict[str, Any]:
    from personal_agent.workflows.source_schedules import queue_arn

    return {
        **{k: getattr(source, k) for k in SourceOut.model_fields if hasattr(source, k)},
        "collection": source.collection_id,
        "events_queue_arn": queue_arn() if source.kind == "s3" else None,
    }


def _members(body: CollectionIn | CollectionPatch) -> Any:
    from personal_agent.knowledge.collections import Members

    if body.owners is None and body.writers is None and body.readers is None:
        return None
    return Members(body.owners or [], body.writers or [], body.readers or [])


@router.post("/collections", status_code=201, operation_id="create_collection", response_model=CollectionOut)
async def create_collection(body: CollectionIn, principal: CurrentPrincipal) -> dict[str, Any]:
    """A named collection; you are its owner unless you name others."""
    from personal_agent.knowledge import collections

    return await collections.create(
        principal.org_id, principal.user_id, body.name, body.description, _members(body), admin=principal.is_org_admin
    )


@router.get("/collections", operation_id="list_collections", response_model=CollectionList)
async def list_collections(principal: CurrentPrincipal) -> dict[str, Any]:
    """The collections you are a member of (org admins: every one)."""
    from personal_agent.knowledge import collections

    rows = await collections.list_collections(principal.org_id, principal.user_id, admin=principal.is_org_admin)
    return {"items": rows}


@router.get("/collections/{collection_id}", operation_id="get_collection", response_model=CollectionOut)
async def get_collection(collection_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    from personal_agent.knowledge import collections

    return await collections.get(principal.org_id, principal.user_id, collection_id, admin=principal.is_org_admin)


@router.patch("/collections/{collection_id}", operation_id="update_collection", response_model=CollectionOut)
async def update_collection(collection_id: UUID, body: CollectionPatch, principal: CurrentPrincipal) -> dict[str, Any]:
    """Rename, describe or replace the members (owners and org admins)."""
    from personal_agent.knowledge import collections

    return await collections.update(
        principal.org_id,
        principal.user_id,
        collection_id,
        name=body.name,
        description=body.description,
        members=_members(body),
        admin=principal.is_org_admin,
    )


@router.delete("/collections/{collection_id}", status_code=204, operation_id="delete_collection")
async def delete_collection(collection_id: UUID, principal: CurrentPrincipal) -> Response:
    """Delete the collection with its documents, their passages and files, and its sources (owners, org admins)."""
    from personal_agent.workflows.source_schedules import delete_collection

    await delete_collection(principal.org_id, principal.user_id, collection_id, admin=principal.is_org_admin)
    return Response(status_code=204)


@router.post("/sources", status_code=201, operation_id="create_source", response_model=SourceOut)
async def create_source(body: SourceIn, principal: CurrentPrincipal) -> dict[str, Any]:
    """Feed a collection you write to from an S3 prefix, a sitemap or a page; the first sync starts at once."""
    from personal_agent.knowledge.sources import SourceIn as Source
    from personal_agent.workflows.source_schedules import create_source as create

    values = {**body.model_dump(), "allow_hosts": tuple(body.allow_hosts)}
    return _source_out(await create(principal.org_id, principal.user_id, Source(**values)))


@router.get("/sources", operation_id="list_sources", response_model=SourceList)
async def list_sources(principal: CurrentPrincipal, collection: str | None = None) -> dict[str, Any]:
    """The sources of the collections you are a member of (or of one)."""
    from personal_agent.knowledge import sources

    rows = await sources.list_sources(principal.org_id, principal.user_id, collection)
    return {"items": [_source_out(s) for s in rows]}


@router.get("/sources/{source_id}", operation_id="get_source", response_model=SourceOut)
async def get_source(source_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    """A source with its last sync (when; documents added, updated, removed, failed)."""
    from personal_agent.knowledge import sources

    return _source_out(await sources.get(principal.org_id, principal.user_id, source_id))


@router.post("/sources/{source_id}/sync", status_code=202, operation_id="sync_source", response_model=SourceOut)
async def sync_source(source_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    """Sync now, in the background (`last_sync` changes when it is done)."""
    from personal_agent.knowledge import sources

    return _source_out(await sources.request_sync(principal.org_id, principal.user_id, source_id))


@router.delete("/sources/{source_id}", status_code=204, operation_id="delete_source")
async def delete_source(source_id: UUID, principal: CurrentPrincipal) -> Response:
    """Stop syncing and remove the documents the source brought in."""
    from personal_agent.workflows.source_schedules import delete_source as delete

    await delete(principal.org_id, principal.user_id, source_id)
    return Response(status_code=204)
