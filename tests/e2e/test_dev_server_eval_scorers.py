"""The pure scorers over `pa dev` (issue 37), with a scripted OpenAI-compatible model on loopback that calls the
`calculate` tool and answers with JSON: one evaluation scored by `regex`, `json_schema`, `tool_called` (with an
arguments match), `latency` and `cost`, each passing on one case and failing on another; and `pa eval` as a user
runs it: `pa eval dataset` imports a JSONL file, `pa eval run --scorer 'kind:JSON'` sends the scorer's fields (a
judge its rubric), and a scorer the API would refuse is a usage error (exit 2) before any call."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.requests import Request

from tests.e2e.pa_dev import PA, ROOT, DevServer, running_pa_dev
from tests.fake_provider import FakeProvider, Reply, last_user_text, tool_results

SLOW_SECONDS = 30
PRICE = 1000.0  # USD per million tokens; the fake reports 25 tokens a request: $0.025 a request
CASES: list[dict[str, Any]] = [
    {"input": "What is 6*7? Reply in JSON.", "expected": "42", "tags": ["json"]},
    {"input": "What is 2+3? Reply in JSON.", "expected": "5"},
    {"input": "Say hello, slowly.", "criteria": "greets"},
]
REGEX = {"kind": "regex", "pattern": r'"answer": 4\d\b'}
SCHEMA = {"type": "object", "required": ["answer"], "properties": {"answer": {"type": "integer"}}}
RUBRIC = "answers in JSON"
TOOL = {"kind": "tool_called", "tool": "calculate", "args": {"expression": "6*7"}}


def script(messages: list[dict[str, Any]]) -> Reply:
    """6*7: calculate, then `{"answer": 42}`; 2+3: calculate, then prose; hello: no tool, a JSON string answer. As the
    judge: 8 for a JSON answer, 1 for prose, with the CLI's rubric as the criteria (0 without it)."""
    asked, results = last_user_text(messages), tool_results(messages)
    if any("You grade" in str(m.get("content")) for m in messages if m.get("role") == "system"):
        rubric, answer = asked.partition("Criteria:\n")[2], asked.rsplit("Answer:\n", 1)[-1]
        if not rubric.startswith(RUBRIC):
            return {"content": "SCORE: 0 no rubric"}
        return {"content": "SCORE: 8 JSON" if answer.startswith("{") else "SCORE: 1 prose"}
    for expression in ("6*7", "2+3"):
        if expression in asked and not results:
            return {"tool_calls": [{"name": "calculate", "arguments": {"expression": expression}}]}
    if "6*7" in asked:
        return {"content": json.dumps({"answer": int(results[-1].strip())})}
    if "2+3" in asked:
        return {"content": f"The answer is {results[-1].strip()}."}
    return {"content": json.dumps({"answer": "hello"})}


class SlowHello(FakeProvider):
    """The fake provider, answering the hello case after SLOW_SECONDS (a slow model: its wait blocks no other case)."""

    async def _chat(self, request: Request) -> Any:
        body = await request.json()  # Starlette keeps the body, so the parent reads it again
        if "slowly" in last_user_text(list(body.get("messages", []))):
            await asyncio.sleep(SLOW_SECONDS)
        return await super()._chat(request)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, dict[str, str]]]:
    fake = SlowHello(script)
    fake.server.start()
    try:
        with running_pa_dev(tmp_path_factory.mktemp("pa-dev-eval-scorers")) as server:
            with httpx.Client(base_url=server.url, timeout=60) as http:
                yield server, _setup(http, server, fake)
    finally:
        fake.server.stop()


