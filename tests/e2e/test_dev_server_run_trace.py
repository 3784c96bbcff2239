"""A run's trace on `pa dev` as a user reads it (issue 37 item 5): with a scripted OpenAI-compatible model on
loopback, a run that calls a tool, searches the knowledge and asks a person before an acting call shows those
steps on its timeline in the order they happened, with times that only go forward, each gate saying what it
decided and why; the demo MCP server's tool is offered with the schema its server gave; in a long chat over a small
context window the trace shows the history as it was sent after the cut (the older turns dropped, exactly what the
model received); a person's recalled memory and a passage from their document show as what a request was sent,
with its cost; and another org's member gets 404."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.feed_listener import FeedListener
from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.fake_provider import FakeProvider, Reply, last_user_text, running_fake_provider

pytestmark = pytest.mark.timeout(420)
ORG = "acme"  # `pa dev` registers its demo MCP server for this org
TOOLS = ["calculate", "search_knowledge", "send_demo_message", "demo_weather"]
LONG = "counting along with the otters " * 50
PRICED = {"name": "m", "input_price": 2.0, "output_price": 4.0}
MEMORY = "Keeps a pet otter called Wilbur"
NOTE = b"Sea otters of the Pacific raft together in kelp beds and hold paws while they sleep."


def script(messages: list[dict[str, Any]]) -> Reply:
    """`go`: calculate, then search the knowledge, then send a message (an acting call a person approves), then
    answer; any other turn: echoed (a long chat)."""
    asked = last_user_text(messages)
    if asked == "where do otters sleep?":  # search the knowledge once, then answer
        if any(m.get("role") == "tool" for m in messages):
            return {"content": "In kelp beds."}
        return {"tool_calls": [{"name": "search_knowledge", "arguments": {"query": "where sea otters sleep"}}]}
    if asked != "go":
        return {"content": f"You said: {asked}"}
    last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    done = sum(1 for m in messages[last_user:] if m.get("role") == "tool")
    steps: list[Reply] = [
        {"tool_calls": [{"name": "calculate", "arguments": {"expression": "6*7"}}]},
        {"tool_calls": [{"name": "search_knowledge", "arguments": {"query": "otter habitats"}}]},
        {"tool_calls": [{"name": "send_demo_message", "arguments": {"to": "team", "text": "otters at six"}}]},
        {"content": "Sent: the answer is 42."},
    ]
    return steps[min(done, len(steps) - 1)]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, FakeProvider]]:
    with running_fake_provider(script) as fake:
        with running_pa_dev(tmp_path_factory.mktemp("pa-dev-run-trace"), org=ORG) as server:
            with httpx.Client(base_url=server.url, timeout=60) as http:
                _model(http, server.auth_for("boss", "org-admin", org=ORG), fake, PRICED)
            yield server, fake


def _model(http: httpx.Client, admin: dict[str, str], fake: FakeProvider, model: dict[str, Any]) -> None:
    """The fake provider and one model of it for the admin's org (a model's window is the smallest of its run's
    fallbacks', so the small one lives in an org of its own)."""
    fields = {"name": "fake", "kind": "openai-compatible", "base_url": fake.base_url, "trust_tier": 2}
    key = http.post("/api/v1/keys", headers=admin, json={"provider": "fake", "key": "sk-trace-test-key"})
    provider = http.post("/api/v1/admin/providers", headers=admin, json={**fields, "key_id": key.json()["id"]})
    assert provider.status_code == 201, provider.text
    models = f"/api/v1/admin/providers/{provider.json()['id']}/models"
    assert http.post(models, headers=admin, json=model).status_code == 201


