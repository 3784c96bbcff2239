"""An evaluation's LLM judge on `pa dev` (issue 37): a judge whose model is below the tier the org's floor asks for
is refused by the launch and the case's result says so (`notes.judge`: `judge_refused: ...`); an allowed judge is a
metered run of the evaluation's (trigger `eval`) on the ledger, its cost counted in the case's and the
evaluation's cost. The answering model is a scripted OpenAI-compatible fake on loopback that echoes every user
turn it was sent, so a case given as a list of messages answers from its earlier turns."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.fake_provider import FakeProvider, Reply, running_fake_provider


def script(messages: list[dict[str, Any]]) -> Reply:
    """The judge gives 8; any other run answers with every user turn it was sent, joined by ` | `."""
    if any("You grade" in str(m.get("content")) for m in messages if m.get("role") == "system"):
        return {"content": "SCORE: 8 fine"}
    users = [str(m.get("content")) for m in messages if m.get("role") == "user"]
    return {"content": "Heard: " + " | ".join(users)}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, FakeProvider]]:
    with running_fake_provider(script) as fake, running_pa_dev(tmp_path_factory.mktemp("pa-dev-judge")) as server:
        yield server, fake


def _provider(http: httpx.Client, admin: dict[str, str], fake: FakeProvider, name: str, tier: int) -> None:
    key = http.post("/api/v1/keys", headers=admin, json={"provider": name, "key": f"sk-{name}-key"})
    assert key.status_code == 201, key.text
    fields = {"name": name, "kind": "openai-compatible", "base_url": fake.base_url, "trust_tier": tier}
    provider = http.post("/api/v1/admin/providers", headers=admin, json={**fields, "key_id": key.json()["id"]})
    assert provider.status_code == 201, provider.text
    body = {"name": "m", "input_price": 1.0, "output_price": 1.0}
    model = http.post(f"/api/v1/admin/providers/{provider.json()['id']}/models", headers=admin, json=body)
    assert model.status_code == 201, model.text


def _turn(http: httpx.Client, admin: dict[str, str], chat_id: str, message: str) -> str:
    """One turn of the chat on `high:m`, read to its end; its run's id."""
    started = http.post(f"/api/v1/chats/{chat_id}/runs", json={"message": message, "model": "high:m"}, headers=admin)
    assert started.status_code == 202, started.text
    with http.stream("GET", started.json()["events_url"], headers=admin) as stream:
        assert any('"RUN_FINISHED"' in line for line in stream.iter_lines())
    return str(started.json()["run_id"])


def _eval(http: httpx.Client, admin: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
    accepted = http.post("/api/v1/evals/runs", headers=admin, json=body)
    assert accepted.status_code == 202, accepted.text
    deadline = time.monotonic() + 240
    while True:
        got = http.get(f"/api/v1/evals/runs/{accepted.json()['id']}", headers=admin)
        assert got.status_code == 200, got.text
        if got.json()["status"] not in ("queued", "running"):
            return dict(got.json())
        assert time.monotonic() < deadline, got.text
        time.sleep(0.2)


@pytest.mark.timeout(600)
def test_a_judge_below_the_tier_is_refused_visibly_and_an_allowed_one_is_metered(
    world: tuple[DevServer, FakeProvider],
) -> None:
    server, fake = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        admin = server.auth_for("ada", "org-admin", org="judged")
        _provider(http, admin, fake, "high", 2)
        _provider(http, admin, fake, "low", 0)
        floor = http.put("/api/v1/admin/settings", headers=admin, json={"tier_floor": 1})
        assert floor.status_code == 200 and floor.json()["tier_floor"] == 1, floor.text
        cases = [{"input": "Name a colour.", "criteria": "names a colour"}]
        dataset = http.post("/api/v1/evals/datasets", headers=admin, json={"name": "judged", "cases": cases}).json()
        body = {"dataset": dataset["id"], "model": "high:m", "budget_usd": 5}

        # A judge on a tier-0 model, under the org's floor of 1: refused, and the case's result says why.
        refused = _eval(http, admin, {**body, "scorers": [{"kind": "judge", "model": "low:m"}]})
        print("refused:", refused["cases"])
        [case] = refused["cases"]
        assert refused["status"] == "succeeded" and case["status"] == "succeeded"
        assert case["scores"] == {"judge": 0.0} and case["score"] == 0.0
        assert case["notes"]["judge"].startswith("judge_refused: "), case["notes"]
        assert "tier" in case["notes"]["judge"]

        # An allowed judge: a run of the evaluation's on the ledger, its cost in the case's and the evaluation's.
        allowed = _eval(http, admin, {**body, "scorers": [{"kind": "judge", "model": "high:m"}]})
        [case] = allowed["cases"]
        assert case["scores"] == {"judge": 0.8} and case["notes"] == {}
        runs = http.get("/api/v1/runs", headers=admin, params={"trigger_source": "eval", "limit": 50}).json()["items"]
        cost = {run["id"]: run["cost_usd"] for run in runs}
        judges = [run for run in runs if run["id"] not in (case["run_id"], refused["cases"][0]["run_id"])]
        print("eval runs:", [(r["id"], r["model"], r["cost_usd"]) for r in runs])
        assert len(judges) == 1 and judges[0]["model"] == "high:m" and judges[0]["cost_usd"] > 0
        assert case["cost_usd"] == pytest.approx(cost[case["run_id"]] + judges[0]["cost_usd"])
        assert allowed["summary"]["cost_usd"] == pytest.approx(case["cost_usd"])
        assert refused["cases"][0]["cost_usd"] == pytest.approx(cost[refused["cases"][0]["run_id"]])


@pytest.mark.timeout(600)
def test_a_two_turn_case_answers_from_its_first_turn_and_a_case_from_a_chat_keeps_its_turns(
    world: tuple[DevServer, FakeProvider],
) -> None:
    server, fake = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        admin = server.auth_for("bo", "org-admin", org="turns")
        _provider(http, admin, fake, "high", 2)
        turns = [
            {"role": "user", "content": "My name is Zed."},
            {"role": "assistant", "content": "Hello Zed."},
            {"role": "user", "content": "What is my name?"},
        ]
        cases = [
            {"input": turns, "expected": "My name is Zed."},
            {"input": "What is my name?", "expected": "My name is Zed."},  # an old, one-string case still works
        ]
        made = http.post("/api/v1/evals/datasets", headers=admin, json={"name": "turns", "cases": cases})
        assert made.status_code == 201, made.text
        bad = {
            "name": "bad",
            "cases": [{"input": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]}],
        }
        refused = http.post("/api/v1/evals/datasets", headers=admin, json=bad)
        assert (refused.status_code, refused.json()["code"]) == (422, "invalid_case"), refused.text
        detail = http.get(f"/api/v1/evals/datasets/{made.json()['id']}", headers=admin).json()
        assert [c["input"] for c in detail["items"]] == [turns, "What is my name?"]

        body = {"dataset": made.json()["id"], "model": "high:m", "budget_usd": 5, "scorers": [{"kind": "contains"}]}
        report = _eval(http, admin, body)
        print("two turns:", [(c["input"], c["answer"]) for c in report["cases"]])
        two, one = report["cases"]
        assert two["answer"] == "Heard: My name is Zed. | What is my name?" and two["scores"]["contains"] == 1.0
        assert one["answer"] == "Heard: What is my name?" and one["scores"]["contains"] == 0.0
        assert two["input"] == "What is my name?"  # the report names the prompt

        # A case from a real two-turn conversation keeps the earlier turns, the run's question last.
        chat = http.post("/api/v1/chats", json={}, headers=admin).json()
        for message in ("I live in Oslo.", "Where do I live?"):
            run_id = _turn(http, admin, chat["id"], message)
        added = http.post(f"/api/v1/evals/datasets/{made.json()['id']}/cases", headers=admin, json={"run_id": run_id})
        assert added.status_code == 200, added.text
        case = http.get(f"/api/v1/evals/datasets/{made.json()['id']}", headers=admin).json()["items"][-1]
        assert case["input"] == [
            {"role": "user", "content": "I live in Oslo."},
            {"role": "assistant", "content": "Heard: I live in Oslo."},
            {"role": "user", "content": "Where do I live?"},
        ]
        assert case["expected"] == "Heard: I live in Oslo. | Where do I live?"


