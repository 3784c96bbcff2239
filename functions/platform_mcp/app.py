"""Platform MCP function: `/mcp` (the platform as an MCP server) behind Mangum, on the worker layer.

Stateless streamable HTTP with JSON responses: every POST stands alone, so a buffered Lambda response answers it.
The API function's layer leaves the `mcp` SDK out to stay small; this function carries it instead.
"""

from __future__ import annotations

from typing import Any

from mangum import Mangum

from personal_agent.api.platform_mcp import create_platform_mcp_app
from personal_agent.observability import instrument

app = create_platform_mcp_app()
_mangum = Mangum(app, lifespan="off")


@instrument(correlation_id_path="requestContext.requestId")
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Serve one API Gateway request to `/mcp` (authenticated by the app: OIDC bearer or personal access token)."""
    response: dict[str, Any] = _mangum(event, context)
    return response
