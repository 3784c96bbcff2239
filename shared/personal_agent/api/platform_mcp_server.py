"""The platform's MCP tools (`start_run`, `get_run`, `list_chats`, `search_knowledge`), called as the
authenticated caller.

Served stateless with JSON responses: every POST stands alone (no session between requests, no SSE stream),
which is what a buffered Lambda response behind Mangum, on any container, can answer. Imported lazily by
`api.platform_mcp` — this module loads the `mcp` SDK.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal
from uuid import UUID

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field
from starlette.types import Receive, Scope, Send

from personal_agent.agents import service as agent_service
from personal_agent.chats import message_store
from personal_agent.chats import service as chats
from personal_agent.db import org_transaction
from personal_agent.errors import AppError
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle import run_views as runs
from personal_agent.lifecycle.followup_queue import FollowUpQueued
from personal_agent.lifecycle.launch import LaunchRequest, launch_run, validate_message

# The caller of the request being served (set by `serve` before the MCP server runs, read by the tools).
_caller: ContextVar[Principal] = ContextVar("platform_mcp_caller")
# The bearer token is the defence here, not the Host header: a rebinding page cannot send one. (The dev server
# keeps its own Host guard in front of everything.)
_TRANSPORT = TransportSecuritySettings(enable_dns_rebinding_protection=False)
_TITLE_CHARS = 60


class StartedRun(BaseModel):
    run_id: str
    chat_id: str
    status: str = Field(description="queued, running, waiting, succeeded, failed, cancelled or skipped")
    mode: str
    model: str


class RunResult(BaseModel):
    run_id: str
    chat_id: str | None
    status: str = Field(description="queued, running, waiting, succeeded, failed, cancelled or skipped")
    model: str | None
    error: dict[str, Any] | None
    answer: str | None = Field(description="the run's final answer text; null until it has one")


class AgentSummary(BaseModel):
    slug: str
    name: str
    description: str
    version: int = Field(description="the published version (what runs use)")
    visibility: str


class AgentList(BaseModel):
    agents: list[AgentSummary]


async def list_agents() -> AgentList:
    """The agents you may start with `start_run(agent=...)`: your organisation's shared ones, the built-in
    `assistant` and your own."""
    principal = _caller.get()
    with _as_tool_errors():
        rows = await agent_service.list_for_user(principal.org_id, principal.user_id)
    return AgentList(
        agents=[
            AgentSummary(
                slug=row.slug,
                name=str(config.get("name", row.slug)),
                description=str(config.get("description", "")),
                version=row.published_version,
                visibility=row.visibility,
            )
            for row, config in rows
        ]
    )


class ChatSummary(BaseModel):
    id: str
    title: str
    classification: str
    updated_at: str


class ChatList(BaseModel):
    chats: list[ChatSummary] = Field(description="newest first")


@contextmanager
def _as_tool_errors() -> Iterator[None]:
    """A refusal of the platform (not found, bad input, over budget …) reaches the client as a tool error."""
    try:
        yield
    except AppError as exc:
        raise ToolError(f"{exc.code}: {exc.message}") from exc


def final_answer(messages: list[Any]) -> str | None:
    """The text of the run's last model response that has any (stored pydantic-ai messages, oldest first)."""
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("kind") != "response":
            continue
        parts = [p for p in message.get("parts", []) if isinstance(p, dict) and p.get("part_kind") == "text"]
        text = "".join(str(p.get("content") or "") for p in parts)
        if text:
            return text
    return None


async def start_run(
    message: str,
    chat_id: str | None = None,
    model: str | None = None,
    mode: Literal["inline", "durable", "auto"] = "auto",
    agent: str | None = None,
) -> StartedRun:
    """Start an agent on `message` in one of your chats (a new chat when `chat_id` is omitted); poll `get_run`.
    `agent`: the slug of one of `list_agents` (omitted: the chat's agent, else the built-in `assistant`)."""
    principal = _caller.get()
    with _as_tool_errors():
        validate_message(message)  # bad input makes no chat either
        if agent is not None:
            await agent_service.resolve_slug(principal, agent)  # an agent you cannot see makes no chat either
        if chat_id is None:
            title = message.strip().splitlines()[0][:_TITLE_CHARS] if message.strip() else None
            chat = (await chats.create_chat(principal, title)).id
        else:
            chat = _uuid(chat_id, "chat")
            await runs.ensure_own_chat(principal, chat)
        request = LaunchRequest(
            org_id=principal.org_id,
            user_id=principal.user_id,
            chat_id=chat,
            message=message,
            model=model,
            mode=mode,
            agent=agent,
        )
        try:
            spec = await launch_run(request)
        except FollowUpQueued as queued:  # the chat's run is still going: this one starts when it ends (poll it)
            run_id = str(queued.details["run_id"])
            return StartedRun(run_id=run_id, chat_id=str(chat), status="queued", mode=mode, model=model or "auto")
        view = await runs.run_view(principal, spec.run_id)
    return StartedRun(
        run_id=str(spec.run_id), chat_id=str(chat), status=view["status"], mode=spec.mode, model=spec.model
    )