@pytest.mark.timeout(600)
def test_a_case_from_a_restricted_chat_keeps_its_tier_and_never_reaches_a_lower_model(
    world: tuple[DevServer, FakeProvider],
) -> None:
    """As an attacker (or a careless admin) would try it: a restricted chat's turn made into a case, then evaluated
    on a tier-0 model. The case keeps the chat's tier through an edit; the low model's key never carries its text."""
    server, fake = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        admin = server.auth_for("cy", "org-admin", org="labelled")
        _provider(http, admin, fake, "high", 2)
        _provider(http, admin, fake, "low", 0)
        chat = http.post("/api/v1/chats", json={"classification": "restricted"}, headers=admin)
        assert chat.status_code == 201 and chat.json()["classification"] == "restricted", chat.text
        for message in ("The vault code is 4471-ORCHID.", "Repeat the vault code."):
            run_id = _turn(http, admin, chat.json()["id"], message)
        dataset = http.post("/api/v1/evals/datasets", headers=admin, json={"name": "from chats", "cases": []}).json()
        cases_url = f"/api/v1/evals/datasets/{dataset['id']}/cases"
        added = http.post(cases_url, headers=admin, json={"run_id": run_id})
        assert added.status_code == 200, added.text
        [case] = http.get(f"/api/v1/evals/datasets/{dataset['id']}", headers=admin).json()["items"]
        assert (case["content_tier"], case["untrusted"]) == (2, False), case
        assert "4471-ORCHID" in json.dumps(case["input"])
        # An edit of the text does not make it less restricted.
        edited = http.patch(f"{cases_url}/{case['id']}", headers=admin, json={"tags": ["vault"]})
        assert edited.status_code == 200 and edited.json()["content_tier"] == 2, edited.text
        typed = http.post(cases_url, headers=admin, json={"input": "Name a colour."})
        assert typed.status_code == 200, typed.text

        low_keys_before = fake.keys.count("sk-low-key")
        body = {"dataset": dataset["id"], "budget_usd": 5, "scorers": [{"kind": "contains"}]}
        low = _eval(http, admin, {**body, "model": "low:m"})
        restricted, clean = low["cases"]
        print("on the low model:", [(c["status"], c["answer"], c.get("notes")) for c in low["cases"]])
        assert restricted["run_id"] is None and restricted["answer"] == "" and restricted["score"] == 0.0
        assert clean["answer"] == "Heard: Name a colour."  # the typed case runs there: the gate is per case
        with fake._lock:
            sent_low = [
                json.dumps(body) for body, key in zip(fake.requests, fake.keys, strict=True) if key == "sk-low-key"
            ]
        assert len(sent_low) == low_keys_before + 1 and not any("4471" in text for text in sent_low)

        high = _eval(http, admin, {**body, "model": "high:m"})
        assert "4471-ORCHID" in high["cases"][0]["answer"]
