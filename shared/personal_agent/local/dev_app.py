"""The ASGI app of the dev server: the API plus the local-only parts."""

from __future__ import annotations

from fastapi import FastAPI

from personal_agent.api.app import create_app


def create_dev_app() -> FastAPI:
    """The API app with the SSE relay and the built web chat mounted."""
    return create_app()
