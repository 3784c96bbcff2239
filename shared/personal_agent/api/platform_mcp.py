"""`/mcp`: the platform as an MCP server (streamable HTTP) for Claude Desktop, IDE agents and other MCP clients.

Every request is authenticated like any API route (OIDC bearer or personal access token, `get_principal`);
without one it gets the API's 401 JSON before any MCP code runs. The `mcp` SDK is imported on the first
authenticated request only, so the API's cold start does not pay for it (`platform_mcp_server` holds the tools).
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.requests import HTTPConnection
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from personal_agent.api.deps import get_principal
from personal_agent.api.errors import install_error_handlers
from personal_agent.errors import ServiceUnavailable

MCP_PATH = "/mcp"


class McpEndpoint:
    """The ASGI app routed at `/mcp`: authenticate, then hand the request to the MCP server as that caller.

    A class, not a function, so Starlette routes raw ASGI to it instead of wrapping it as a request handler.
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = await get_principal(HTTPConnection(scope))  # Unauthorized/Forbidden: the API's error mapping
        try:
            from personal_agent.api.platform_mcp_server import serve
        except ImportError as exc:  # a deployment whose API package leaves the SDK out
            raise ServiceUnavailable("the MCP endpoint is not available here", code="mcp_unavailable") from exc
        await serve(principal, MCP_PATH, scope, receive, send)


mcp_endpoint = McpEndpoint()
MCP_METHODS = ("GET", "POST", "DELETE")


def mcp_route() -> Route:
    """`/mcp` as a plain route (not a mount), so it answers without a slash redirect; out of the OpenAPI document."""
    return Route(MCP_PATH, mcp_endpoint, methods=list(MCP_METHODS), include_in_schema=False)


def create_platform_mcp_app() -> FastAPI:
    """`/mcp` alone, with the API's error mapping: the platform MCP function's app on AWS, where the API function's
    layer leaves the `mcp` SDK out (and the API function stays small)."""
    app = FastAPI(title="Personal Agent MCP", version="0.1.0", openapi_url=None, docs_url=None, redoc_url=None)
    install_error_handlers(app)
    app.router.routes.append(mcp_route())
    return app
