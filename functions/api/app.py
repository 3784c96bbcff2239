"""API function: the FastAPI app behind Mangum (API Gateway HTTP API v2 events)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import Logger
from mangum import Mangum

from personal_agent.api.app import create_app

logger = Logger()
app = create_app()
_mangum = Mangum(app, lifespan="off")


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Serve one API Gateway request."""
    response: dict[str, Any] = _mangum(event, context)
    return response
