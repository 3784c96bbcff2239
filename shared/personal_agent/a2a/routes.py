"""A2A (Agent2Agent) over JSON-RPC, one endpoint per agent the caller sees:

- `GET /api/v1/a2a/{agent}/.well-known/agent-card.json`: the agent's card;
- `POST /api/v1/a2a/{agent}`: a2a-sdk's JSON-RPC dispatcher with our request handler (`a2a.handler`): the 1.0
  methods (`SendMessage`, `SendStreamingMessage`, `GetTask`, `CancelTask`) and their 0.3 names (`message/send`,
  `message/stream`, `tasks/get`, `tasks/cancel`).

Both authenticate like the REST API (401 without a valid bearer token; an agent the caller does not see: 404
`agent_not_found`, as the card of an agent that does not exist). Served by the stream function (a streamed
`message/stream` needs it; the API function buffers) and by `pa dev`. Not in the OpenAPI document: the card
describes the endpoint, the A2A specification the protocol."""

from __future__ import annotations

import re

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import DefaultServerCallContextBuilder
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from personal_agent.a2a.card import agent_card
from personal_agent.a2a.handler import RunsRequestHandler
from personal_agent.a2a.tasks import Caller
from personal_agent.agents import service as agent_service
from personal_agent.agents.config import SLUG_PATTERN
from personal_agent.agents.service import LaunchAgent
from personal_agent.api.deps import CurrentPrincipal
from personal_agent.errors import NotFound
from personal_agent.identity.principal import Principal
from personal_agent.settings import get_settings

router = APIRouter(prefix="/api/v1/a2a", tags=["a2a"])
CARD_PATH = "/.well-known/agent-card.json"


class _CallerContext(DefaultServerCallContextBuilder):
    """The call context the handler gets: the verified caller and agent (never the bearer token itself)."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        context.state["headers"].pop("authorization", None)
        context.state["caller"] = request.state.a2a_caller
        return context


_dispatcher = JsonRpcDispatcher(RunsRequestHandler(), context_builder=_CallerContext(), enable_v0_3_compat=True)


async def _agent(principal: Principal, slug: str) -> LaunchAgent:
    if not re.fullmatch(SLUG_PATTERN, slug):
        raise NotFound(f"no agent named {slug!r}", code="agent_not_found")
    return await agent_service.resolve_slug(principal, slug)  # 404 `agent_not_found` for one the caller cannot see


def _base_url(request: Request) -> str:
    """Where the card says the endpoint is: `PA_PUBLIC_URL` when set, else the host the card was fetched from."""
    return get_settings().public_url.rstrip("/") or str(request.base_url).rstrip("/")


@router.get("/{agent}" + CARD_PATH, include_in_schema=False)
async def a2a_agent_card(agent: str, request: Request, principal: CurrentPrincipal) -> JSONResponse:
    found = await _agent(principal, agent)
    return JSONResponse(agent_card_to_dict(agent_card(found, _base_url(request))))


@router.post("/{agent}", include_in_schema=False)
async def a2a_json_rpc(agent: str, request: Request, principal: CurrentPrincipal) -> Response:
    found = await _agent(principal, agent)
    request.state.a2a_caller = Caller(principal, found)
    return await _dispatcher.handle_requests(request)
