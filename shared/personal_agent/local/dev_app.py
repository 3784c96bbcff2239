"""The ASGI app of the dev server: the API plus the local-only parts."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from personal_agent.api.app import create_app
from personal_agent.local.access_log import AccessLog
from personal_agent.local.host_guard import HostGuard
from personal_agent.local.web_chat import mount_web_chat

log = logging.getLogger("personal_agent.local.dev")


def create_dev_app(
    *, scheduler: bool = False, demo_mcp_url: str | None = None, worker: bool = False, access_log: bool = False
) -> FastAPI:
    """The API app with the SSE relay and the built web chat mounted; with `scheduler`, the local
    scheduler loop fires due workflow schedules while the app runs (`pa dev`); with `demo_mcp_url`, the demo
    MCP server at that URL is registered for the demo org at startup; a `worker` (one of `pa dev`'s extra
    processes, `local.dev_processes`) stops the inline runs it drives when it stops; with `access_log`, every
    request gets its line (`local.access_log`)."""
    from personal_agent.a2a import routes as a2a_routes
    from personal_agent.openai_api import routes as openai_routes
    from personal_agent.stream import agui_endpoint, routes, run_stream

    app = create_app(
        stream_routers=(routes.router, agui_endpoint.router, run_stream.router, openai_routes.router, a2a_routes.router)
    )
    mount_web_chat(app)
    app.add_middleware(HostGuard)  # a request for another Host name reaches nothing (DNS rebinding)
    if access_log:
        app.add_middleware(AccessLog)  # outermost: a refused Host gets its line too
    if scheduler:
        _run_local_scheduler(app)
    elif worker:
        _stop_local_runs_on_exit(app)
    if demo_mcp_url is not None:
        _register_demo_mcp(app, demo_mcp_url)
    return app


def _register_demo_mcp(app: FastAPI, url: str) -> None:
    """Register the demo MCP server once the app (and its pools) started; a failure is one log line, not fatal."""
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: FastAPI) -> AsyncIterator[None]:
        from personal_agent.local.demo_mcp import register_demo_server

        async with inner(application):
            try:
                await register_demo_server(url)
            except Exception as exc:  # the demo tools are optional; `pa dev` goes on without them
                log.warning("the demo MCP server was not registered: %s", exc)
            yield

    app.router.lifespan_context = lifespan


def _stop_local_runs_on_exit(app: FastAPI) -> None:
    """Stop the inline runs this process drives before the app closes its pools (each releases its lease, so
    the recovery sweep resumes it from its last checkpoint)."""
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: FastAPI) -> AsyncIterator[None]:
        from personal_agent.lifecycle.local_drives import stop_local_runs

        async with inner(application):
            try:
                yield
            finally:
                await stop_local_runs()

    app.router.lifespan_context = lifespan


def _run_local_scheduler(app: FastAPI) -> None:
    """Start the scheduler and the run recovery sweep (inline runs whose worker died, e.g. a killed dev server)
    after the app starts; stop them, and the inline runs in flight (resumed at the next start), before the app
    closes its pools."""
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: FastAPI) -> AsyncIterator[None]:
        from personal_agent.evals.progress import EvalSweep
        from personal_agent.lifecycle.approval_escalation import EscalationLoop
        from personal_agent.lifecycle.local_drives import stop_local_runs
        from personal_agent.lifecycle.recovery import RecoveryLoop
        from personal_agent.local.retention_loop import RetentionLoop
        from personal_agent.local.scheduler import LocalScheduler
        from personal_agent.local.source_scheduler import SourceScheduler

        async with inner(application):
            scheduler = LocalScheduler()
            scheduler.start()
            sources = SourceScheduler()  # knowledge sources' `every` (EventBridge schedules on AWS)
            sources.start()
            recovery = RecoveryLoop()
            recovery.start()
            escalation = EscalationLoop()  # approvals nobody decided in time go to the org's admins too
            escalation.start()
            retention = RetentionLoop()  # temporary and expired chats (a daily job on AWS)
            retention.start()
            evals = EvalSweep(recovery.interval)  # evaluations whose runs ended while the last dev server stopped
            evals.start()
            smtp = await _inbound_smtp()
            try:
                yield
            finally:
                if smtp is not None:
                    smtp.close()
                await evals.stop()
                await retention.stop()
                await escalation.stop()
                await recovery.stop()
                await sources.stop()
                await scheduler.stop()
                await stop_local_runs()

    app.router.lifespan_context = lifespan


async def _inbound_smtp() -> Any:
    """The e-mail channel's SMTP server on loopback when `PA_SMTP_PORT` is set (`local.smtp_inbound`)."""
    from personal_agent.settings import get_settings

    port = get_settings().smtp_port
    if not port:
        return None
    from personal_agent.local.smtp_inbound import serve_smtp

    return await serve_smtp(port)
