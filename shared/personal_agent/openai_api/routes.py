"""`/v1`: the OpenAI-compatible API (the caller's PAT or OIDC token is the `api_key`). Served by the stream
function (streamed answers) and the API function (whole ones; Mangum buffers a stream), and by the dev server.
Left out of the OpenAPI document: OpenAI's own specification describes these shapes."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse, StreamingResponse

from personal_agent.api.deps import CurrentPrincipal
from personal_agent.openai_api import chat_completions, targets
from personal_agent.openai_api.chat_schema import ChatCompletionRequest
from personal_agent.openai_api.run_events import follow
from personal_agent.stream.connection_limit import holding_slot
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