def _events(http: httpx.Client, url: str, headers: dict[str, str]) -> list[dict[str, Any]]:
    """The run's events until it ends or pauses for a person (RUN_FINISHED) or fails."""
    events: list[dict[str, Any]] = []
    with http.stream("GET", url, headers=headers) as stream:
        for line in stream.iter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:]))
                if events[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR"):
                    break
    return events


def _ended(http: httpx.Client, run_id: str, headers: dict[str, str]) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        run = http.get(f"/api/v1/runs/{run_id}", headers=headers).json()
        if run["status"] in ("succeeded", "failed", "cancelled"):
            return dict(run)
        time.sleep(0.2)  # polling the run's status, with a bound
    raise AssertionError("the run did not end in 120 s")


def test_the_trace_shows_tool_retrieval_and_gate_steps_in_order_and_mcp_schemas(
    world: tuple[DevServer, FakeProvider],
) -> None:
    server, _ = world
    member = server.auth_for("tess", org=ORG)
    with httpx.Client(base_url=server.url, timeout=60) as http:
        chat = http.post("/api/v1/chats", json={}, headers=member).json()
        body = {"message": "go", "model": "fake:m", "tools": TOOLS, "mode": "inline"}
        started = http.post(f"/api/v1/chats/{chat['id']}/runs", json=body, headers=member)
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        events = _events(http, started.json()["events_url"], member)
        asked = [e for e in events if e.get("name") == "approval_requested"]
        assert [a["value"]["tool"] for a in asked] == ["send_demo_message"], asked
        approval = f"/api/v1/approvals/{asked[0]['value']['approval_id']}"
        decided = http.post(approval, headers=member, json={"decision": "approve"})
        assert decided.status_code == 200, decided.text
        ended = _ended(http, run_id, member)
        assert ended["status"] == "succeeded", ended.get("error")

        trace = http.get(f"/api/v1/runs/{run_id}/trace", headers=member)
        assert trace.status_code == 200, trace.text
        outsider = server.auth_for("eve", "org-admin", org="elsewhere")
        assert http.get(f"/api/v1/runs/{run_id}/trace", headers=outsider).status_code == 404
        colleague = server.auth_for("colleague", org=ORG)
        assert http.get(f"/api/v1/runs/{run_id}/trace", headers=colleague).status_code == 404
    body = trace.json()
    steps = [(s["kind"], s["label"]) for s in body["steps"] if s["kind"] != "side_request"]
    assert steps == [
        ("model_request", "Model request 1"),
        ("tool_call", "calculate"),
        ("model_request", "Model request 2"),
        ("retrieval", "search_knowledge"),
        ("model_request", "Model request 3"),
        ("gate", "Approval: send_demo_message"),
        ("tool_call", "send_demo_message"),
        ("model_request", "Model request 4"),
    ], body["steps"]
    times = [(s["start_ms"], s["start_ms"] + s["duration_ms"]) for s in body["steps"]]
    assert all(start >= 0 and end >= start for start, end in times)
    assert [t[0] for t in times] == sorted(t[0] for t in times)  # monotonic
    spans = [(s["start_ms"], s["start_ms"] + s["duration_ms"]) for s in body["steps"] if s["kind"] != "side_request"]
    for earlier, later in zip(spans, spans[1:], strict=False):
        assert later[0] >= earlier[1] - 5, (earlier, later)  # one after another (5 ms: the two clocks' rounding)
    by_label = {s["label"]: s for s in body["steps"]}
    gate = by_label["Approval: send_demo_message"]
    assert gate["outcome"] == "approved" and "confidence" in (gate["detail"] or ""), gate
    assert by_label["search_knowledge"]["outcome"] == "0 passages"
    assert by_label["calculate"]["outcome"] == "ok" and by_label["calculate"]["request_index"] == 0
    assert by_label["Model request 1"]["outcome"] == "m"
    # No tool argument or result in a step: a step names a tool, a decision and why.
    assert "otters at six" not in json.dumps(body["steps"]) and "otter habitats" not in json.dumps(body["steps"])

    tools = {t["name"]: t for t in body["tools"]}
    weather = tools["demo_weather"]
    assert (weather["source"], weather["server"]) == ("mcp", "demo")
    assert "city" in weather["parameters"]["properties"] and weather["description"].startswith("Today's weather")
    assert tools["calculate"]["parameters"]["properties"]["expression"]
    assert len(body["requests"]) == 4 and all(r["usage"]["cost_usd"] > 0 for r in body["requests"])


def test_the_trace_shows_the_history_as_sent_after_the_context_cut(world: tuple[DevServer, FakeProvider]) -> None:
    server, fake = world
    member = server.auth_for("lena", org="longchats")
    with httpx.Client(base_url=server.url, timeout=60) as http:
        admin = server.auth_for("root", "org-admin", org="longchats")
        _model(http, admin, fake, {"name": "small", "context_window": 2500})
        chat = http.post("/api/v1/chats", json={}, headers=member).json()
        run_id = ""
        for turn in range(5):
            body = {"message": f"turn {turn}: {LONG}", "model": "fake:small", "tools": []}
            started = http.post(f"/api/v1/chats/{chat['id']}/runs", json=body, headers=member)
            assert started.status_code == 202, started.text
            run_id = started.json()["run_id"]
            assert _events(http, started.json()["events_url"], member)[-1]["type"] == "RUN_FINISHED"
        trace = http.get(f"/api/v1/runs/{run_id}/trace", headers=member).json()
    (request,) = trace["requests"]
    assert request["cut"] and request["history_from"] > 0, request
    history = trace["history"]
    dropped = json.dumps(history[: request["history_from"]])
    sent = history[request["history_from"] : request["history_messages"]]
    assert "turn 0:" in dropped and "turn 0:" not in json.dumps(sent)
    assert "turn 4:" in json.dumps(sent[-1])
    # Exactly what the model received: the kept turns' texts, and none of the dropped ones.
    received = " ".join(str(m.get("content")) for m in fake.requests[-1]["messages"])
    assert "turn 0:" not in received
    kept = [p["content"] for m in sent for p in m["parts"] if p["kind"] == "user-prompt"]
    assert kept and all(text.split(":")[0] in received for text in kept)
    if request["summary"] is not None:  # a routing model summarised the dropped turns: the model was sent that
        assert request["summary"][:40] in received


def _upload_note(url: str, auth: dict[str, str]) -> str:
    """A personal text document, indexed (its feed says `ready`)."""
    body = {"filename": "otters.txt", "content_type": "text/plain", "size": len(NOTE), "collection": "personal"}
    created = httpx.post(f"{url}/api/v1/knowledge/documents", headers=auth, json=body, timeout=30)
    assert created.status_code == 201, created.text
    upload, document = created.json()["upload"], created.json()["document"]
    with FeedListener(url, auth) as feed:
        sent = httpx.post(upload["url"], data=upload["fields"], files={"file": ("otters.txt", NOTE)}, timeout=30)
        assert sent.status_code == 204, sent.text
        assert feed.until_done(document["id"])["status"] == "ready"
    return str(document["id"])


def test_the_trace_shows_the_recalled_memory_the_retrieved_passage_and_the_cost(
    world: tuple[DevServer, FakeProvider],
) -> None:
    server, fake = world
    member = server.auth_for("rita", org="recalls")
    with httpx.Client(base_url=server.url, timeout=60) as http:
        _model(http, server.auth_for("root", "org-admin", org="recalls"), fake, PRICED)
        saved = http.post("/api/v1/me/memories", headers=member, json={"text": MEMORY})
        assert saved.status_code == 201, saved.text
        _upload_note(server.url, member)
        chat = http.post("/api/v1/chats", json={}, headers=member).json()
        body = {"message": "where do otters sleep?", "model": "fake:m", "tools": ["search_knowledge"]}
        started = http.post(f"/api/v1/chats/{chat['id']}/runs", json=body, headers=member)
        assert started.status_code == 202, started.text
        assert _events(http, started.json()["events_url"], member)[-1]["type"] == "RUN_FINISHED"
        trace = http.get(f"/api/v1/runs/{started.json()['run_id']}/trace", headers=member)
        assert trace.status_code == 200, trace.text
    first, second = trace.json()["requests"]
    # The memory is in what both requests were told, apart from the spec's instructions; the model got it too.
    for request in (first, second):
        assert MEMORY in request["memories"] and MEMORY in request["instructions"], request
        assert MEMORY not in trace.json()["instructions"]
    received = json.dumps(fake.requests[-1]["messages"])
    assert MEMORY in received
    # The first request carried no passage; the second was sent the retrieved one, as the model received it.
    assert first["passages"] == [] and first["response"][0]["tool"] == "search_knowledge"
    (passage,) = second["passages"]
    assert "hold paws while they sleep" in passage and "otters.txt" in passage, passage
    assert "hold paws while they sleep" in received
    assert second["response"][0]["content"] == "In kelp beds."
    # Each request's cost: the model's prices (2 and 4 USD a million tokens) times its tokens.
    for request in (first, second):
        usage = request["usage"]
        expected = (2.0 * usage["input_tokens"] + 4.0 * usage["output_tokens"]) / 1_000_000
        assert usage["input_tokens"] > 0 and usage["cost_usd"] == pytest.approx(expected), usage
