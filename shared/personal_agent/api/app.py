"""The FastAPI application factory. Imports stay light: no pydantic-ai, model SDKs or boto3 here."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from fastapi import APIRouter, FastAPI

from personal_agent.api import client_config, health
from personal_agent.api.errors import install_error_handlers
from personal_agent.api.identity import include_identity_routers
from personal_agent.api.openapi import install_openapi
from personal_agent.api.platform_mcp import mcp_route
from personal_agent.api.router_groups import GROUPS
from personal_agent.fastpaths.lazy_routers import include_routers


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    from personal_agent.bus import reset_bus
    from personal_agent.db import close_pool

    await close_pool()
    await reset_bus()


def create_app(*, lazy_routers: bool = False, stream_routers: Sequence[APIRouter] = ()) -> FastAPI:
    """The JSON API: health and everything under /api/v1. `lazy_routers` (the API Lambda): each router is
    imported when a request first needs it (`fastpaths.lazy_routers`), not at cold start. `stream_routers` (the dev
    server's event streams) come first: a request is matched against the routes in order, so the streams, the
    most frequent requests of a chat, are found without trying every API route before them."""
    app = FastAPI(title="Personal Agent", version="0.1.0", lifespan=_lifespan)
    install_error_handlers(app)
    app.include_router(health.router)
    for router in stream_routers:
        app.include_router(router)
    app.include_router(client_config.router)
    include_identity_routers(app)
    # The platform as an MCP server (locally; on AWS the platform MCP function serves it: `create_platform_mcp_app`).
    # Before the routers (no path in common): lazily, the routers end with a catch-all stand-in.
    app.router.routes.append(mcp_route())
    include_routers(app, GROUPS, lazy=lazy_routers)  # chats, runs, ..., knowledge: `router_groups.GROUPS`, in order
    install_openapi(app)
    return app
