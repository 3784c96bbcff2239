"""Chats: create, list (newest first, paginated), get, rename, delete, and the transcript."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from personal_agent.agents import service as agent_service
from personal_agent.api.deps import CurrentPrincipal
from personal_agent.chats import service
from personal_agent.chats.store import ChatRow
from personal_agent.governance.tiers import classification_tier
from personal_agent.lifecycle import transcript_items
from personal_agent.projects import service as project_service

router = APIRouter(prefix="/api/v1/chats", tags=["chats"])


Classification = Literal["standard", "confidential", "restricted"]


class ChatCreate(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"title": "Trip plans"}, {"classification": "confidential"}]}
    )

    title: str | None = Field(None, max_length=200)
    classification: Classification = "standard"
    agent: str | None = Field(
        None,
        pattern=r"^[a-z0-9-]{2,64}$",
        description="the slug of the agent the chat is bound to (its runs use its published version at each launch);"
        " the chat's classification is at least the agent's floor",
    )
    temporary: bool = Field(
        False,
        description="a temporary chat: never listed, not used for memories, deleted with its runs' content after the"
        " org's `temporary_hours` (default 24)",
    )


class ChatRename(BaseModel):
    title: str | None = Field(None, min_length=1, max_length=200)
    classification: Classification | None = None
    project_id: UUID | None = Field(
        None,
        description="move the chat into this project (null: out of its project); the chat's owner or an editor of"
        " its project may, into a project where the caller is an editor or owner (409 `chat_restricted` for a"
        " restricted chat)",
    )


class Chat(BaseModel):
    id: UUID
    title: str
    classification: Classification
    created_at: datetime
    updated_at: datetime
    agent_id: UUID | None = Field(None, description="the agent the chat is bound to (null: the built-in assistant)")
    project_id: UUID | None = Field(None, description="the project the chat is in (null: none)")
    temporary_until: datetime | None = Field(
        None, description="a temporary chat (never listed, not remembered): when it is deleted; null: not temporary"
    )
    snippet: str | None = Field(None, description="with `q`: where the chat's latest matching message matches")
    can_post: bool = Field(
        True,
        description="whether the caller may start runs in it (send, edit, regenerate): its owner and a project's"
        " editors and owners; false for a viewer of its project, who only reads it (a run would be 403"
        " `project_read_only`)",
    )


class ChatPage(BaseModel):
    items: list[Chat]
    next_cursor: str | None


@router.post("", status_code=201, operation_id="create_chat", response_model=Chat)
async def create_chat(body: ChatCreate, principal: CurrentPrincipal) -> ChatRow:
    if body.agent is None:
        return await service.create_chat(principal, body.title, body.classification, temporary=body.temporary)
    agent = await agent_service.resolve_slug(principal, body.agent)
    floor = agent.config.classification
    classification = max(body.classification, floor, key=classification_tier)
    return await service.create_chat(principal, body.title, classification, agent.id, temporary=body.temporary)


@router.get("", operation_id="list_chats", response_model=ChatPage)
async def list_chats(
    principal: CurrentPrincipal,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
    q: Annotated[
        str | None, Query(max_length=200, description="words in the title or, by full-text search, in the messages")
    ] = None,
    project_id: Annotated[
        UUID | None,
        Query(description="only this project's chats: every member's they may read (404 `project_not_found`)"),
    ] = None,
) -> service.ChatList:
    if project_id is not None:
        await project_service.check_reader(principal, project_id)
    return await service.list_chats(principal, limit, cursor, q, project_id)


@router.get("/{chat_id}", operation_id="get_chat", response_model=Chat)
async def get_chat(chat_id: UUID, principal: CurrentPrincipal) -> ChatRow:
    """The caller's chat, or one of a project they are a member of."""
    return await service.get_chat(principal, chat_id)


@router.patch("/{chat_id}", operation_id="rename_chat", response_model=Chat)
async def rename_chat(chat_id: UUID, body: ChatRename, principal: CurrentPrincipal) -> ChatRow:
    """Rename it or change its classification (its owner), and/or move it into or out of a project."""
    row = None
    if "project_id" in body.model_fields_set:
        row = await project_service.move_chat(principal, chat_id, body.project_id)
    if row is None or body.title is not None or body.classification is not None:
        row = await service.update_chat(principal, chat_id, body.title, body.classification)
    return row


@router.delete("/{chat_id}", status_code=204, operation_id="delete_chat")
async def delete_chat(chat_id: UUID, principal: CurrentPrincipal) -> Response:
    await service.delete_chat(principal, chat_id)
    return Response(status_code=204)


