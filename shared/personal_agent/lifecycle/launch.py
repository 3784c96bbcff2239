"""The one chokepoint that starts a run: validate, build the frozen RunSpec, store it, hand it to a driver."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal
from uuid import UUID

from personal_agent import otel_export
from personal_agent.attachments import service as attachments
from personal_agent.attachments.vision import plan_for_images
from personal_agent.chats import message_store
from personal_agent.chats import store as chat_store
from personal_agent.chats.branches import Parent, resolve_parent
from personal_agent.db import org_transaction
from personal_agent.db.pool import Conn
from personal_agent.errors import AppError, Forbidden, InvalidInput, NotFound, ServiceUnavailable
from personal_agent.governance.budgets import check_launch_budget
from personal_agent.governance.candidates import merge_candidates, read_org_models, read_org_settings
from personal_agent.governance.selection import ModelPlan, plan_models
from personal_agent.governance.tiers import classification_tier, routing_tier
from personal_agent.identity.members import check_member_active
from personal_agent.lifecycle import agent_launch, followup_queue, run_policies
from personal_agent.lifecycle.bus_gate import require_bus
from personal_agent.lifecycle.drivers import drives_here, ensure_driver_available, start_run
from personal_agent.lifecycle.launch_snapshot import choose_mode, model_ref, snapshot_tools, tier_gate
from personal_agent.lifecycle.lease import Leased
from personal_agent.lifecycle.stored_runs import store_prepared as store_prepared  # the chokepoint's one store
from personal_agent.mcp_servers import service as mcp_service
from personal_agent.memories import recall as memory_recall
from personal_agent.projects import run_context as project_context
from personal_agent.runs import store
from personal_agent.sandbox import policy as sandbox_policy
from personal_agent.settings import get_settings
from personal_agent.spec.labels import Labels, launch_labels
from personal_agent.spec.run_spec import (
    MAX_MESSAGE_CHARS,
    ClientTool,
    ModelSettings,
    RequestedMode,
    RunSpec,
    TriggerSource,
)
from personal_agent.tools.registry import get_tool

DEFAULT_INSTRUCTIONS = "You are Personal Agent, a helpful assistant. Answer clearly and concisely in Markdown. \
Use tools when they help; never invent tool results."


@dataclass(frozen=True)
class LaunchRequest:
    org_id: UUID
    user_id: UUID | None
    chat_id: UUID
    message: str
    model: str | None = None
    mode: RequestedMode = "auto"
    trigger_source: TriggerSource = "chat"
    tools: tuple[str, ...] | None = None
    instructions: str | None = None
    approval_timeout_seconds: int | None = None
    history: Literal["chat", "none"] = "chat"
    run_id: UUID | None = None
    approval_policy: Literal["wait", "deny"] = "wait"
    attachments: tuple[UUID, ...] = ()
    """Files the user attached to the message (`POST /chats/{id}/attachments`); images need a vision model."""
    parent_message_id: Parent = "latest"
    """The chat message the run continues from (`chats.branches`): `latest`, an answer's id, or None (a new first
    turn: editing the chat's first message)."""
    regenerate: bool = False
    """Answer the user message `parent_message_id` again: no new user turn, the new answer a sibling of the old."""
    owned_chat: bool = False
    """The chat must be `user_id`'s (404 `chat_not_found` otherwise), checked in the launch's transaction."""
    recall_memories: bool = True
    """The run recalls its user's memories (triggered runs only when their workflow's owner opted in)."""
    agent: str | None = None  # the agent's slug (`lifecycle.agent_launch`); None: the chat's, else the built-in one
    turns: tuple[dict[str, Any], ...] = ()
    """The run's own messages as a protocol adapter was given them (`/v1`: the request's conversation, pydantic-ai
    JSON), stored in place of a user turn made from `message`; the last is a request (a user turn or tool results)."""
    entered: Labels = Labels()
    """The labels of what the caller's messages bring (a client's tool results are untrusted)."""
    vision: bool = False
    """The turns carry images: only models that see."""
    client_tools: tuple[ClientTool, ...] = ()
    model_settings: ModelSettings = ModelSettings()
    output_schema: dict[str, Any] | None = None
    echo: dict[str, Any] | None = None
    followup_id: UUID | None = None
    """The queued follow-up this launch starts (`lifecycle/followup_queue.py`): it is marked started with the run."""


