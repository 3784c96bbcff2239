"""The knowledge base API: register a document (a presigned S3 upload back), list, read its status, delete,
re-index, search, and the org's embedding model. Logic in `personal_agent.knowledge`."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, Field

from personal_agent.api.deps import CurrentPrincipal, OrgAdmin
from personal_agent.errors import InvalidInput
from personal_agent.knowledge import document_download, documents
from personal_agent.knowledge.formats import MAX_UPLOAD_BYTES

router = APIRouter(prefix="/api/v1/knowledge", tags=["knowledge"])

Classification = Literal["standard", "confidential", "restricted"]
Status = Literal["uploading", "processing", "ready", "failed"]


class DocumentIn(BaseModel):
    filename: str = Field(min_length=1, max_length=255)
    content_type: str = Field(
        max_length=200,
        description="application/pdf, …wordprocessingml.document (DOCX), text/html, text/markdown, text/plain",
    )
    size: int = Field(ge=1, description=f"bytes; at most {MAX_UPLOAD_BYTES} (25 MB)")
    collection: str = Field("org", description="`org` (everyone in the org) or `personal` (only you)")
    classification: Classification = Field(
        "standard", description="above the org's default (its tier floor) only for org admins, in the `org` collection"
    )
    trusted: bool = Field(False, description="org admins: its passages do not count as untrusted content")


class DocumentPatch(BaseModel):
    trusted: bool = Field(description="org admins: its passages do not count as untrusted content for other readers")


class DocumentError(BaseModel):
    code: str
    message: str


class DocumentOut(BaseModel):
    id: UUID
    filename: str
    content_type: str
    size: int
    collection: str
    classification: Classification
    trusted: bool = Field(description="an org admin vouched for its text")
    author_id: UUID = Field(description="who registered it (the only one besides org admins who may change it)")
    status: Status
    error: DocumentError | None = Field(description="why it failed (`failed` only)")
    pages: int | None
    chunk_count: int
    created_at: datetime
    updated_at: datetime


class Upload(BaseModel):
    url: str = Field(description="POST the file here as multipart/form-data: every field, then `file` last")
    fields: dict[str, str]
    expires_in: int


class DocumentCreated(BaseModel):
    document: DocumentOut
    upload: Upload


class DocumentList(BaseModel):
    items: list[DocumentOut]


class DocumentDownload(BaseModel):
    url: str = Field(description="a presigned GET of the file, valid `expires_in` seconds; no bearer token")
    expires_in: int
    content_type: str = Field(description="the `Content-Type` the URL answers with")
    disposition: Literal["inline", "attachment"] = Field(
        description="`inline` for a PDF (open it with `#page=N` for a cited page) or a PNG, JPEG, GIF or WebP image;"
        " anything else is served as a download"
    )
    filename: str


class PassageOut(BaseModel):
    chunk_id: UUID
    document_id: UUID
    filename: str
    collection: str
    classification: Classification
    page: int | None
    section: str | None
    text: str
    score: float = Field(description="reciprocal rank fusion of the vector and full-text ranks")
    citation: str


class ChunkOut(BaseModel):
    chunk_id: UUID
    document_id: UUID
    filename: str
    collection: str
    classification: Classification
    seq: int = Field(description="the passage's place in its document, from 0")
    page: int | None
    section: str | None
    text: str
    citation: str


class SearchOut(BaseModel):
    items: list[PassageOut]
    embedding_model: str


class EmbeddingSettingsIn(BaseModel):
    embedding_model: str = Field(max_length=200)


class EmbeddingModelOut(BaseModel):
    id: str
    label: str
    dim: int
    tier: int


class EmbeddingSettingsOut(BaseModel):
    embedding_model: str
    available: list[EmbeddingModelOut]
    reembedding: int = Field(0, description="documents queued for re-embedding by this change")


def _out(row: dict[str, Any]) -> dict[str, Any]:
    error = {"code": row["error_code"], "message": row["error_message"]} if row.get("error_code") else None
    return {**row, "error": error, "author_id": row["created_by"]}


@router.post("/documents", status_code=201, operation_id="create_document", response_model=DocumentCreated)
async def create_document(body: DocumentIn, principal: CurrentPrincipal) -> dict[str, Any]:
    """Register a document; upload its file with the returned presigned POST (S3 refuses another type or size)."""
    if body.collection.startswith("chat:"):  # chat files come with a message (attachments), not from here
        raise InvalidInput("collection is `org` or `personal`", code="invalid_collection")
    created = await documents.create_document(
        principal.org_id,
        principal.user_id,
        collection=body.collection,
        filename=body.filename,
        content_type=body.content_type,
        size=body.size,
        classification=body.classification,
        admin=principal.is_org_admin,
        trusted=body.trusted,
    )
    return {"document": _out(created["document"]), "upload": created["upload"]}


@router.get("/documents", operation_id="list_documents", response_model=DocumentList)
async def list_documents(principal: CurrentPrincipal, collection: str | None = None) -> dict[str, Any]:
    """The org's documents and your own, newest first (or one collection's)."""
    rows = await documents.list_documents(principal.org_id, principal.user_id, collection)
    return {"items": [_out(r) for r in rows]}


@router.get("/documents/{document_id}", operation_id="get_document", response_model=DocumentOut)
async def get_document(document_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    """A document's status (`document_status` events on your feed announce every change)."""
    return _out(await documents.get_document(principal.org_id, principal.user_id, document_id))


