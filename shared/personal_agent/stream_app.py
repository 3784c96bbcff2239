"""The stream function's ASGI app (its composition root, above the folders it composes): the SSE relay, the AG-UI
endpoint, runs started with their events in the response, `/v1` and A2A, and liveness."""

from __future__ import annotations

from fastapi import FastAPI

from personal_agent.a2a import routes as a2a_routes
from personal_agent.api import health
from personal_agent.api.errors import install_error_handlers
from personal_agent.openai_api import routes as openai_routes
from personal_agent.stream import agui_endpoint, routes, run_stream


def create_stream_app() -> FastAPI:
    app = FastAPI(title="Personal Agent stream relay", version="0.1.0")
    install_error_handlers(app)
    app.include_router(health.router)
    app.include_router(routes.router)
    app.include_router(agui_endpoint.router)
    app.include_router(run_stream.router)
    app.include_router(a2a_routes.router)
    app.include_router(openai_routes.router)
    return app