class TranscriptApproval(BaseModel):
    id: str
    tool: str
    args: Any = Field(description="the arguments the person was asked about")
    status: Literal["pending", "approved", "denied", "expired"]
    decided_by: str | None = Field(description="the name of who decided (null: nobody did, or a policy did)")
    reason: str | None = Field(description="the reason given with the decision, or why it ended without one")
    decided_at: str | None
    expires_at: str


class TranscriptError(BaseModel):
    code: str
    message: str


class TranscriptSubagent(BaseModel):
    run_id: str
    task: str = Field(description="what the `delegate` call asked of it")
    preset: str | None
    status: str = Field(description="queued, running, waiting, succeeded, failed, cancelled or skipped")
    error: TranscriptError | None
    cost_usd: float = Field(description="USD so far, its own sub-agents included (unpriced usage counts 0)")
    events_url: str
    approvals: list[TranscriptApproval] = Field(description="the approvals its own tool calls asked for")


class TranscriptQuestion(BaseModel):
    id: str
    question: str
    choices: list[str] | None
    form_schema: dict[str, Any] | None = Field(alias="schema", description="the JSON Schema the answer fits")
    default: Any = Field(description="the answer taken when nobody answered in time")
    status: Literal["pending", "answered", "expired"]
    answer: Any = Field(description="the answer the run went on with (null: none yet, or none at all)")
    answered_at: str | None
    expires_at: str

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)


class TranscriptToolCall(BaseModel):
    id: str
    name: str
    args: Any = Field(description="the call's arguments (the start of their JSON as text when `truncated`)")
    approval: TranscriptApproval | None = Field(None, description="the person's decision this call waited for")
    question: TranscriptQuestion | None = Field(None, description="an `ask_user` call's question and its answer")
    subagent: TranscriptSubagent | None = Field(None, description="the sub-agent a `delegate` call started")


class TranscriptAttachment(BaseModel):
    id: str
    name: str
    size: int
    content_type: str
    kind: Literal["image", "document"]


class TranscriptItem(BaseModel):
    id: str = Field(description="`<message>:<part>`; also the cursor for the items before it")
    role: Literal["user", "assistant", "tool"]
    run_id: str | None
    created_at: str
    text: str | None = None
    tool_calls: list[TranscriptToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    content: str | None = None
    outcome: Literal["done", "failed", "denied", "interrupted"] | None = Field(
        None, description="a tool result's outcome: it ran, it failed, a person or policy denied it, it was cut off"
    )
    truncated: bool | None = Field(
        None, description="sent (true) only for a part longer than 256 Ki characters, cut there"
    )
    attachments: list[TranscriptAttachment] | None = Field(None, description="the files a user turn carried")
    message_id: int | None = Field(None, description="the stored message the item is part of")
    parent_id: int | None = Field(None, description="the message it continues from (null: a first turn)")
    sibling_ids: list[int] | None = Field(
        None, description="the messages continuing from the same parent, this one included, oldest first (branches)"
    )


class TranscriptRun(BaseModel):
    id: str
    status: str = Field(description="queued, running, waiting, succeeded, failed, cancelled or skipped")
    error: TranscriptError | None = Field(description="why it failed")


class TranscriptQueued(BaseModel):
    id: str = Field(description="the follow-up's id (`DELETE /chats/{id}/followups/{followup_id}` cancels it)")
    run_id: str = Field(description="the run it starts as")
    message: str
    created_at: str


class Transcript(BaseModel):
    items: list[TranscriptItem] = Field(description="oldest first within the page")
    next_cursor: str | None = Field(description="the older items before this page; null at the chat's start")
    leaf_id: int | None = Field(None, description="the newest message of the branch shown (null: an empty chat)")
    summarised_upto: int | None = Field(
        None,
        description="the model no longer reads this branch's turns up to this message whole: they are summarised",
    )
    runs: list[TranscriptRun] | None = Field(None, description="how each run of the page's items ended (or goes)")
    queued: list[TranscriptQueued] | None = Field(
        None, description="the newest page only: messages queued behind the chat's active run, in the order they start"
    )


@router.get(
    "/{chat_id}/messages",
    operation_id="chat_transcript",
    response_model=Transcript,
    response_model_exclude_unset=True,
)
async def chat_transcript(
    chat_id: UUID,
    principal: CurrentPrincipal,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
    cursor: Annotated[str | None, Query(max_length=40, description="`next_cursor` of the newer page")] = None,
    leaf: Annotated[
        int | None,
        Query(
            ge=1,
            description="a message id: show the branch through it, down to its newest message (404"
            " `message_not_found`); omitted: the chat's latest branch. Pass the same `leaf` with `cursor`",
        ),
    ] = None,
) -> dict[str, Any]:
    """One branch of the transcript, newest page first (each page stays well under Lambda's 6 MB limit), with the
    approvals, sub-agents and run outcomes its live view showed."""
    return await transcript_items.transcript(principal, chat_id, limit, cursor, leaf)
