"""Mounts the identity routes: `/api/v1/me`, `/api/v1/org`, and in local mode only the dev issuer."""

from __future__ import annotations

from fastapi import FastAPI

from personal_agent.settings import get_settings


def include_identity_routers(app: FastAPI) -> None:
    """Add the identity routers; the dev issuer's routes exist only when PA_ENV is local or test."""
    from personal_agent.api import me, org

    app.include_router(me.router)
    app.include_router(org.router)
    from personal_agent.identity.dev_issuer import dev_issuer_enabled

    if dev_issuer_enabled(get_settings()):
        from personal_agent.api import dev_issuer

        app.include_router(dev_issuer.router)
