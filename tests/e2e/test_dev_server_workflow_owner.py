"""A member's memories stay theirs (issue 28, item 10), on `pa dev` as a user runs it: an org admin and a member of
one org, the member's workflow, and a scripted OpenAI-compatible model on loopback (registered by the admin as the
org's provider) that logs everything it is sent. The admin reads the member's workflow but cannot start, change or
route it; the member's own triggered runs recall their memories only once the member opts the workflow in."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.fake_provider import FakeProvider, running_fake_provider

SECRET = "my locker code is 7312-PELICAN"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, FakeProvider]]:
    with running_fake_provider() as fake, running_pa_dev(tmp_path_factory.mktemp("pa-dev-wf-owner")) as server:
        yield server, fake


def _fire_and_finish(http: httpx.Client, workflow_id: str, headers: dict[str, str]) -> dict[str, Any]:
    fired = http.post(f"/api/v1/workflows/{workflow_id}/test-fire", json={"body": {"n": 1}}, headers=headers)
    assert fired.status_code == 202, fired.text
    with http.stream("GET", fired.json()["events_url"], headers=headers) as stream:
        assert stream.status_code == 200
        events = [json.loads(line[5:]) for line in stream.iter_lines() if line.startswith("data:")]
    assert events[-1]["type"] == "RUN_FINISHED", events[-3:]
    run: dict[str, Any] = http.get(fired.json()["status_url"], headers=headers).json()
    return run


@pytest.mark.timeout(300)
def test_an_org_admin_cannot_fire_a_members_workflow_and_triggered_runs_recall_only_when_opted_in(
    world: tuple[DevServer, FakeProvider],
) -> None:
    server, fake = world
    admin, member = server.auth_for("boss", "org-admin"), server.auth_for("mia", "user")
    with httpx.Client(base_url=server.url, timeout=60) as http:
        provider = http.post(
            "/api/v1/admin/providers",
            headers=admin,
            json={"name": "fake", "kind": "openai-compatible", "base_url": fake.base_url, "trust_tier": 2},
        )
        assert provider.status_code == 201, provider.text
        model = http.post(f"/api/v1/admin/providers/{provider.json()['id']}/models", headers=admin, json={"name": "m"})
        assert model.status_code == 201, model.text
        saved = http.post("/api/v1/me/memories", headers=member, json={"text": SECRET})
        assert saved.status_code == 201, saved.text
        created = http.post("/api/v1/workflows", headers=member, json={"name": "digest", "model": "fake:m"})
        assert created.status_code == 201, created.text
        workflow = created.json()
        wid = workflow["id"]
        assert workflow["recall_memories"] is False  # off unless the owner opts in

        # The admin sees the member's workflow, but its runs act as the member: nothing that starts, changes or
        # routes it is the admin's (the same 404 as another org's workflow).
        assert http.get(f"/api/v1/workflows/{wid}", headers=admin).status_code == 200
        refused = [
            http.post(f"/api/v1/workflows/{wid}/test-fire", json={}, headers=admin),
            http.patch(f"/api/v1/workflows/{wid}", json={"recall_memories": True}, headers=admin),
            http.post(
                f"/api/v1/workflows/{wid}/outputs", json={"kind": "email", "email": "boss@example.com"}, headers=admin
            ),
            http.post(f"/api/v1/workflows/{wid}/signing-secret", json={}, headers=admin),
            http.post(f"/api/v1/workflows/{wid}/bearer-token", json={}, headers=admin),
        ]
        assert [(r.status_code, r.json()["code"]) for r in refused] == [(404, "workflow_not_found")] * len(refused)
        assert http.get(f"/api/v1/workflows/{wid}/runs", headers=admin).json()["items"] == []  # nothing started
        assert fake.requests == []

        # The member's own triggered run: the model is asked, without the member's memories.
        first = _fire_and_finish(http, wid, member)
        assert first["status"] == "succeeded", first
        assert fake.requests and SECRET not in fake.seen_text()

        # Opted in by the owner, the next triggered run recalls them.
        opted = http.patch(f"/api/v1/workflows/{wid}", json={"recall_memories": True}, headers=member)
        assert opted.status_code == 200 and opted.json()["recall_memories"] is True, opted.text
        asked_before = len(fake.requests)
        second = _fire_and_finish(http, wid, member)
        assert second["status"] == "succeeded", second
    later = "\n".join(json.dumps(body) for body in fake.requests[asked_before:])
    assert SECRET in later