def user_request_json(message: str) -> dict[str, Any]:
    """The user's turn as a pydantic-ai `ModelRequest` in JSON, built without importing pydantic-ai (the API
    function does not ship it)."""
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    return {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": message, "timestamp": now}]}


def validate_message(message: str) -> str:
    text = message.strip()
    if not text:
        raise InvalidInput("the message is empty", code="empty_message")
    if len(message) > MAX_MESSAGE_CHARS:
        raise AppError(
            f"the message is longer than {MAX_MESSAGE_CHARS} characters",
            code="message_too_long",
            status=413,
            limit=MAX_MESSAGE_CHARS,
        )
    return message


async def _lock_chat(conn: Conn, request: LaunchRequest) -> chat_store.LockedChat:
    """The chat's classification and labels, the chat locked until the launch commits (its run and message land
    together, and no second run starts beside an active one: the chat's follow-up policy decides)."""
    chat = await chat_store.lock_chat(conn, request.chat_id, request.user_id, owned=request.owned_chat)
    if chat is None:
        if request.owned_chat and await chat_store.get_visible(conn, request.chat_id, request.user_id):
            raise Forbidden("viewers of a project only read its chats", code="project_read_only")
        raise NotFound("chat not found", code="chat_not_found")
    latest = request.parent_message_id == "latest" and not request.regenerate
    await followup_queue.claim_turn(conn, request.chat_id, request.followup_id, latest, request.trigger_source)
    return chat


async def _labels(conn: Conn, request: LaunchRequest, chat: chat_store.LockedChat, plan: ModelPlan) -> Labels:
    """The run's labels at launch (`spec/labels.py`): the chat's, its classification's and the trigger's, raised by
    the memories it may recall (those every model of its chain passes, of the chat's project if it is in one)."""
    entered = []
    if request.user_id is not None and request.recall_memories:
        floor = min(m.tier for m in (plan.primary, *plan.fallbacks))
        tier = await memory_recall.launch_tier(conn, request.user_id, floor, chat.project_id)
        entered.append(Labels(content_tier=tier))
    entered.append(request.entered)
    return launch_labels(chat.labels, classification_tier(chat.classification), request.trigger_source, entered)


async def _user_default_model(conn: Conn, request: LaunchRequest) -> str | None:
    if request.user_id is None:
        return None
    cur = await conn.execute("SELECT default_model FROM user_settings WHERE user_id = %s", [request.user_id])
    row = await cur.fetchone()
    return row["default_model"] if row else None


async def _plan(
    conn: Conn, request: LaunchRequest, tier: int, org: dict[str, Any]
) -> tuple[ModelPlan, list[dict[str, Any]]]:
    """The run's models (the one asked for, else the user's, the org's or the deployment's default) and the files
    of its message: with an image, only models that see (the `vision` tag)."""
    attached = await attachments.for_message(conn, request.user_id, request.chat_id, request.attachments)
    requested = request.model or await _user_default_model(conn, request) or org["default_model"]
    requested = requested or get_settings().default_model
    candidates = merge_candidates(await read_org_models(conn))
    if request.vision or any(a["kind"] == "image" for a in attached):  # vision models only, then plan_models
        return plan_for_images(candidates, requested, tier, org["routing_model"]), attached
    return plan_models(candidates, requested, tier, org["routing_model"]), attached


async def launch_run(request: LaunchRequest) -> RunSpec:
    """Store the run (and the user's message) and start it on its driver. Nothing is stored on bad input,
    over budget, or when no model may receive the chat's data. A message to a chat whose run is active follows
    the chat's policy (`lifecycle/followup_queue.py`): 409, or queued (`FollowUpQueued`, 202)."""
    with otel_export.launch_scope():  # a durable run's trace begins in `_launch`; its last step ends it
        return await _launch_or_queue(request)


async def _launch_or_queue(request: LaunchRequest) -> RunSpec:
    try:
        return await _launch(request)
    except followup_queue.ChatBusy:
        if request.followup_id is not None or (request.trigger_source == "openai_api" and request.mode != "durable"):
            raise  # a synchronous `/v1` response cannot wait behind a run of any length: 409 (docs/openai.md)
        await followup_queue.enqueue(request)  # raises FollowUpQueued unless the chat became free meanwhile
    return await _launch(request)


async def _launch(request: LaunchRequest) -> RunSpec:
    if request.regenerate and (request.message.strip() or request.attachments):
        raise InvalidInput("a regenerate sends no message of its own", code="regenerate_with_message")
    message = request.message if request.regenerate or request.turns else validate_message(request.message)
    request, agent = await agent_launch.with_agent(request)  # its instructions, model, tools unless the request's own
    remote = tuple(n for n in request.tools or () if get_tool(n) is None)  # not first-party: an MCP tool
    local = tuple(n for n in request.tools if n not in remote) if request.tools is not None else None
    tools = agent_launch.without_memory_tool(snapshot_tools(local), agent)
    await require_bus()  # a run nobody could hear is refused (503), not accepted and paused at its first event
    mcp_tools, mcp_servers = await mcp_service.snapshot(request.org_id, remote)
    tools, mcp_tools = agent_launch.stricter(tools, agent), agent_launch.stricter(mcp_tools, agent)
    mode = choose_mode(request.mode, tools + mcp_tools, request.trigger_source)
    ensure_driver_available(mode)
    otel_export.begin_run_trace(mode)  # a durable run's steps are other processes: one trace, through its input
    # One transaction for the checks, the reads the run is built from, the run and the user's turn (nothing is
    # stored when a check refuses). Only MCP tool discovery (it may call the servers) runs before, in its own.
    async with org_transaction(request.org_id) as conn:
        if request.trigger_source in ("webhook", "schedule") and request.user_id is not None:
            await check_member_active(conn, request.user_id)  # an offboarded owner's workflows stop too
        chat = await _lock_chat(conn, request)
        if chat.temporary:  # a temporary chat is not used for memories: none recalled, none saved (issue 38)
            request = replace(request, recall_memories=False)
            tools = tuple(t for t in tools if t.name != agent_launch.MEMORY_TOOL)
        project = await project_context.for_launch(conn, chat.project_id)
        await check_launch_budget(conn, request.user_id)
        tools = await sandbox_policy.offered_tools(conn, request.org_id, tools, local, agent.config.tools)
        org = await read_org_settings(conn, request.org_id)
        tiers = [chat.labels.content_tier, agent_launch.floor(agent), *(t.required_tier for t in tools)]
        tier = routing_tier(chat.classification, org["tier_floor"], [*tiers, request.entered.content_tier])
        plan, attached = await _plan(conn, request, tier, org)
        labels = await _labels(conn, request, chat, plan)
        tier = max(tier, labels.content_tier)  # recallable memories pass every model of the plan
        mcp_tools, gated = tier_gate(mcp_tools, mcp_servers, tier)
        await chat_store.raise_labels(conn, request.chat_id, labels)
        spec = RunSpec(
            run_id=request.run_id or uuid.uuid4(),
            org_id=request.org_id,
            user_id=request.user_id,
            chat_id=request.chat_id,
            model=plan.primary.id,
            model_chain=tuple(model_ref(m) for m in (plan.primary, *plan.fallbacks)),
            router_model=model_ref(plan.router) if plan.router else None,
            routing_tier=tier,
            classification=chat.classification,
            labels=labels,
            confidence_threshold=float(org["confidence_threshold"]),
            trace_content=bool(org["trace_content"]),
            instructions=project_context.instructions(request.instructions or DEFAULT_INSTRUCTIONS, project),
            project=project_context.ref(project),
            tools=tools + mcp_tools,
            mcp_servers=tuple(s for s in mcp_servers if any(t.server_id == s.id for t in mcp_tools)),
            gated_tools=gated,
            mode=mode,
            agent=agent_launch.ref(agent),
            tool_policy=await run_policies.launch_policy(conn, request.org_id, request.user_id, request.chat_id, agent),
            **_as_asked(request),
        )
        spec, leased = await _store_turn(conn, request, spec, attached, message)
    await _start_or_fail(spec, leased)
    return spec


def _as_asked(request: LaunchRequest) -> dict[str, Any]:
    """The RunSpec's fields the request sets as it is (its trigger, waits, history, the caller's tools and settings)."""
    return {
        "trigger_source": request.trigger_source,
        "approval_timeout_seconds": request.approval_timeout_seconds or get_settings().approval_timeout_seconds,
        "approval_policy": request.approval_policy,
        "history": request.history,
        "recall_memories": request.recall_memories,
        "input_messages": len(request.turns) if request.turns else int(not request.regenerate),
        "client_tools": request.client_tools,
        "model_settings": request.model_settings,
        "output_schema": request.output_schema,
        "echo": request.echo,
    }


async def _store_turn(
    conn: Conn, request: LaunchRequest, spec: RunSpec, attached: list[dict[str, Any]], message: str
) -> tuple[RunSpec, Leased | None]:
    """Store the run and the user's turn (none for a regenerate) on its branch; one driven here is stored leased."""
    parent = await resolve_parent(conn, request.chat_id, request.parent_message_id, request.regenerate)
    spec = spec.model_copy(update={"parent_message_id": parent, "regenerate": request.regenerate})
    owner = drives_here(spec)
    row = await store_prepared(conn, spec, owner=owner)
    leased = Leased(owner, row) if owner else None
    if request.turns:
        await message_store.append_messages(conn, spec.org_id, spec.chat_id, spec.run_id, list(request.turns), parent)
    elif not request.regenerate:
        turn = await attachments.bind(conn, attached, spec.run_id, user_request_json(message))
        await message_store.append_messages(conn, spec.org_id, spec.chat_id, spec.run_id, [turn], parent)
    return spec, leased


async def _start_or_fail(spec: RunSpec, leased: Leased | None = None) -> None:
    """Hand the run to its driver; when that fails the run ends failed (never queued forever) and the caller gets
    a 503 to retry."""
    try:
        await start_run(spec, leased)
    except Exception as exc:  # Step Functions or Lambda unreachable
        async with org_transaction(spec.org_id) as conn:
            await store.finish_run(
                conn,
                spec.run_id,
                "failed",
                {"code": "driver_unavailable", "message": f"the run could not start: {type(exc).__name__}"},
            )
        raise ServiceUnavailable("the run could not be started; try again", code="driver_unavailable") from exc
