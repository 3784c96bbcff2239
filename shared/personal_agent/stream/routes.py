"""SSE endpoints: a run's events and the user's feed. Served by the stream function (uvicorn under the
Lambda Web Adapter on AWS) and by the dev server; Mangum cannot stream, so never by the API function."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import StreamingResponse

from personal_agent.bus.keys import feed_stream, run_stream
from personal_agent.errors import Unauthorized
from personal_agent.identity.principal import Principal
from personal_agent.runs import store
from personal_agent.runs.service import visible_run
from personal_agent.settings import get_settings
from personal_agent.stream.relay import parse_resume_point, relay

router = APIRouter(prefix="/api/v1", tags=["events"])
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "Connection": "keep-alive"}


async def stream_principal(request: Request, access_token: Annotated[str | None, Query()] = None) -> Principal:
    """Bearer header, or `?access_token=` for clients (EventSource) that cannot set headers."""
    from personal_agent.identity.authenticate import authenticate

    authorization = request.headers.get("authorization")
    if authorization is None and access_token:
        authorization = f"Bearer {access_token}"
    if authorization is None:
        raise Unauthorized("missing bearer token", code="missing_token")
    principal = await authenticate(authorization, request.headers.get("x-org"))
    request.state.principal = principal
    return principal


StreamPrincipal = Annotated[Principal, Depends(stream_principal)]


def _response(frames: AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(frames, media_type="text/event-stream", headers=SSE_HEADERS)


@router.get("/runs/{run_id}/events", operation_id="run_events", responses={200: {"content": {"text/event-stream": {}}}})
async def run_events(
    run_id: UUID,
    principal: StreamPrincipal,
    last_event_id: Annotated[str | None, Header()] = None,
    after: Annotated[str | None, Query(max_length=48)] = None,
) -> StreamingResponse:
    """The run's AG-UI events from `Last-Event-ID` (or `?after=`) on; closes after the terminal event."""
    resume = parse_resume_point(last_event_id, after)
    row = await visible_run(principal, run_id)
    settings = get_settings()

    async def is_gone() -> bool:
        return row["status"] in store.TERMINAL

    return _response(
        relay(
            run_stream(row["org_id"], run_id),
            resume,
            heartbeat=settings.sse_heartbeat_seconds,
            max_lifetime=settings.sse_max_lifetime_seconds,
            is_gone=is_gone,
        )
    )


@router.get("/feed", operation_id="feed", responses={200: {"content": {"text/event-stream": {}}}})
async def feed(
    principal: StreamPrincipal,
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

    return _response(
        relay(
            stream,
            resume,
            heartbeat=settings.sse_heartbeat_seconds,
            max_lifetime=settings.sse_max_lifetime_seconds,
            is_gone=never_gone,
            stop_on_terminal=False,
        )
    )