def _setup(http: httpx.Client, server: DevServer, fake: FakeProvider) -> dict[str, str]:
    admin = server.auth_for("ada", "org-admin")
    key = http.post("/api/v1/keys", headers=admin, json={"provider": "fake", "key": "sk-fake-eval-scorers"})
    assert key.status_code == 201, key.text
    fields = {"name": "fake", "kind": "openai-compatible", "base_url": fake.base_url, "trust_tier": 2}
    provider = http.post("/api/v1/admin/providers", headers=admin, json={**fields, "key_id": key.json()["id"]})
    assert provider.status_code == 201, provider.text
    body = {"name": "m", "input_price": PRICE, "output_price": PRICE}
    model = http.post(f"/api/v1/admin/providers/{provider.json()['id']}/models", headers=admin, json=body)
    assert model.status_code == 201, model.text
    # One ordinary run first: a fresh pa dev's first runs are slow to start, and the latency scorer's cases compare
    # against a bound (the slow case's answer is SLOW_SECONDS later, the others' must be well under it).
    chat = http.post("/api/v1/chats", json={}, headers=admin)
    started = http.post(
        f"/api/v1/chats/{chat.json()['id']}/runs", json={"message": "hi", "model": "fake:m"}, headers=admin
    )
    assert started.status_code == 202, started.text
    with http.stream("GET", started.json()["events_url"], headers=admin) as stream:
        types = [json.loads(line[5:])["type"] for line in stream.iter_lines() if line.startswith("data:")]
    assert types[-1] == "RUN_FINISHED", types
    return admin


