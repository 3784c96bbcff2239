"""Mounts the identity routes: `/api/v1/me`, `/api/v1/org`, `/api/v1/platform`, and in local mode the dev issuer."""

from __future__ import annotations

from fastapi import FastAPI

from personal_agent.settings import get_settings


def include_identity_routers(app: FastAPI) -> None:
    """Add the identity routers; the dev issuer's routes exist only when PA_ENV is local or test (outside
    Lambda), and refuse unless the dev issuer is trusted (see identity/dev_issuer.py)."""
    from personal_agent.api import me, org, platform_admin

    app.include_router(me.router)
    app.include_router(org.router)
    app.include_router(platform_admin.router)
    from personal_agent.identity.dev_issuer import dev_mode

    if dev_mode(get_settings()):
        from personal_agent.api import dev_device, dev_login

        app.include_router(dev_login.router)
        app.include_router(dev_device.router)
