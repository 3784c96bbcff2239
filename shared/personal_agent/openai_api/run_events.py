"""Start a `/v1` run through the one chokepoint and read its AG-UI events back (the adapters translate them; none
has a run loop of its own). The run lands in a chat like any other: the caller's conversation is its history,
`trigger_source` is `openai_api`, and it is in `GET /api/v1/runs` with its usage and cost."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal
from uuid import UUID

from personal_agent.bus.key_names import run_stream
from personal_agent.chats import store as chat_store
from personal_agent.db import org_transaction
from personal_agent.errors import InvalidInput
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from personal_agent.openai_api.conversation import Conversation
from personal_agent.openai_api.targets import Target
from personal_agent.runs.store import TERMINAL, RunRow
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import ClientTool, ModelSettings, RequestedMode, RunSpec
from personal_agent.stream.relay import relay

TITLE_CHARS = 60
VISION_CODES = ("model_lacks_vision", "no_vision_model")


@dataclass(frozen=True)
class V1Run:
    """What a `/v1` request asks to run."""

    target: Target
    conversation: Conversation
    client_tools: tuple[ClientTool, ...] = ()
    settings: ModelSettings = ModelSettings()
    schema: dict[str, Any] | None = None
    instructions: str | None = None
    mode: RequestedMode = "inline"
    approval_policy: Literal["wait", "deny"] = "deny"
    chat_id: UUID | None = None
    """Continue this chat (`previous_response_id`); None: a new chat titled after the first user turn."""
    echo: dict[str, Any] | None = None
    """What the response object repeats of the request (Responses)."""
    input_param: str = "messages"
    """The request's field its conversation came from (a 400 about its images names it)."""


async def launch(principal: Principal, run: V1Run) -> RunSpec:
    """Store and start the run (a new chat unless it continues one): the launch's checks all apply."""
    chat_id = run.chat_id or await _new_chat(principal, run.conversation.text)
    request = LaunchRequest(
        org_id=principal.org_id,
        user_id=principal.user_id,
        chat_id=chat_id,
        message=run.conversation.text,
        model=run.target.model,
        mode=run.mode,
        trigger_source="openai_api",
        instructions=run.instructions,
        approval_policy=run.approval_policy,
        owned_chat=True,
        agent=run.target.agent,
        turns=tuple(run.conversation.turns),
        entered=run.conversation.labels,
        vision=run.conversation.vision,
        client_tools=run.client_tools,
        model_settings=run.settings,
        output_schema=run.schema,
        echo=run.echo,
    )
    try:
        return await launch_run(request)
    except InvalidInput as exc:
        if exc.code in VISION_CODES:  # images, and the model asked for (or every model) cannot see
            raise InvalidInput(exc.message, code=exc.code, param=run.input_param) from exc
        raise


async def _new_chat(principal: Principal, text: str) -> UUID:
    title = " ".join(text.split())[:TITLE_CHARS] or "API conversation"
    async with org_transaction(principal.org_id) as conn:
        return (await chat_store.insert_chat(conn, principal.org_id, principal.user_id, title)).id


def follow(spec: RunSpec) -> AsyncIterator[str]:
    """The SSE frames of a run just launched, from its first event until the terminal one (or the relay's
    lifetime)."""

    async def not_gone() -> bool:
        return False

    return _relayed(spec.org_id, spec.run_id, not_gone)


def replay(row: RunRow) -> AsyncIterator[str]:
    """A run's SSE frames from its first event again (a resume): `resume_expired` once they are no longer kept."""

    async def gone() -> bool:
        return row.status in TERMINAL

    return _relayed(row.org_id, row.id, gone)


def _relayed(org_id: UUID, run_id: UUID, is_gone: Callable[[], Awaitable[bool]]) -> AsyncIterator[str]:
    settings = get_settings()
    return relay(
        run_stream(org_id, run_id),
        None,
        heartbeat=settings.sse_heartbeat_seconds,
        max_lifetime=settings.sse_max_lifetime_seconds,
        is_gone=is_gone,
    )


async def events(frames: AsyncIterator[str]) -> AsyncIterator[dict[str, Any] | None]:
    """The AG-UI events in relayed SSE frames, in order; None for a keep-alive (a chance to send one too)."""
    async for chunk in frames:
        found = False
        for frame in chunk.split("\n\n"):
            for line in frame.split("\n"):
                if line.startswith("data: "):
                    found = True
                    yield json.loads(line[6:])
        if not found:
            yield None