def _pa(server: DevServer, admin: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {**server.env, "PA_API_URL": server.url, "PA_TOKEN": admin["Authorization"].removeprefix("Bearer ")}
    return subprocess.run([str(PA), *args], cwd=ROOT / "docs", env=env, capture_output=True, text=True, timeout=400)


def _wait(http: httpx.Client, eval_id: str, auth: dict[str, str]) -> dict[str, Any]:
    deadline = time.monotonic() + 300
    while True:
        got = http.get(f"/api/v1/evals/runs/{eval_id}", headers=auth)
        assert got.status_code == 200, got.text
        if got.json()["status"] not in ("queued", "running"):
            return dict(got.json())
        assert time.monotonic() < deadline, got.text
        time.sleep(0.2)  # polling the evaluation's status, with a deadline


def _show(report: dict[str, Any]) -> None:
    for case in report["cases"]:
        print(f"#{case['position'] + 1} {case['input']!r} -> {case['answer']!r} {case['scores']}", end=" ")
        print(f"${case['cost_usd']} {case['latency_ms']} ms {case['status']}")


@pytest.mark.timeout(600)
def test_regex_json_schema_tool_called_latency_and_cost_score_each_case(
    world: tuple[DevServer, dict[str, str]],
) -> None:
    server, admin = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        dataset = http.post("/api/v1/evals/datasets", headers=admin, json={"name": "scored", "cases": CASES})
        assert dataset.status_code == 201, dataset.text
        max_usd = 1.5 * 25 * PRICE / 1e6  # more than one model request, less than two
        scorers = [
            REGEX,
            {"kind": "json_schema", "schema": SCHEMA},
            TOOL,
            {"kind": "latency", "max_ms": SLOW_SECONDS * 1000 - 5000},
            {"kind": "cost", "max_usd": max_usd},
        ]
        body = {"dataset": dataset.json()["id"], "model": "fake:m", "budget_usd": 5, "scorers": scorers}
        accepted = http.post("/api/v1/evals/runs", headers=admin, json=body)
        assert accepted.status_code == 202, accepted.text
        report = _wait(http, accepted.json()["id"], admin)
        _show(report)
        assert report["status"] == "succeeded", report
        six, five, hello = report["cases"]
        assert [c["status"] for c in report["cases"]] == ["succeeded"] * 3
        assert (six["answer"], five["answer"], hello["answer"]) == (
            '{"answer": 42}',
            "The answer is 5.",
            '{"answer": "hello"}',
        )
        assert six["scores"] == {"regex": 1.0, "json_schema": 1.0, "tool_called": 1.0, "latency": 1.0, "cost": 0.0}
        # 2+3 called calculate too, with other arguments: tool_called matches the arguments, not just the name.
        assert five["scores"] == {"regex": 0.0, "json_schema": 0.0, "tool_called": 0.0, "latency": 1.0, "cost": 0.0}
        assert hello["scores"] == {"regex": 0.0, "json_schema": 0.0, "tool_called": 0.0, "latency": 0.0, "cost": 1.0}
        assert hello["latency_ms"] >= SLOW_SECONDS * 1000 > six["latency_ms"]
        assert hello["cost_usd"] <= max_usd < min(six["cost_usd"], five["cost_usd"])  # one request, two
        assert six["score"] == pytest.approx(0.8) and hello["score"] == pytest.approx(0.2)


@pytest.mark.timeout(600)
def test_pa_eval_imports_jsonl_and_runs_with_scorer_parameters(
    world: tuple[DevServer, dict[str, str]], tmp_path: Path
) -> None:
    server, admin = world
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(case) + "\n" for case in CASES[:2]), encoding="utf-8")
    imported = _pa(server, admin, "eval", "dataset", "cli-quiz", str(cases))
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.startswith("dataset cli-quiz (") and imported.stdout.strip().endswith(": 2 cases")
    with httpx.Client(base_url=server.url, timeout=60) as http:
        listed = http.get("/api/v1/evals/datasets", headers=admin).json()["items"]
        dataset_id = next(d["id"] for d in listed if d["name"] == "cli-quiz")
        held = http.get(f"/api/v1/evals/datasets/{dataset_id}", headers=admin).json()["items"]
    assert [(c["input"], c["expected"], c["tags"]) for c in held] == [
        (CASES[0]["input"], "42", ["json"]),
        (CASES[1]["input"], "5", []),
    ]
    again = _pa(server, admin, "eval", "dataset", "cli-quiz", str(cases))
    assert again.returncode != 0 and "409" in again.stderr and "dataset_exists" in again.stderr

    # A bad scorer is the CLI's usage error, before any call (the URL is a closed port).
    for bad, said in (
        ('regex:{"pattern": "("}', "pattern does not compile"),
        ("latency", "needs a positive `max_ms`"),
        ("tool_called:[1]", "must be an object"),
        ('regex:{"patern": "x"}', "unknown field(s) patern"),
        ("vibes", "unknown scorer 'vibes'"),
    ):
        refused = _pa(
            server,
            admin,
            "eval",
            "run",
            "cli-quiz",
            "--model",
            "fake:m",
            "--url",
            "http://127.0.0.1:9",
            "--scorer",
            bad,
        )
        assert refused.returncode == 2, (bad, refused.stdout, refused.stderr)
        assert "argument --scorer" in refused.stderr and said in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr

    scorers = [
        'regex:{"pattern": "^\\\\{\\"answer\\": 4\\\\d\\\\}$"}',
        'tool_called:{"tool": "calculate", "arguments": {"expression": "6*7"}}',
        "exact",
        'judge:{"rubric": "answers in JSON", "model": "fake:m"}',
    ]
    ran = _pa(
        server,
        admin,
        "eval",
        "run",
        "cli-quiz",
        "--model",
        "fake:m",
        "--budget",
        "2",
        "--json",
        *(a for s in scorers for a in ("--scorer", s)),
    )
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    _show(report)
    assert report["scorers"] == [
        {"kind": "regex", "pattern": '^\\{"answer": 4\\d\\}$'},
        {"kind": "tool_called", "tool": "calculate", "args": {"expression": "6*7"}},
        {"kind": "exact"},
        {"kind": "judge", "rubric": RUBRIC, "model": "fake:m"},
    ]
    assert [c["scores"] for c in report["cases"]] == [
        {"regex": 1.0, "tool_called": 1.0, "exact": 0.0, "judge": 0.8},
        {"regex": 0.0, "tool_called": 0.0, "exact": 0.0, "judge": 0.1},
    ]
