"""Session fixtures: the embedded Postgres, Valkey and moto, started by the tests themselves."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pydantic_ai.models
import pytest

# No test reaches a real model provider: pydantic-ai's real models refuse to send a request. A test that drives
# a real provider client against a fake server on loopback opts in with the `real_model_requests` fixture.
pydantic_ai.models.ALLOW_MODEL_REQUESTS = False


@pytest.fixture
def real_model_requests() -> Iterator[None]:
    """Lift the session's model-request guard for one test whose OpenAI/Anthropic clients talk to a fake server
    on loopback (`@pytest.mark.usefixtures("real_model_requests")`)."""
    with pydantic_ai.models.override_allow_model_requests(True):
        yield


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """The whole local stack on free ports with its data in a temporary folder."""
    from personal_agent.local.isolation import isolate_process
    from personal_agent.local.stack import LocalStack
    from personal_agent.settings import Settings, get_settings

    data_dir: Path = tmp_path_factory.mktemp("pa-data")
    # The fake model servers the tests register as org providers are on loopback: the operator allow-lists it.
    # So are the fake MCP servers (the MCP address-check tests set PA_MCP_ALLOW_HOSTS empty to see the default).
    isolate_process(
        data_dir,
        PA_ENV="test",
        PA_PROVIDER_ALLOW_HOSTS="127.0.0.1",
        PA_PUSH_ALLOW_HOSTS="push.example.com",
        PA_MCP_ALLOW_HOSTS="127.0.0.1",
        # OCR's page limit (20 s by default) at its most: a loaded 2-core test machine took 28-40 s a page; the
        # tests of the limit set their own.
        PA_OCR_PAGE_SECONDS="300",
    )
    running = LocalStack(Settings()).start()
    try:
        yield running
    finally:
        running.stop()
        get_settings.cache_clear()


@pytest.fixture(scope="session")
def admin_url(stack: object) -> str:
    return os.environ["DATABASE_ADMIN_URL"]


@pytest.fixture(scope="session")
def app_url(stack: object) -> str:
    return os.environ["DATABASE_URL"]


@dataclass(frozen=True)
class Tenant:
    """An org with one member, made directly in the database for a test."""

    org_id: uuid.UUID
    slug: str
    user_id: uuid.UUID
    subject: str


@pytest.fixture
def make_tenant(admin_url: str) -> Iterator[object]:
    """Create a fresh org and user (unique per call) so tests never share rows."""

    def _make(roles: tuple[str, ...] = ("user",), slug: str | None = None) -> Tenant:
        from personal_agent.settings import get_settings

        slug = slug or f"org-{uuid.uuid4().hex[:10]}"
        subject = f"user-{uuid.uuid4().hex[:10]}"
        # The user belongs to the dev issuer, so `tests.auth.auth_headers(tenant)` signs in as this user.
        issuer = get_settings().dev_issuer
        with psycopg.connect(admin_url, autocommit=True) as conn:
            org_id = conn.execute("INSERT INTO orgs (slug, name) VALUES (%s, %s) RETURNING id", [slug, slug]).fetchone()
            user_id = conn.execute(
                "INSERT INTO users (issuer, subject, email) VALUES (%s, %s, %s) RETURNING id",
                [issuer, subject, f"{subject}@example.test"],
            ).fetchone()
            assert org_id and user_id
            conn.execute(
                "INSERT INTO memberships (org_id, user_id, roles) VALUES (%s, %s, %s)",
                [org_id[0], user_id[0], list(roles)],
            )
        return Tenant(org_id[0], slug, user_id[0], subject)

    yield _make


@pytest.fixture
async def client(stack: object) -> AsyncIterator[object]:
    """An HTTP client talking to the dev app in-process."""
    import httpx

    from personal_agent.local.dev_app import create_dev_app

    app = create_dev_app()
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:  # dev app: Host checked
        yield http


@pytest.fixture(scope="session")
def live_url(stack: object) -> Iterator[str]:
    """The dev app on a real loopback port (streaming needs a real server)."""
    from personal_agent.local.dev_app import create_dev_app
    from tests.live_server import LiveServer

    server = LiveServer(create_dev_app()).start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
async def http(live_url: str) -> AsyncIterator[object]:
    """An HTTP client for the live server."""
    import httpx

    async with httpx.AsyncClient(base_url=live_url, timeout=30) as client:
        yield client


@pytest.fixture(scope="session", autouse=True)
async def _close_loop_resources() -> AsyncIterator[None]:
    """Close the test loop's DB pool and bus client at the end, so nothing is left pending."""
    yield
    from personal_agent.bus import reset_bus
    from personal_agent.db import close_pool

    await close_pool()
    await reset_bus()
