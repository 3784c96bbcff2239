"""`POST /api/v1/agui/{agent}`: an AG-UI endpoint, so existing AG-UI clients (CopilotKit's HttpAgent)
work unchanged. It starts an inline run from the input's last user message and streams that run's
events in the same response (the run still lands in a chat and can be resumed like any other). A run on a thread
whose run is still going follows the chat's `followup_policy` (`lifecycle/followup_queue.py`): queued, its events
stream once it starts."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

from ag_ui.core import RunAgentInput
from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from personal_agent.agents import service as agent_service
from personal_agent.agents.config import BUILTIN_SLUG, SLUG_PATTERN
from personal_agent.api.deps import CurrentPrincipal
from personal_agent.chats import store as chat_store
from personal_agent.db import org_transaction
from personal_agent.errors import InvalidInput, NotFound
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle.launch import LaunchRequest, launch_run
from personal_agent.spec.run_spec import RunSpec
from personal_agent.stream.connection_limit import holding_slot
from personal_agent.stream.routes import SSE_HEADERS, SSE_RESPONSE
from personal_agent.stream.run_stream import launch_or_follow_queued

router = APIRouter(prefix="/api/v1", tags=["ag-ui"])
DEFAULT_AGENT = "default"
"""`/agui/default`: the org's built-in `assistant` (any other name is an agent's slug)."""
# A thread id names a chat (stored, indexed, echoed on every lifecycle event); a run id is echoed.
MAX_ID_LENGTH = 256


def _check_ids(run_input: RunAgentInput) -> None:
    for name, value in (("threadId", run_input.thread_id), ("runId", run_input.run_id)):
        if not value or len(value) > MAX_ID_LENGTH:
            raise InvalidInput(
                f"{name} must be 1 to {MAX_ID_LENGTH} characters (got {len(value)})",
                code="invalid_thread_id" if name == "threadId" else "invalid_run_id",
                field=name,
                max_length=MAX_ID_LENGTH,
            )


def _last_user_text(run_input: RunAgentInput) -> str:
    for message in reversed(run_input.messages):
        if getattr(message, "role", None) == "user":
            content = message.content
            if isinstance(content, str):
                return content
            return "".join(getattr(part, "text", "") for part in content or [])
    raise InvalidInput("the AG-UI input has no user message", code="no_user_message")


async def _chat_for_thread(principal: Principal, thread_id: str) -> Any:
    async with org_transaction(principal.org_id) as conn:
        return await chat_store.chat_for_thread(
            conn, principal.org_id, principal.user_id, f"AG-UI {thread_id[:60]}", thread_id
        )


def _rewrite_ids(chunk: str, thread_id: str, run_id: str) -> str:
    """Answer with the client's own thread and run ids on the lifecycle events (a chunk holds one or more frames)."""
    if '"runId"' not in chunk:
        return chunk
    return "".join(_rewrite_frame(f"{frame}\n\n", thread_id, run_id) for frame in chunk.split("\n\n") if frame)


def _rewrite_frame(frame: str, thread_id: str, run_id: str) -> str:
    if not frame.startswith("id:") or '"runId"' not in frame:
        return frame
    head, _, data = frame.partition("data: ")
    event = json.loads(data)
    event["threadId"], event["runId"] = thread_id, run_id
    return f"{head}data: {json.dumps(event, separators=(',', ':'))}\n\n"


@router.post("/agui/{agent}", operation_id="agui_run", response_class=StreamingResponse, responses=SSE_RESPONSE)
async def agui_run(agent: str, run_input: RunAgentInput, principal: CurrentPrincipal) -> StreamingResponse:
    """Start an inline run from the input's last user message and stream its events (a POST: the token
    must be in the `Authorization` header). Refused before anything is stored: bad ids, no user message,
    too many open streams."""
    slug = BUILTIN_SLUG if agent == DEFAULT_AGENT else agent
    if not re.fullmatch(SLUG_PATTERN, slug):
        raise NotFound(f"no agent named {agent!r}", code="agent_not_found")
    await agent_service.resolve_slug(principal, slug)  # 404 `agent_not_found` before anything is stored
    _check_ids(run_input)
    message = _last_user_text(run_input)

    async def launch() -> RunSpec:
        chat_id = await _chat_for_thread(principal, run_input.thread_id)
        request = LaunchRequest(
            org_id=principal.org_id,
            user_id=principal.user_id,
            chat_id=chat_id,
            message=message,
            mode="inline",
            trigger_source="agui",
            agent=slug,
        )
        return await launch_run(request)

    # A thread whose run is still going: under the chat's `followup_policy` this run is queued, and its events
    # follow once it starts (or a RUN_ERROR when it is cancelled first); `reject` is 409 `run_in_progress`.
    _spec, slot, frames = await launch_or_follow_queued(principal, launch)

    async def rewritten() -> AsyncIterator[str]:
        async for frame in frames:
            yield _rewrite_ids(frame, run_input.thread_id, run_input.run_id)

    return StreamingResponse(holding_slot(slot, rewritten()), media_type="text/event-stream", headers=SSE_HEADERS)
