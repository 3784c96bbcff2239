"""API function: the FastAPI app behind Mangum (API Gateway HTTP API v2 events)."""

from __future__ import annotations

from typing import Any

from mangum import Mangum

from personal_agent.api.app import create_app
from personal_agent.observability import instrument

app = create_app(lazy_routers=True)  # a router's modules load with its first request
_mangum = Mangum(app, lifespan="off")


@instrument(correlation_id_path="requestContext.requestId")
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Serve one API Gateway request."""
    response: dict[str, Any] = _mangum(event, context)
    return response
