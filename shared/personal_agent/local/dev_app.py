"""The ASGI app of the dev server: the API plus the local-only parts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from personal_agent.api.app import create_app
from personal_agent.local.host_guard import HostGuard
from personal_agent.local.web_chat import mount_web_chat


def create_dev_app(*, scheduler: bool = False) -> FastAPI:
    """The API app with the SSE relay and the built web chat mounted; with `scheduler`, the local
    scheduler loop fires due workflow schedules while the app runs (`pa dev`)."""
    from personal_agent.stream import agui_endpoint, routes

    app = create_app()
    app.include_router(routes.router)
    app.include_router(agui_endpoint.router)
    mount_web_chat(app)
    app.add_middleware(HostGuard)  # outermost: a request for another Host name reaches nothing (DNS rebinding)
    if scheduler:
        _run_local_scheduler(app)
    return app


def _run_local_scheduler(app: FastAPI) -> None:
    """Start the scheduler and the run recovery sweep (inline runs whose worker died, e.g. a killed dev server)
    after the app starts; stop them, and the inline runs in flight (resumed at the next start), before the app
    closes its pools."""
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: FastAPI) -> AsyncIterator[None]:
        from personal_agent.local.scheduler import LocalScheduler
        from personal_agent.runs.drivers import stop_local_runs
        from personal_agent.runs.recovery import RecoveryLoop

        async with inner(application):
            scheduler = LocalScheduler()
            scheduler.start()
            recovery = RecoveryLoop()
            recovery.start()
            try:
                yield
            finally:
                await recovery.stop()
                await scheduler.stop()
                await stop_local_runs()

    app.router.lifespan_context = lifespan
