"""Safe defaults: dev login only on loopback, the dev server checks `Host`, anonymous health reveals nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from personal_agent.bus import reset_bus
from personal_agent.local.ports import free_port
from personal_agent.settings import get_settings
from tests.auth import auth_headers, bearer, dev_issuer

LOGIN = {"org": "safe-defaults", "user": "alice", "role": "admin"}
Env = Callable[..., None]


@pytest.fixture
def env(stack: object, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    """Set (a value) or unset (None) environment variables and re-read the settings; undone afterwards."""

    def apply(**values: str | None) -> None:
        for name, value in values.items():
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, value)
        get_settings.cache_clear()

    try:
        yield apply
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()


@asynccontextmanager
async def _client(
    app: FastAPI, client: tuple[str, int] = ("127.0.0.1", 50000), host: str = "localhost"
) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, client=client)
    async with httpx.AsyncClient(transport=transport, base_url=f"http://{host}") as http:
        yield http


def _dev_app() -> FastAPI:
    from personal_agent.local.dev_app import create_dev_app

    return create_dev_app()


async def test_with_pa_env_unset_dev_login_needs_a_loopback_bind(env: Env) -> None:
    env(PA_ENV=None, PA_HOST="0.0.0.0")  # an exposed bind, PA_ENV left at its default
    assert get_settings().environment == "local"
    async with _client(_dev_app()) as http:
        login = await http.post("/api/v1/dev/login", json=LOGIN)
        assert (login.status_code, login.json()["code"]) == (403, "dev_login_disabled")
        assert "PA_HOST" in login.json()["message"]
        assert (await http.get("/api/v1/config")).json()["dev_login"] is False
        assert (await http.get("/.well-known/jwks.json")).status_code == 403
        minted = dev_issuer().mint(subject="mallory", orgs=["safe-defaults"], roles=["admin"])
        refused = await http.get("/api/v1/me", headers=bearer(minted))
        assert (refused.status_code, refused.json()["code"]) == (401, "wrong_issuer")

    env(PA_DEV_LOGIN_ALLOW_REMOTE="true")  # the explicit opt-in
    async with _client(_dev_app(), client=("192.0.2.7", 40000)) as http:
        assert (await http.post("/api/v1/dev/login", json=LOGIN)).status_code == 200

    env(PA_DEV_LOGIN_ALLOW_REMOTE=None, PA_HOST="127.0.0.1")
    async with _client(_dev_app()) as http:
        login = await http.post("/api/v1/dev/login", json=LOGIN)
        assert login.status_code == 200, login.text
        assert (await http.get("/api/v1/me", headers=bearer(login.json()["access_token"]))).status_code == 200


async def test_dev_login_answers_only_this_machine_by_a_loopback_name(env: Env) -> None:
    """The app served some other way (`uvicorn --host 0.0.0.0`, a proxy) while PA_HOST still says loopback."""
    from personal_agent.api.app import create_app  # no Host check here: the dev login route checks itself

    env(PA_ENV=None)
    app = create_app()
    for client, host in ((("192.0.2.7", 40000), "localhost:8000"), (("127.0.0.1", 40000), "pa.example.com")):
        async with _client(app, client=client, host=host) as http:
            login = await http.post("/api/v1/dev/login", json=LOGIN)
            assert (login.status_code, login.json()["code"]) == (403, "dev_login_disabled"), (client, host)
    async with _client(app, client=("::1", 40000), host="[::1]:8000") as http:
        assert (await http.post("/api/v1/dev/login", json=LOGIN)).status_code == 200


async def test_the_dev_server_refuses_foreign_host_headers(env: Env) -> None:
    env(PA_ALLOWED_HOSTS="devbox.lan:8000, chat.internal")
    async with _client(_dev_app()) as http:
        for host in ("evil.example", "evil.example:8000", "127.0.0.1.nip.io", "localhost.evil.example", "a b", "x:y"):
            for method, path in (("GET", "/healthz"), ("POST", "/api/v1/dev/login"), ("GET", "/")):
                response = await http.request(method, path, headers={"Host": host}, json=LOGIN)
                assert response.status_code == 400, (host, path, response.text)
                body = response.json()
                assert body["code"] == "host_not_allowed" and body["request_id"] == response.headers["x-request-id"]
        for host in (
            "localhost",
            "localhost:5173",
            "127.0.0.1:8000",
            "[::1]:8000",
            "DEVBOX.lan:8000",
            "chat.internal:1",
        ):
            assert (await http.get("/healthz", headers={"Host": host})).status_code == 200, host
        assert (await http.get("/healthz", headers={"Host": "devbox.lan:9000"})).status_code == 400


@pytest.fixture
async def leaky_deps(env: Env) -> AsyncIterator[dict[str, str]]:
    """Redis unreachable at a URL with a user and password, and a state machine ARN with an account id."""
    port = free_port()
    secrets = {
        "host": f"127.0.0.1:{port}",
        "user": "leaky-user",
        "password": "hunter2",
        "account": "123456789012",
        "machine": "pa-secret-machine",
    }
    await reset_bus()
    env(
        REDIS_URL=f"redis://leaky-user:hunter2@127.0.0.1:{port}/0",
        PA_STATE_MACHINE_ARN="arn:aws:states:us-east-1:123456789012:stateMachine:pa-secret-machine",
    )
    try:
        yield secrets
    finally:
        await reset_bus()


async def test_anonymous_health_reveals_no_hosts_arns_users_or_errors(
    client: Any, make_tenant: Any, leaky_deps: dict[str, str]
) -> None:
    tenant = make_tenant(roles=("org-admin",))
    for headers in ({}, auth_headers(tenant, roles=("org-admin",)), {"Authorization": "Bearer nonsense"}):
        ready = await client.get("/readyz", headers=headers)
        assert ready.status_code == 503
        body = ready.json()
        assert (body["failed"], body["message"]) == (["redis"], "unreachable: redis")
        assert {c["name"]: c["ok"] for c in body["checks"]} == {"postgres": True, "redis": False}
        deps = await client.get("/health/deps", headers=headers)
        assert {c["name"] for c in deps.json()["checks"]} == {"state_machine", "model_providers", "code_sandbox"}
        for response in (ready, deps):
            assert all(set(c) == {"name", "ok", "latency_ms"} for c in response.json()["checks"])
            leaked = [v for v in (*leaky_deps.values(), "Error", "arn:", "offline demo") if v in response.text]
            assert not leaked, (headers, leaked, response.text)

    # A platform admin sees what is behind the names.
    admin = auth_headers(tenant, roles=("admin",))
    ready = (await client.get("/readyz", headers=admin)).json()
    assert next(c for c in ready["checks"] if c["name"] == "redis")["detail"]
    deps = (await client.get("/health/deps", headers=admin)).json()
    assert leaky_deps["machine"] in {c["name"]: c["detail"] for c in deps["checks"]}["state_machine"]
