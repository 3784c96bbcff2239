"""`/v1`: the OpenAI-compatible API (the caller's PAT or OIDC token is the `api_key`). Served by the stream
function (streamed answers) and the API function (whole ones; Mangum buffers a stream), and by the dev server.
Left out of the OpenAPI document: OpenAI's own specification describes these shapes."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, StreamingResponse

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.errors import NotFound
from personal_agent.identity.principal import Principal
from personal_agent.lifecycle.followup_queue import FollowUpQueued
from personal_agent.openai_api import chat_completions, queued_responses, responses, targets
from personal_agent.openai_api.chat_schema import ChatCompletionRequest
from personal_agent.openai_api.response_schema import ResponseRequest
from personal_agent.openai_api.run_events import follow, replay
from personal_agent.runs.store import RunRow
from personal_agent.settings import get_settings
from personal_agent.stream.access import while_permitted
from personal_agent.stream.connection_limit import holding_slot, take_stream_slot
from personal_agent.stream.queued_runs import Queued
from personal_agent.stream.routes import SSE_HEADERS
from personal_agent.stream.run_stream import launch_streaming

router = APIRouter(prefix="/v1", tags=["openai"], include_in_schema=False)


@router.get("/models", operation_id="openai_list_models")
async def list_models(principal: CurrentPrincipal) -> dict[str, Any]:
    """The caller's agents (id: the slug) and the models they may name directly, in OpenAI's list shape."""
    return await targets.model_list(principal)


@router.post("/chat/completions", operation_id="openai_chat_completions", response_model=None)
async def chat_completion(body: ChatCompletionRequest, principal: CurrentPrincipal) -> JSONResponse | StreamingResponse:
    """One run per request; `stream: true` answers with chunks as the run goes."""
    if not body.stream:
        spec = await chat_completions.start(principal, body)
        answer = await chat_completions.answer(spec, body, follow(spec))
        return JSONResponse(answer, headers={"X-Run-Id": str(spec.run_id)})
    spec, slot, frames = await launch_streaming(principal, lambda: chat_completions.start(principal, body))
    chunks = chat_completions.chunks(spec, body, frames)
    headers = {**SSE_HEADERS, "X-Run-Id": str(spec.run_id)}
    return StreamingResponse(holding_slot(slot, chunks), media_type="text/event-stream", headers=headers)


@router.post("/responses", operation_id="openai_create_response", response_model=None)
async def create_response(body: ResponseRequest, principal: CurrentPrincipal) -> JSONResponse | StreamingResponse:
    """A run per request: answered whole, streamed as semantic events, or (`background`) returned at once and
    followed with `GET /v1/responses/{id}`. Answers to a background response's `ask_user` questions (its
    `function_call_output`s, with it as `previous_response_id`) go to that response, which goes on."""
    if (continued := await responses.answered(principal, body)) is not None:
        return JSONResponse(continued)
    if not body.stream:
        try:
            spec = await responses.create(principal, body)
        except FollowUpQueued as queued:  # background, behind its conversation's busy response: status `queued`
            return JSONResponse(await queued_responses.created(principal, queued))
        row = await responses.row_of(spec)
        if body.background:
            return JSONResponse(await responses.current(row))
        return JSONResponse(await responses.finished(row, follow(spec)))
    try:
        spec, slot, frames = await launch_streaming(principal, lambda: responses.create(principal, body))
    except FollowUpQueued as queued:  # its events once it starts (only a background response is queued)
        waiting = Queued.of(principal.org_id, queued)
        return _semantic(await take_stream_slot(principal), queued_responses.stream(principal, waiting))
    row = await responses.row_of(spec)
    return _semantic(slot, responses.semantic_frames(row, frames))


@router.get("/responses/{response_id}", operation_id="openai_get_response", response_model=None)
async def get_response(
    response_id: str,
    principal: CurrentPrincipal,
    stream: bool = False,
    starting_after: Annotated[int, Query(ge=-1)] = -1,
) -> JSONResponse | StreamingResponse:
    """The response now; with `stream=true` its events again, after `starting_after` (a resume: each once)."""
    if not stream:
        return JSONResponse(await queued_responses.retrieve(principal, response_id))
    try:
        row = await responses.run_row(principal, response_id)
    except NotFound:
        waiting = await queued_responses.queued_of(principal, response_id)
        if waiting is None:
            row = await responses.run_row(principal, response_id)  # started meanwhile, or 404
        else:
            slot = await take_stream_slot(principal)
            return _semantic(slot, queued_responses.stream(principal, waiting, starting_after))
    return await _resumed(principal, row, starting_after)


async def _resumed(principal: Principal, row: RunRow, after: int) -> StreamingResponse:
    slot = await take_stream_slot(principal)
    frames = while_permitted(principal, replay(row), get_settings().sse_heartbeat_seconds)
    return _semantic(slot, responses.semantic_frames(row, frames, after))


def _semantic(slot: Any, frames: Any) -> StreamingResponse:
    return StreamingResponse(holding_slot(slot, frames), media_type="text/event-stream", headers=SSE_HEADERS)


@router.post("/responses/{response_id}/cancel", operation_id="openai_cancel_response")
async def cancel_response(response_id: str, principal: CurrentPrincipal) -> dict[str, Any]:
    return await queued_responses.cancel(principal, response_id)


@router.get("/responses/{response_id}/input_items", operation_id="openai_response_input_items")
async def response_input_items(response_id: str, principal: CurrentPrincipal) -> dict[str, Any]:
    return await responses.input_items(principal, response_id)