@router.get(
    "/documents/{document_id}/download",
    operation_id="download_document",
    response_model=DocumentDownload,
    responses={
        404: {"description": "`document_not_found`: no such document, or not one you may search"},
        409: {"description": "`document_not_uploaded`: its upload has not finished"},
        410: {"description": "`document_gone`: the file is no longer stored"},
    },
)
async def download_document(document_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    """Where whoever may search a document fetches its file (a citation's source): a URL on the documents bucket,
    not this API."""
    return await document_download.download(principal.org_id, principal.user_id, document_id)


@router.delete("/documents/{document_id}", status_code=204, operation_id="delete_document")
async def delete_document(document_id: UUID, principal: CurrentPrincipal) -> Response:
    """Remove the document, every chunk of it and its file (its author or an org admin)."""
    await documents.delete_document(principal.org_id, principal.user_id, document_id, admin=principal.is_org_admin)
    return Response(status_code=204)


@router.post(
    "/documents/{document_id}/reindex", status_code=202, operation_id="reindex_document", response_model=DocumentOut
)
async def reindex_document(document_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    """Parse, chunk and embed the stored file again, in the background (its author or an org admin)."""
    return _out(
        await documents.reindex_document(principal.org_id, principal.user_id, document_id, admin=principal.is_org_admin)
    )


@router.patch("/documents/{document_id}", operation_id="update_document", response_model=DocumentOut)
async def update_document(document_id: UUID, body: DocumentPatch, principal: OrgAdmin) -> dict[str, Any]:
    """Mark a document trusted or not (org admins)."""
    return _out(await documents.set_trusted(principal.org_id, principal.user_id, document_id, body.trusted))


@router.get("/search", operation_id="search_knowledge", response_model=SearchOut)
async def search_knowledge(
    principal: CurrentPrincipal,
    q: str = Query(min_length=1, max_length=1000),
    collection: str | None = Query(
        None, description="`org`, `personal`, `chat:<chat id>` or a collection's id; default every one you may read"
    ),
    k: int = Query(8, ge=1, le=50),
    document_id: Annotated[UUID | None, Query(description="only this document's passages")] = None,
    since: Annotated[datetime | None, Query(description="only documents changed at or after this time")] = None,
    until: Annotated[datetime | None, Query(description="only documents changed at or before this time")] = None,
    type: Annotated[
        list[str] | None, Query(description="only these formats (`pdf`, `html`, …) or content types")
    ] = None,
) -> dict[str, Any]:
    """Hybrid search (vector + full text, reciprocal rank fusion) over what you may see."""
    from personal_agent.knowledge.search import search
    from personal_agent.knowledge.search_filters import SearchFilters

    filters = SearchFilters(document_id, since, until, tuple((type or [])[:20]))
    result = await search(principal.org_id, principal.user_id, q, collection=collection, k=k, filters=filters)
    return {"items": [p.as_dict() for p in result.passages], "embedding_model": result.embedding_model}


@router.get("/chunks/{chunk_id}", operation_id="get_knowledge_chunk", response_model=ChunkOut)
async def get_knowledge_chunk(chunk_id: UUID, principal: CurrentPrincipal) -> dict[str, Any]:
    """One passage by its chunk id (a citation's source); 404 when it is not yours to see."""
    from personal_agent.knowledge.passage_lookup import get_passage

    return await get_passage(principal.org_id, principal.user_id, chunk_id)


@router.get("/settings", operation_id="get_knowledge_settings", response_model=EmbeddingSettingsOut)
async def get_knowledge_settings(principal: CurrentPrincipal) -> dict[str, Any]:
    from personal_agent.knowledge.model_choice import describe

    return await describe(principal.org_id)


@router.put("/settings", operation_id="update_knowledge_settings", response_model=EmbeddingSettingsOut)
async def update_knowledge_settings(body: EmbeddingSettingsIn, principal: OrgAdmin) -> dict[str, Any]:
    """Choose the org's embedding model (org admins); every document is re-embedded in the background."""
    from personal_agent.knowledge.model_choice import choose_model, describe

    _, queued = await choose_model(principal.org_id, body.embedding_model)
    return {**await describe(principal.org_id), "reembedding": queued}
