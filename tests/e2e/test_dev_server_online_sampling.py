"""Online sampling (issue 37) on `pa dev`, with a scripted OpenAI-compatible model on loopback: off by default (no
run judged); an org admin samples half of an agent's production runs, and exactly the runs the hash of whose id
falls in that half (`spec/sampling.py`, computed here too) are judged by an LLM with the org's rubric, as metered
runs in chats nobody sees in their list; the scores are on the admin's per-agent, per-day table."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any
from uuid import UUID

import httpx
import pytest

from personal_agent.spec.sampling import in_sample
from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.fake_provider import FakeProvider, Reply, running_fake_provider

RUBRIC = "Says hello back politely."


def script(messages: list[dict[str, Any]]) -> Reply:
    system = "\n".join(str(m.get("content")) for m in messages if m.get("role") == "system")
    if "You grade" in system:
        asked = str(messages[-1].get("content"))
        return {"content": "SCORE: 8 polite" if RUBRIC in asked else "SCORE: 1 no rubric"}
    return {"content": "Hello to you too."}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, FakeProvider]]:
    with running_fake_provider(script) as fake, running_pa_dev(tmp_path_factory.mktemp("pa-dev-sampling")) as server:
        yield server, fake


def _until(check: Callable[[], Any], what: str, timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)  # polling the API for a state change, with a deadline
    raise AssertionError(f"not seen in {timeout}s: {what}")


def _setup(http: httpx.Client, server: DevServer, fake: FakeProvider) -> dict[str, str]:
    admin = server.auth_for("ada", "org-admin")
    key = http.post("/api/v1/keys", headers=admin, json={"provider": "fake", "key": "sk-fake-sampling-key"})
    fields = {"name": "fake", "kind": "openai-compatible", "base_url": fake.base_url, "trust_tier": 2}
    provider = http.post("/api/v1/admin/providers", headers=admin, json={**fields, "key_id": key.json()["id"]})
    assert provider.status_code == 201, provider.text
    model = {"name": "m", "input_price": 1.0, "output_price": 1.0}
    assert http.post(f"/api/v1/admin/providers/{provider.json()['id']}/models", headers=admin, json=model).is_success
    agent = {"name": "Greeter", "slug": "greeter", "model": "fake:m", "visibility": "org", "instructions": "Greet."}
    assert http.post("/api/v1/agents", headers=admin, json=agent).status_code == 201
    return admin


def _run(http: httpx.Client, auth: dict[str, str]) -> str:
    chat = http.post("/api/v1/chats", json={"agent": "greeter"}, headers=auth)
    assert chat.status_code == 201, chat.text
    started = http.post(f"/api/v1/chats/{chat.json()['id']}/runs", json={"message": "hello"}, headers=auth)
    assert started.status_code == 202, started.text
    with http.stream("GET", started.json()["events_url"], headers=auth) as stream:
        types = [json.loads(line[5:])["type"] for line in stream.iter_lines() if line.startswith("data:")]
    assert types[-1] == "RUN_FINISHED", types
    return str(started.json()["run_id"])


def _scores(http: httpx.Client, admin: dict[str, str]) -> list[dict[str, Any]]:
    got = http.get("/api/v1/evals/online-scores", headers=admin)
    assert got.status_code == 200, got.text
    return list(got.json()["items"])


def _judged(fake: FakeProvider) -> int:
    return sum(1 for body in list(fake.requests) if "You grade" in json.dumps(body.get("messages", [])))


@pytest.mark.timeout(600)
def test_half_of_an_agents_runs_judged_by_the_hash_of_their_ids(world: tuple[DevServer, FakeProvider]) -> None:
    server, fake = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        admin = _setup(http, server, fake)
        member = server.auth_for("max", "user")
        _run(http, member)  # off by default: nothing sampled
        assert http.get("/api/v1/evals/sampling", headers=admin).json()["items"] == []

        assert http.put("/api/v1/evals/sampling/greeter", headers=member, json={"rate": 1}).status_code == 403
        bad = http.put("/api/v1/evals/sampling/greeter", headers=admin, json={"rate": 1.5})
        assert bad.status_code == 422
        missing = http.put("/api/v1/evals/sampling/nobody", headers=admin, json={"rate": 0.5})
        assert (missing.status_code, missing.json()["code"]) == (404, "agent_not_found")
        body = {"rate": 0.5, "rubric": RUBRIC, "model": "fake:m"}
        put = http.put("/api/v1/evals/sampling/greeter", headers=admin, json=body)
        assert put.status_code == 200 and put.json()["rate"] == 0.5, put.text
        elsewhere = server.auth_for("ada", "org-admin", org="elsewhere")
        assert http.get("/api/v1/evals/sampling", headers=elsewhere).json()["items"] == []

        runs = [_run(http, member) for _ in range(8)]
        expected = [r for r in runs if in_sample(UUID(r), 0.5)]
        print(f"sampled {len(expected)} of {len(runs)}")
        assert 0 < len(expected) < len(runs), "pick a rate the eight runs straddle"

        def done() -> list[dict[str, Any]] | None:
            items = _scores(http, admin)
            return items if items and items[0]["scored"] >= len(expected) else None

        (day,) = _until(done, "the sampled runs' judges")
        print(json.dumps(day))
        assert (day["agent_slug"], day["sampled"], day["scored"]) == ("greeter", len(expected), len(expected))
        assert day["mean_score"] == pytest.approx(0.8) and day["cost_usd"] > 0  # metered, with the org's rubric
        assert _judged(fake) == len(expected)  # the first run (before sampling was on) and the rest were not judged
        listed = http.get("/api/v1/chats", headers=member).json()["items"]
        assert not any("judge" in c["title"].lower() for c in listed)  # the judges' chats are not the member's
        assert _scores(http, elsewhere) == []
