"""The ASGI app of the dev server: the API plus the local-only parts."""

from __future__ import annotations

from fastapi import FastAPI

from personal_agent.api.app import create_app
from personal_agent.local.web_chat import mount_web_chat


def create_dev_app() -> FastAPI:
    """The API app with the SSE relay and the built web chat mounted."""
    from personal_agent.stream import agui_endpoint, routes

    app = create_app()
    app.include_router(routes.router)
    app.include_router(agui_endpoint.router)
    mount_web_chat(app)
    return app
