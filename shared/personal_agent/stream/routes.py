"""SSE endpoints: a run's events and the user's feed. Served by the stream function (uvicorn under the
Lambda Web Adapter on AWS) and by the dev server; Mangum cannot stream, so never by the API function."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Header, Query
from fastapi.responses import StreamingResponse

from personal_agent.api.deps import StreamReader
from personal_agent.bus.key_names import feed_stream, run_stream
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle.run_views import readable_run
from personal_agent.runs import store
from personal_agent.settings import get_settings
from personal_agent.stream.access import while_permitted
from personal_agent.stream.connection_limit import holding_slot, take_stream_slot
from personal_agent.stream.relay import parse_resume_point, relay

router = APIRouter(prefix="/api/v1", tags=["events"])
FEED_PATIENCE_MS = 2_000  # an announcement may reach a page 2 s late; an idle feed on Upstash polls every 2 s
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "Connection": "keep-alive"}
# The OpenAPI declaration of an event stream: the schema is each event's, as OpenAPI 3.2 describes
# `text/event-stream` (its `itemSchema`; in 3.1 `schema` carries it, and schemathesis checks every event with it).
# With `response_class=StreamingResponse` the route declares no JSON body beside it.
SSE_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Server-Sent Events; comment lines keep the connection alive",
        "content": {
            "text/event-stream": {
                "schema": {
                    "type": "object",
                    "required": ["data"],
                    "properties": {
                        "data": {
                            "type": "string",
                            "contentMediaType": "application/json",
                            "description": "one AG-UI event",
                        },
                        "id": {"type": "string", "description": "where to resume (`Last-Event-ID` or `?after=`)"},
                        "event": {"type": "string"},
                        "retry": {"type": "integer", "minimum": 0},
                    },
                }
            }
        },
    }
}


async def _response(
    principal: Principal, frames: AsyncIterator[str], still_readable: Callable[[], Awaitable[object]] | None = None
) -> StreamingResponse:
    """The stream, counted against the caller's open streams (429 `too_many_streams` past the cap)."""
    slot = await take_stream_slot(principal)
    checked = while_permitted(principal, frames, get_settings().sse_heartbeat_seconds, still_readable)
    return StreamingResponse(holding_slot(slot, checked), media_type="text/event-stream", headers=SSE_HEADERS)


@router.get(
    "/runs/{run_id}/events", operation_id="run_events", response_class=StreamingResponse, responses=SSE_RESPONSE
)
async def run_events(
    run_id: UUID,
    principal: StreamReader,
    last_event_id: Annotated[str | None, Header()] = None,
    after: Annotated[str | None, Query(max_length=48)] = None,
) -> StreamingResponse:
    """The run's AG-UI events from `Last-Event-ID` (or `?after=`) on; closes after the terminal event. Its user, an
    org admin, and (read only) the members of the project its chat is in may follow it; anyone else gets 404."""
    resume = parse_resume_point(last_event_id, after)
    row, as_member = await readable_run(principal, run_id)
    settings = get_settings()

    async def still_member() -> object:  # a member removed from the project stops following at the next heartbeat
        return await readable_run(principal, run_id)

    async def is_gone() -> bool:
        return row.status in store.TERMINAL

    return await _response(
        principal,
        relay(
            run_stream(row.org_id, run_id),
            resume,
            heartbeat=settings.sse_heartbeat_seconds,
            max_lifetime=settings.sse_max_lifetime_seconds,
            is_gone=is_gone,
        ),
        still_member if as_member else None,
    )


@router.get("/feed", operation_id="feed", response_class=StreamingResponse, responses=SSE_RESPONSE)
async def feed(
    principal: StreamReader,
    last_event_id: Annotated[str | None, Header()] = None,
    after: Annotated[str | None, Query(max_length=48)] = None,
) -> StreamingResponse:
    """Runs started and finished in the caller's chats, wherever they were started. Starts at "now"
    unless resuming."""
    resume = parse_resume_point(last_event_id, after)
    settings = get_settings()
    stream = feed_stream(principal.org_id, principal.user_id)
    if resume is None:
        from personal_agent.bus import get_bus

        resume = await get_bus().last_id(stream)

    async def never_gone() -> bool:
        return False

    return await _response(
        principal,
        relay(
            stream,
            resume,
            heartbeat=settings.sse_heartbeat_seconds,
            max_lifetime=settings.sse_max_lifetime_seconds,
            is_gone=never_gone,
            stop_on_terminal=False,
            patience_ms=FEED_PATIENCE_MS,
        ),
    )
