"""A background `/v1` response queued behind its conversation's response in progress (the chat's `followup_policy`,
`lifecycle/followup_queue.py`): created with status `queued` and the id its run will have, it can be retrieved
(`queued`, then the run's own object once it started; `cancelled` or `failed` when it never started), cancelled
while it waits, and streamed (heartbeats until its run starts, then its events). A synchronous request never
queues: it cannot hold its connection behind a run of unbounded length (a background one may wait hours for a
person), so it is refused 409 `run_in_progress` whatever the policy (docs/openai.md)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any
from uuid import UUID

from pydantic import TypeAdapter

from personal_agent.agents.config import BUILTIN_SLUG
from personal_agent.api.openai_error_shape import openai_error
from personal_agent.errors import AppError, NotFound
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle import followup_queue
from personal_agent.lifecycle.launch import LaunchRequest
from personal_agent.openai_api import response_object as objects
from personal_agent.openai_api import responses
from personal_agent.openai_api.run_events import replay
from personal_agent.spec.run_spec import RunSpec
from personal_agent.stream import queued_runs

TRIGGER = "openai_api"
STATUS = {"queued": "queued", "cancelled": "cancelled", "failed": "failed"}
_REQUEST = TypeAdapter(LaunchRequest)


def response_of(message: followup_queue.QueuedMessage) -> dict[str, Any]:
    """The response object of a message that has not started: from the request it was queued with."""
    row, request = message.row, _REQUEST.validate_python(message.request)
    named = request.agent if request.agent and request.agent != BUILTIN_SLUG else request.model
    spec = RunSpec.model_construct(  # what the object shows of it: no run is built from this
        run_id=row.run_id,
        org_id=request.org_id,
        user_id=request.user_id,
        chat_id=request.chat_id,
        instructions=request.instructions or "",
        mode="durable",  # only a background response is queued
        output_schema=request.output_schema,
        model_settings=request.model_settings,
        client_tools=request.client_tools,
        agent=None,
        model=named or "",
    )
    body = objects.skeleton(spec, STATUS.get(row.status, "queued"), int(row.created_at.timestamp()))
    if row.status == "failed":
        error = row.error or {}
        body["error"] = {"code": str(error.get("code", "server_error")), "message": str(error.get("message", ""))}
    if row.status == "cancelled":
        body["incomplete_details"] = {"reason": "cancelled"}
    return body


async def _queued(principal: Principal, response_id: str) -> followup_queue.QueuedMessage | None:
    """The caller's queued `/v1` message a response id names, while it has not started (None otherwise)."""
    try:
        run_id: UUID = objects.run_id_of(response_id)
    except NotFound:
        return None
    message = await followup_queue.of_run(principal, run_id, TRIGGER)
    return message if message is not None and message.row.status != "started" else None


async def retrieve(principal: Principal, response_id: str) -> dict[str, Any]:
    """The response now: the run's object, or the queued message's while it waits (404 as for any response)."""
    try:
        return await responses.retrieve(principal, response_id)
    except NotFound:
        message = await _queued(principal, response_id)
        if message is None:
            return await responses.retrieve(principal, response_id)  # started meanwhile, or 404
        return response_of(message)


async def cancel(principal: Principal, response_id: str) -> dict[str, Any]:
    """Cancel the response: its run, or the queued message before it starts (then `cancelled`)."""
    try:
        return await responses.cancel(principal, response_id)
    except NotFound:
        message = await _queued(principal, response_id)
        if message is None:
            return await responses.cancel(principal, response_id)
        try:
            row = await followup_queue.cancel(principal, message.row.chat_id, message.row.id)
        except AppError as exc:
            if exc.code != "followup_not_queued":
                raise
            return await responses.cancel(principal, response_id)  # it started meanwhile: its run is cancelled
        return response_of(followup_queue.QueuedMessage(row, message.request))


async def queued_of(principal: Principal, response_id: str) -> queued_runs.Queued | None:
    """A streamed retrieve of a response that has not started: what to wait on (None: it started, or is not one)."""
    message = await _queued(principal, response_id)
    if message is None or message.row.status != "queued":
        return None
    row = message.row
    return queued_runs.Queued(principal.org_id, row.chat_id, row.id, row.run_id, 0)


async def stream(principal: Principal, queued: queued_runs.Queued, after: int = -1) -> AsyncIterator[str]:
    """A queued response's semantic events: heartbeats while it waits, then its run's events as for any response;
    an `error` event when it is cancelled or cannot start first."""
    try:
        async for ping in queued_runs.waiting(queued):
            yield ping
    except AppError as dropped:
        error = openai_error(409, dropped.code, dropped.message, {})["error"] | {"type": "error"}
        yield f"event: error\ndata: {json.dumps(error, separators=(',', ':'))}\n\n"
        return
    row = await responses.run_row(principal, objects.response_id(queued.run_id))
    async for frame in responses.semantic_frames(row, replay(row), after):
        yield frame


async def created(principal: Principal, queued: followup_queue.FollowUpQueued) -> dict[str, Any]:
    """The answer to a create that was queued: the response object, status `queued`."""
    return await retrieve(principal, objects.response_id(UUID(str(queued.details["run_id"]))))
