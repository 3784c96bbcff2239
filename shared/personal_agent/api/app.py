"""The FastAPI application factory. Imports stay light: no pydantic-ai, model SDKs or boto3 here."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from personal_agent.api import (
    admin_console,
    approvals,
    attachments,
    chats,
    client_config,
    governance,
    health,
    hooks,
    knowledge,
    mcp_servers,
    me_settings,
    memories,
    models,
    runs,
    tools,
    usage,
    workflow_outputs,
    workflows,
)
from personal_agent.api.errors import install_error_handlers
from personal_agent.api.identity import include_identity_routers
from personal_agent.api.openapi import install_openapi
from personal_agent.api.platform_mcp import mcp_route


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    from personal_agent.bus import reset_bus
    from personal_agent.db import close_pool

    await close_pool()
    await reset_bus()


def create_app() -> FastAPI:
    """The JSON API: health and everything under /api/v1."""
    app = FastAPI(title="Personal Agent", version="0.1.0", lifespan=_lifespan)
    install_error_handlers(app)
    app.include_router(health.router)
    app.include_router(client_config.router)
    include_identity_routers(app)
    for router in (
        chats.router,
        runs.router,
        usage.router,
        models.router,
        approvals.router,
        governance.router,
        governance.keys_router,
        me_settings.router,
        workflows.router,
        workflow_outputs.router,
        admin_console.router,
        hooks.router,
        mcp_servers.router,
        tools.router,
        memories.router,
        attachments.router,
        knowledge.router,
    ):
        app.include_router(router)
    # The platform as an MCP server (locally; on AWS the platform MCP function serves it: `create_platform_mcp_app`).
    app.router.routes.append(mcp_route())
    install_openapi(app)
    return app
