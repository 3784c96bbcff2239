"""`POST /api/v1/chats/{chat_id}/runs/stream`: start a run in a chat and stream its events in the same response.

One round trip instead of two (`POST /chats/{chat_id}/runs`, then `GET` its events URL), so the first event
comes a request sooner. The run is the same run either way: stored, resumable at its events URL with
`Last-Event-ID` (the `Content-Location` header) when this connection drops, cancellable, in the chat's
transcript. Served by the stream function (Mangum buffers a response, so the API function cannot stream one).

An inline run started here is driven by this process (`lifecycle.drivers.streamed_here`): the response ends once
the drive did, even when the client went away first, because on Lambda the invocation answering it is the run's
process (one Lambda per streamed turn).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from uuid import UUID

import anyio
from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.api.run_create import RunCreate
from personal_agent.bus.key_names import run_stream
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle.drivers import streamed_here
from personal_agent.lifecycle.followup_queue import FollowUpQueued
from personal_agent.lifecycle.launch import launch_run
from personal_agent.lifecycle.local_drives import wait_for_drive
from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import RunSpec
from personal_agent.stream import queued_runs
from personal_agent.stream.access import while_permitted
from personal_agent.stream.connection_limit import StreamSlot, holding_slot, release_stream_slot, take_stream_slot
from personal_agent.stream.queued_runs import Queued
from personal_agent.stream.relay import relay
from personal_agent.stream.routes import SSE_HEADERS, SSE_RESPONSE

router = APIRouter(prefix="/api/v1", tags=["runs"])


async def _not_gone() -> bool:
    return False  # launched by this request: its stream is being written


async def launch_streaming(
    principal: Principal, launch: Callable[[], Awaitable[RunSpec]]
) -> tuple[RunSpec, StreamSlot, AsyncIterator[str]]:
    """A run started to be streamed in the response that started it (this route and the AG-UI endpoint): a stream
    slot first (429 `too_many_streams` before anything is stored), then `launch`, then the run's frames from its
    first event; the caller answers with them while holding the slot (`holding_slot`)."""
    slot = await take_stream_slot(principal)
    try:
        with streamed_here():
            spec = await launch()
    except BaseException:
        await release_stream_slot(slot)
        raise
    return spec, slot, _then_its_drive(_relayed(spec), spec.run_id)


async def launch_or_follow_queued(
    principal: Principal, launch: Callable[[], Awaitable[RunSpec]]
) -> tuple[RunSpec | Queued, StreamSlot, AsyncIterator[str]]:
    """`launch_streaming` for the ways in that answer a message queued behind the chat's active run with that
    message's run too (AG-UI, A2A): its frames once it starts (`stream/queued_runs.py`), the slot held meanwhile."""
    slot = await take_stream_slot(principal)
    try:
        with streamed_here():
            spec = await launch()
    except FollowUpQueued as queued:
        waiting = Queued.of(principal.org_id, queued)
        return waiting, slot, queued_runs.frames(waiting)
    except BaseException:
        await release_stream_slot(slot)
        raise
    return spec, slot, _then_its_drive(_relayed(spec), spec.run_id)


def _relayed(spec: RunSpec) -> AsyncIterator[str]:
    settings = get_settings()
    return relay(
        run_stream(spec.org_id, spec.run_id),
        None,
        heartbeat=settings.sse_heartbeat_seconds,
        max_lifetime=settings.sse_max_lifetime_seconds,
        is_gone=_not_gone,
    )


async def _then_its_drive(frames: AsyncIterator[str], run_id: UUID) -> AsyncIterator[str]:
    """`frames`, then a wait for the run's drive when this process drives it, also after the client went away (a
    cancelled response: the wait is shielded). The stream slot stays taken meanwhile: the function still runs."""
    try:
        async for frame in frames:
            yield frame
    finally:
        with anyio.CancelScope(shield=True):
            await wait_for_drive(run_id)


@router.post(
    "/chats/{chat_id}/runs/stream",
    operation_id="stream_run",
    response_class=StreamingResponse,
    responses=SSE_RESPONSE,
)
async def stream_run(chat_id: UUID, body: RunCreate, principal: CurrentPrincipal) -> StreamingResponse:
    """Start a run as `POST /chats/{chat_id}/runs` does (same body, same errors) and answer with its AG-UI events,
    closing after the terminal one. `X-Run-Id` names the run; `Content-Location` is its events URL, where a
    dropped connection resumes with `Last-Event-ID`. The token must be in the `Authorization` header (a POST).
    Refused before anything is stored when the caller already holds too many streams (429 `too_many_streams`)."""
    spec, slot, frames = await launch_streaming(principal, lambda: launch_run(body.launch_request(principal, chat_id)))
    checked = while_permitted(principal, frames, get_settings().sse_heartbeat_seconds)
    headers = {
        **SSE_HEADERS,
        "X-Run-Id": str(spec.run_id),
        "Content-Location": f"/api/v1/runs/{spec.run_id}/events",
    }
    return StreamingResponse(holding_slot(slot, checked), media_type="text/event-stream", headers=headers)
