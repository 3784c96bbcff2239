"""Evaluations, feedback and traces on `pa dev` as a user runs it (issue 37), with a scripted OpenAI-compatible
model on loopback: two versions of an agent over a small JSONL dataset (contains + an LLM judge), compared side by
side; a dataset case from a real conversation; an evaluation whose budget runs out stops with the cases done so
far; thumbs on an answer round-trip and show in the admin's satisfaction, filtered by agent and time, each with
the agent version that answered; a run's trace is its owner's and the
org admins' (404 for another member and another org) and carries no key."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from statistics import median
from typing import Any

import httpx
import pytest

from personal_agent.evals.compare_table import compare_markdown
from tests.e2e.pa_dev import PA, ROOT, DevServer, running_pa_dev
from tests.fake_provider import FakeProvider, Reply, last_user_text, running_fake_provider

V1 = "You are the quiz bot, version one."
V2 = "You are the quiz bot, version two."
KEY = "sk-fake-provider-key-do-not-leak-4242"
RIGHT = {"France": "Paris.", "2+2": "4", "sky": "Blue."}
DATASET = "\n".join(
    json.dumps(case)
    for case in (
        {"input": "What is the capital of France?", "expected": "Paris", "tags": ["geo"]},
        {"input": "What is 2+2?", "expected": "4"},
        {"input": "What color is the sky?", "expected": "blue", "criteria": "names the colour"},
    )
)


def _system(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content")) for m in messages if m.get("role") == "system")


def script(messages: list[dict[str, Any]]) -> Reply:
    """The judge gives 9 to a right answer and 2 to any other; version two knows all three, version one only
    France."""
    asked = last_user_text(messages)
    if "You grade" in _system(messages):
        answer = asked.rsplit("Answer:", 1)[-1]
        return {"content": "SCORE: 9 right" if any(v.strip(".") in answer for v in RIGHT.values()) else "SCORE: 2"}
    knows = RIGHT if V2 in _system(messages) else {"France": "Paris."}
    return {"content": next((a for q, a in knows.items() if q in asked), "I am not sure.")}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, FakeProvider]]:
    with running_fake_provider(script) as fake, running_pa_dev(tmp_path_factory.mktemp("pa-dev-evals")) as server:
        yield server, fake


def _pa(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PA), *args], cwd=ROOT / "docs", env=env, capture_output=True, text=True, timeout=300)


def _wait_eval(http: httpx.Client, eval_id: str, auth: dict[str, str]) -> dict[str, Any]:
    deadline = time.monotonic() + 240
    while True:
        got = http.get(f"/api/v1/evals/runs/{eval_id}", headers=auth)
        assert got.status_code == 200, got.text
        if got.json()["status"] not in ("queued", "running"):
            return dict(got.json())
        assert time.monotonic() < deadline, got.text
        time.sleep(0.2)


def _setup(
    http: httpx.Client, server: DevServer, fake: FakeProvider, price: float | None = None, org: str = "e2e"
) -> dict[str, str]:
    admin = server.auth_for("ada", "org-admin", org=org)
    key = http.post("/api/v1/keys", headers=admin, json={"provider": "fake", "key": KEY})
    assert key.status_code == 201, key.text
    fields = {"name": "fake", "kind": "openai-compatible", "base_url": fake.base_url, "trust_tier": 2}
    provider = http.post("/api/v1/admin/providers", headers=admin, json={**fields, "key_id": key.json()["id"]})
    assert provider.status_code == 201, provider.text
    body: dict[str, Any] = {"name": "m"}
    if price is not None:
        body |= {"input_price": price, "output_price": price}
    model = http.post(f"/api/v1/admin/providers/{provider.json()['id']}/models", headers=admin, json=body)
    assert model.status_code == 201, model.text
    return admin


def _run_and_wait(http: httpx.Client, auth: dict[str, str], message: str, agent: str | None = None) -> str:
    chat = http.post("/api/v1/chats", json={"agent": agent} if agent else {}, headers=auth)
    assert chat.status_code == 201, chat.text
    started = http.post(
        f"/api/v1/chats/{chat.json()['id']}/runs", json={"message": message, "model": "fake:m"}, headers=auth
    )
    assert started.status_code == 202, started.text
    with http.stream("GET", started.json()["events_url"], headers=auth) as stream:
        types = [json.loads(line[5:])["type"] for line in stream.iter_lines() if line.startswith("data:")]
    assert types[-1] == "RUN_FINISHED", types
    return str(started.json()["run_id"])


@pytest.mark.timeout(600)
def test_two_agent_versions_over_a_jsonl_dataset_compared_side_by_side(world: tuple[DevServer, FakeProvider]) -> None:
    server, fake = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        admin = _setup(http, server, fake, price=1.0)
        agent = http.post(
            "/api/v1/agents",
            headers=admin,
            json={"name": "Quiz", "slug": "quiz", "model": "fake:m", "visibility": "org", "instructions": V1},
        )
        assert agent.status_code == 201, agent.text
        patched = http.patch(f"/api/v1/agents/{agent.json()['id']}", json={"instructions": V2}, headers=admin)
        assert patched.json()["published_version"] == 2

        bad = http.post("/api/v1/evals/datasets", headers=admin, json={"name": "x", "jsonl": '{"input": "a"}\nnope'})
        assert bad.status_code == 422 and bad.json()["code"] == "invalid_jsonl"
        dataset = http.post("/api/v1/evals/datasets", headers=admin, json={"name": "quiz", "jsonl": DATASET})
        assert dataset.status_code == 201 and dataset.json()["cases"] == 3, dataset.text
        member = server.auth_for("max", "user")
        assert http.get("/api/v1/evals/datasets", headers=member).status_code == 403

        scorers = [{"kind": "contains"}, {"kind": "judge", "model": "fake:m"}]
        ids = {}
        for version in (1, 2):
            body = {
                "dataset": dataset.json()["id"],
                "agent": "quiz",
                "version": version,
                "budget_usd": 5,
                "scorers": scorers,
            }
            accepted = http.post("/api/v1/evals/runs", headers=admin, json=body)
            assert accepted.status_code == 202, accepted.text
            ids[version] = accepted.json()["id"]
        one, two = _wait_eval(http, ids[1], admin), _wait_eval(http, ids[2], admin)
        for report in (one, two):
            print(f"v{report['version']}: {report['summary']}")
            for case in report["cases"]:
                print(f"  #{case['position'] + 1} {case['input']!r} -> {case['answer']!r} {case['scores']}")
        assert one["status"] == two["status"] == "succeeded"
        assert [c["scores"]["contains"] for c in one["cases"]] == [1.0, 0.0, 0.0]
        assert [c["scores"]["contains"] for c in two["cases"]] == [1.0, 1.0, 1.0]
        assert [c["scores"]["judge"] for c in one["cases"]] == [0.9, 0.2, 0.2]
        assert two["summary"]["score"] == pytest.approx(0.95)
        assert one["summary"]["score"] == pytest.approx((0.95 + 0.1 + 0.1) / 3, abs=1e-4)
        assert one["summary"]["cases_done"] == 3 and two["summary"]["cost_usd"] > 0
        assert all(c["run_id"] for c in two["cases"])  # each case is a normal run, on the ledger

        compared = http.get("/api/v1/evals/compare", params={"a": ids[1], "b": ids[2]}, headers=admin)
        assert compared.status_code == 200, compared.text
        report = compared.json()
        print("compare:", json.dumps({k: report[k]["summary"] for k in ("a", "b")}), "changed:", report["changed"])
        assert report["changed"] == 2
        assert [c["changed"] for c in report["cases"]] == [False, True, True]
        assert report["b"]["summary"]["score"] > report["a"]["summary"]["score"]
        # Per case each side's cost and latency are its evaluation's own; the totals their sum and median.
        for side, run in (("a", one), ("b", two)):
            own = {c["case_id"]: (c["cost_usd"], c["latency_ms"]) for c in run["cases"]}
            sides = [c[side] for c in report["cases"]]
            assert [(s["cost_usd"], s["latency_ms"]) for s in sides] == [own[c["case_id"]] for c in report["cases"]]
            assert all(s["cost_usd"] > 0 and s["latency_ms"] > 0 for s in sides), sides
            total = report[side]["summary"]
            assert total["cost_usd"] == pytest.approx(sum(s["cost_usd"] for s in sides))
            assert (
                total["latency_ms_p50"]
                == int(median(s["latency_ms"] for s in sides))
                == run["summary"]["latency_ms_p50"]
            )
        markdown = compare_markdown(report)
        print(markdown)
        for case in report["cases"]:
            a, b = case["a"], case["b"]
            assert (
                f"| {case['position'] + 1} | {case['input']} | {a['score']:.2f} | {b['score']:.2f}"
                f" | {'yes' if case['changed'] else ''} | ${a['cost_usd']:.6f} | ${b['cost_usd']:.6f}"
                f" | {a['latency_ms']} | {b['latency_ms']} |"
            ) in markdown
        a_sum, b_sum = report["a"]["summary"], report["b"]["summary"]
        assert (
            f"| | total (2 changed) | {a_sum['score']} | {b_sum['score']} | | ${a_sum['cost_usd']:.6f}"
            f" | ${b_sum['cost_usd']:.6f} | {a_sum['latency_ms_p50']} | {b_sum['latency_ms_p50']} |"
        ) in markdown
        elsewhere = server.auth_for("ada", "org-admin", org="elsewhere")
        assert http.get(f"/api/v1/evals/runs/{ids[1]}", headers=elsewhere).status_code == 404
        assert (
            http.get("/api/v1/evals/compare", params={"a": ids[1], "b": ids[2]}, headers=elsewhere).status_code == 404
        )
        assert http.get("/api/v1/evals/datasets", headers=elsewhere).json()["items"] == []

        # The CLI wraps the same API: `pa eval run` prints the report, `pa eval compare` the table.
        env = {**server.env, "PA_API_URL": server.url, "PA_TOKEN": admin["Authorization"].removeprefix("Bearer ")}
        ran = _pa(env, "eval", "run", "quiz", "--agent", "quiz@2", "--scorer", "contains", "--json")
        assert ran.returncode == 0, ran.stderr
        cli_report = json.loads(ran.stdout)
        assert cli_report["status"] == "succeeded" and cli_report["summary"]["score"] == 1.0
        table = _pa(env, "eval", "compare", ids[1], ids[2])
        print(table.stdout)
        assert table.returncode == 0 and "| 2 | What is 2+2? | 0.10 | 0.95 | yes |" in table.stdout


@pytest.mark.timeout(600)
def test_feedback_trace_a_case_from_a_conversation_and_an_eval_out_of_budget(
    world: tuple[DevServer, FakeProvider],
) -> None:
    server, fake = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        admin = server.auth_for("ada", "org-admin")
        if not http.get("/api/v1/evals/datasets", headers=admin).json()["items"]:
            _setup(http, server, fake, price=1.0)
        member, colleague = server.auth_for("max", "user"), server.auth_for("eve", "user")
        run_id = _run_and_wait(http, member, "What is the capital of France?")

        # Thumbs on the answer: stored with the model, changeable, one per person; the admin sees it.
        bad = http.post(f"/api/v1/runs/{run_id}/feedback", headers=member, json={"rating": 5})
        assert bad.status_code == 422
        up = http.post(f"/api/v1/runs/{run_id}/feedback", headers=member, json={"rating": 1, "comment": "good"})
        assert up.status_code == 200 and up.json()["model"] == "fake:m", up.text
        down = http.post(f"/api/v1/runs/{run_id}/feedback", headers=member, json={"rating": -1, "comment": "wrong"})
        assert down.json()["rating"] == -1
        mine = http.get(f"/api/v1/runs/{run_id}/feedback", headers=member).json()["feedback"]
        assert (mine["rating"], mine["comment"]) == (-1, "wrong")
        assert http.post(f"/api/v1/runs/{run_id}/feedback", headers=colleague, json={"rating": 1}).status_code == 404
        assert http.get("/api/v1/feedback", headers=member).status_code == 403
        listed = http.get("/api/v1/feedback", headers=admin, params={"model": "fake:m", "rating": -1}).json()
        assert [(i["run_id"], i["comment"]) for i in listed["items"]] == [(run_id, "wrong")]
        assert listed["satisfaction"][0]["down"] == 1 and listed["satisfaction"][0]["satisfaction"] == 0.0
        assert http.get("/api/v1/feedback", headers=admin, params={"rating": 1}).json()["items"] == []

        # The trace: what the model was given; the owner's and the admin's, nobody else's; no key in it.
        trace = http.get(f"/api/v1/runs/{run_id}/trace", headers=member)
        assert trace.status_code == 200, trace.text
        body = trace.json()
        first = body["requests"][0]
        assert body["instructions"] and first["instructions"].startswith(body["instructions"])
        assert any(p["kind"] == "user-prompt" and "France" in p["content"] for p in first["sent"])
        assert first["response"][0]["content"] == "Paris." and first["usage"]["model"]
        calculate = next(t for t in body["tools"] if t["name"] == "calculate")
        assert calculate["description"] and "expression" in calculate["parameters"]["properties"]
        assert body["context"]["budget_tokens"] > 0
        assert KEY not in trace.text and "base_url" not in trace.text and fake.base_url not in trace.text
        assert http.get(f"/api/v1/runs/{run_id}/trace", headers=admin).status_code == 200
        assert http.get(f"/api/v1/runs/{run_id}/trace", headers=colleague).status_code == 404
        other_org = server.auth_for("max", "org-admin", org="elsewhere")
        for path in (f"/api/v1/runs/{run_id}/trace", f"/api/v1/runs/{run_id}/feedback"):
            assert http.get(path, headers=other_org).status_code == 404

        # A dataset case from the real conversation: the question as the input, the answer as the reference.
        dataset = http.post("/api/v1/evals/datasets", headers=admin, json={"name": "from-chats"}).json()
        added = http.post(f"/api/v1/evals/datasets/{dataset['id']}/cases", headers=admin, json={"run_id": run_id})
        assert added.status_code == 200 and added.json()["cases"] == 1, added.text
        case = http.get(f"/api/v1/evals/datasets/{dataset['id']}", headers=admin).json()["items"][0]
        assert (case["input"], case["expected"], case["source_run_id"]) == (
            "What is the capital of France?",
            "Paris.",
            run_id,
        )
        foreign = http.post(f"/api/v1/evals/datasets/{dataset['id']}/cases", headers=other_org, json={"run_id": run_id})
        assert foreign.status_code == 404

        # An evaluation whose budget runs out: it stops with the cases done so far reported.
        five = "\n".join(
            json.dumps({"input": f"What is the capital of France? ({i})", "expected": "Paris"}) for i in range(5)
        )
        big = http.post("/api/v1/evals/datasets", headers=admin, json={"name": "five", "jsonl": five}).json()
        body = {"dataset": big["id"], "model": "fake:m", "budget_usd": 0.000001, "scorers": [{"kind": "exact"}]}
        accepted = http.post("/api/v1/evals/runs", headers=admin, json=body)
        assert accepted.status_code == 202, accepted.text
        report = _wait_eval(http, accepted.json()["id"], admin)
        print("budget:", report["status"], report["summary"])
        assert report["status"] == "budget_exhausted"
        assert 1 <= report["summary"]["cases_done"] <= 2 and report["summary"]["cases_total"] == 5
        assert len(report["cases"]) == report["summary"]["cases_done"]
        # The documented bound (docs/evals.md): the last case launched while the done cases' cost was under the
        # budget, so at most PARALLEL (2) cases, each with its judge, are over it.
        costs = sorted(c["cost_usd"] for c in report["cases"])
        assert report["summary"]["cost_usd"] == pytest.approx(sum(costs)) and costs[0] > 0
        assert sum(costs[:-2]) < 0.000001
        assert report["summary"]["cost_usd"] < 0.000001 + 2 * costs[-1]
        no_target = http.post("/api/v1/evals/runs", headers=admin, json={**body, "model": None})
        assert (no_target.status_code, no_target.json()["code"]) == (422, "eval_target_missing")
        bad_scorer = http.post("/api/v1/evals/runs", headers=admin, json={**body, "scorers": [{"kind": "vibes"}]})
        assert (bad_scorer.status_code, bad_scorer.json()["code"]) == (422, "invalid_scorer")


def test_the_org_feedback_filters_by_agent_and_time_and_keeps_the_agent_version(
    world: tuple[DevServer, FakeProvider],
) -> None:
    server, fake = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        admin = _setup(http, server, fake, org="ratings")
        member = server.auth_for("rob", "user", org="ratings")
        alpha = http.post(
            "/api/v1/agents",
            headers=admin,
            json={"name": "Alpha", "slug": "alpha", "model": "fake:m", "visibility": "org", "instructions": V1},
        )
        assert alpha.status_code == 201, alpha.text
        rated: list[dict[str, Any]] = []

        def rate(agent: str, rating: int) -> None:
            run_id = _run_and_wait(http, member, "What is the capital of France?", agent=agent)
            got = http.post(f"/api/v1/runs/{run_id}/feedback", headers=member, json={"rating": rating})
            assert got.status_code == 200, got.text
            rated.append(got.json())

        rate("alpha", 1)  # version 1
        patched = http.patch(f"/api/v1/agents/{alpha.json()['id']}", json={"instructions": V2}, headers=admin)
        assert patched.json()["published_version"] == 2
        rate("alpha", -1)  # version 2
        beta = http.post(
            "/api/v1/agents",
            headers=admin,
            json={"name": "Beta", "slug": "beta", "model": "fake:m", "visibility": "org", "instructions": V2},
        )
        assert beta.status_code == 201, beta.text
        rate("beta", 1)
        assert [(r["agent_slug"], r["agent_version"]) for r in rated] == [("alpha", 1), ("alpha", 2), ("beta", 1)]
        times = [r["updated_at"] for r in rated]
        assert times == sorted(times) and len(set(times)) == 3

        def listed(**params: Any) -> dict[str, Any]:
            got = http.get("/api/v1/feedback", headers=admin, params=params)
            assert got.status_code == 200, got.text
            return dict(got.json())

        def runs(body: dict[str, Any]) -> list[str]:
            return [i["run_id"] for i in body["items"]]

        ids = [r["run_id"] for r in rated]
        assert runs(listed()) == ids[::-1]  # newest first
        by_alpha = listed(agent="alpha")
        assert [(i["agent_version"], i["rating"]) for i in by_alpha["items"]] == [(2, -1), (1, 1)]
        assert sorted((s["agent_version"], s["up"], s["down"]) for s in by_alpha["satisfaction"]) == [
            (1, 1, 0),
            (2, 0, 1),
        ]
        assert runs(listed(agent="beta")) == [ids[2]] and listed(agent="gamma")["items"] == []
        # [from, to): from is inclusive, to exclusive, on when the rating was last given.
        assert runs(listed(**{"from": times[1], "to": times[2]})) == [ids[1]]
        assert runs(listed(**{"from": times[0], "to": times[1]})) == [ids[0]]
        assert runs(listed(**{"from": times[1]})) == [ids[2], ids[1]]
        assert runs(listed(to=times[1])) == [ids[0]]
        window = listed(agent="alpha", **{"from": times[1]})
        assert runs(window) == [ids[1]] and [(s["agent_version"], s["down"]) for s in window["satisfaction"]] == [
            (2, 1)
        ]
        bad = http.get("/api/v1/feedback", headers=admin, params={"from": "yesterday-ish"})
        assert bad.status_code == 422, bad.text
