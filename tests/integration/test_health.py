"""Health endpoints: readiness gates on Postgres and Redis only and names what failed."""

from __future__ import annotations

from typing import Any

import pytest

from personal_agent.bus import reset_bus
from personal_agent.local.ports import free_port
from personal_agent.settings import get_settings


async def test_healthz_and_readyz(client: Any) -> None:
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    ready = await client.get("/readyz")
    assert ready.status_code == 200
    assert {c["name"]: c["ok"] for c in ready.json()["checks"]} == {"postgres": True, "redis": True}


async def test_readyz_names_the_failed_dependency(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    await reset_bus()
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    get_settings.cache_clear()
    try:
        response = await client.get("/readyz")
        assert response.status_code == 503
        body = response.json()
        assert body["code"] == "not_ready" and body["failed"] == ["redis"]
    finally:
        await reset_bus()
        monkeypatch.undo()
        get_settings.cache_clear()
    assert (await client.get("/readyz")).status_code == 200


async def test_soft_dependencies_are_reported_not_gating(client: Any) -> None:
    deps = (await client.get("/health/deps")).json()["checks"]
    assert {c["name"] for c in deps} >= {"state_machine", "model_providers"}