async def get_run(run_id: str) -> RunResult:
    """A run's status, its error if it failed, and its final answer once it has one."""
    principal = _caller.get()
    with _as_tool_errors():
        view = await runs.run_view(principal, _uuid(run_id, "run"))
        async with org_transaction(principal.org_id) as conn:
            messages = await message_store.run_messages(conn, UUID(view["id"]))
    return RunResult(
        run_id=view["id"],
        chat_id=view["chat_id"],
        status=view["status"],
        model=view["answered_model"] or view["model"],
        error=view["error"],
        answer=final_answer(messages),
    )


async def list_chats(limit: int = 20) -> ChatList:
    """Your chats, most recently active first (at most 100)."""
    principal = _caller.get()
    with _as_tool_errors():
        page = await chats.list_chats(principal, max(1, min(limit, 100)), None, None)
    return ChatList(
        chats=[
            ChatSummary(
                id=str(row.id),
                title=row.title,
                classification=row.classification,
                updated_at=row.updated_at.isoformat(),
            )
            for row in page.items
        ]
    )


class KnowledgePassage(BaseModel):
    citation: str = Field(description="document, page or section, chunk id")
    document: str
    document_id: str
    page: int | None
    section: str | None
    chunk_id: str
    classification: str
    text: str


class KnowledgeResults(BaseModel):
    passages: list[KnowledgePassage] = Field(description="best first")


async def search_knowledge(query: str, k: int = 6, collection: str | None = None) -> KnowledgeResults:
    """Search your organisation's knowledge base (its documents and your own; `collection`: `org` or
    `personal` for one of them): passages with citations, best first (k at most 20)."""
    from personal_agent.knowledge.search import search

    principal = _caller.get()
    with _as_tool_errors():
        found = await search(principal.org_id, principal.user_id, query, collection=collection, k=max(1, min(k, 20)))
    return KnowledgeResults(
        passages=[
            KnowledgePassage(
                citation=p.citation,
                document=p.filename,
                document_id=str(p.document_id),
                page=p.page,
                section=p.section,
                chunk_id=str(p.chunk_id),
                classification=p.classification,
                text=p.text,
            )
            for p in found.passages
        ]
    )


def _uuid(value: str, what: str) -> UUID:
    try:
        return UUID(value)
    except ValueError as exc:  # a malformed id names nothing the caller can see
        raise ToolError(f"{what}_not_found: {what} not found") from exc


@functools.cache
def platform_server() -> MCPServer:
    """The MCP server and its tools, built once per process."""
    server = MCPServer(
        name="personal-agent",
        instructions="Start runs of your organisation's governed agent and read their answers.",
    )
    server.add_tool(start_run)
    server.add_tool(get_run, annotations=ToolAnnotations(read_only_hint=True))
    server.add_tool(list_chats, annotations=ToolAnnotations(read_only_hint=True))
    server.add_tool(list_agents, annotations=ToolAnnotations(read_only_hint=True))
    server.add_tool(search_knowledge, annotations=ToolAnnotations(read_only_hint=True))
    return server


async def serve(principal: Principal, path: str, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer one request to `path` as `principal` (stateless: a fresh transport, nothing kept afterwards)."""
    server = platform_server()
    app = server.streamable_http_app(
        streamable_http_path=path, stateless_http=True, json_response=True, transport_security=_TRANSPORT
    )
    manager = server.session_manager  # the one `app` was just built with (no await in between)
    token = _caller.set(principal)
    try:
        async with manager.run():
            await app(scope, receive, send)
    finally:
        _caller.reset(token)
