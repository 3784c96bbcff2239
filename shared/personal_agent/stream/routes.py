"""SSE endpoints: a run's events and the user's feed. Served by the stream function (uvicorn under the
Lambda Web Adapter on AWS) and by the dev server; Mangum cannot stream, so never by the API function."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any
from urllib.parse import parse_qsl, urlencode
from uuid import UUID

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import StreamingResponse

from personal_agent.bus.keys import feed_stream, run_stream
from personal_agent.errors import AppError, Unauthorized
from personal_agent.identity.principal import Principal
from personal_agent.runs import store
from personal_agent.runs.service import visible_run
from personal_agent.settings import get_settings
from personal_agent.stream.access import while_permitted
from personal_agent.stream.connection_limit import holding_slot, take_stream_slot
from personal_agent.stream.relay import parse_resume_point, relay

router = APIRouter(prefix="/api/v1", tags=["events"])
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
QUERY_TOKEN = "access_token"


def take_query_token(request: Request) -> str | None:
    """Remove `?access_token=` from the request and return it. The scope is edited in place, so the access
    log, error reports and `request.url` (everything after this) never see the token."""
    raw: bytes = request.scope.get("query_string", b"")
    if not raw:
        return None
    pairs = parse_qsl(raw.decode("latin-1"), keep_blank_values=True)
    tokens = [value for key, value in pairs if key == QUERY_TOKEN]
    if not tokens:
        return None
    request.scope["query_string"] = urlencode([(k, v) for k, v in pairs if k != QUERY_TOKEN]).encode("latin-1")
    return tokens[-1]


async def _authenticate(request: Request, authorization: str | None) -> Principal:
    from personal_agent.identity.authenticate import authenticate

    if authorization is None:
        raise Unauthorized("missing bearer token", code="missing_token")
    principal = await authenticate(authorization, request.headers.get("x-org"))
    request.state.principal = principal
    return principal


async def stream_principal(
    request: Request,
    access_token: Annotated[
        str | None,
        Query(description="only for EventSource clients, which cannot send `Authorization`; never logged"),
    ] = None,
) -> Principal:
    """Bearer header, or `?access_token=` for GET streams from clients (EventSource) that cannot set headers."""
    del access_token  # declared for the OpenAPI document; read (and scrubbed from the request) below
    query_token = take_query_token(request)
    authorization = request.headers.get("authorization")
    if authorization is None and query_token:
        authorization = f"Bearer {query_token}"
    return await _authenticate(request, authorization)


async def header_principal(request: Request) -> Principal:
    """Bearer header only: a token in the URL of a POST is refused (it could be logged or replayed)."""
    if take_query_token(request) is not None:
        raise AppError(
            "send the token in the Authorization header; a token in the URL is accepted only by GET event streams",
            code="token_in_query",
            status=400,
        )
    return await _authenticate(request, request.headers.get("authorization"))


StreamPrincipal = Annotated[Principal, Depends(stream_principal)]
HeaderPrincipal = Annotated[Principal, Depends(header_principal)]


async def _response(principal: Principal, frames: AsyncIterator[str]) -> StreamingResponse:
    """The stream, counted against the caller's open streams (429 `too_many_streams` past the cap)."""
    slot = await take_stream_slot(principal)
    checked = while_permitted(principal, frames, get_settings().sse_heartbeat_seconds)
    return StreamingResponse(holding_slot(slot, checked), media_type="text/event-stream", headers=SSE_HEADERS)


@router.get(
    "/runs/{run_id}/events", operation_id="run_events", response_class=StreamingResponse, responses=SSE_RESPONSE
)
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

    return await _response(
        principal,
        relay(
            run_stream(row["org_id"], run_id),
            resume,
            heartbeat=settings.sse_heartbeat_seconds,
            max_lifetime=settings.sse_max_lifetime_seconds,
            is_gone=is_gone,
        ),
    )


@router.get("/feed", operation_id="feed", response_class=StreamingResponse, responses=SSE_RESPONSE)
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

    return await _response(
        principal,
        relay(
            stream,
            resume,
            heartbeat=settings.sse_heartbeat_seconds,
            max_lifetime=settings.sse_max_lifetime_seconds,
            is_gone=never_gone,
            stop_on_terminal=False,
        ),
    )
