"""Traces over OTLP (issue 37 item 5) on `pa dev`, received by a fake collector on loopback that decodes the
protobuf export as a collector does: a run whose model calls a tool and searches the knowledge yields GenAI spans
(the agent run, each model request with its model and tokens, each tool call) and ours (the request's ledger
figures with its cost, each gate decision: the tool review's and the classification gate's, the retrieval); no
message text, tool argument or key in any of it (`tests/unit/test_otel_off.py`: without PA_OTEL_ENDPOINT the SDK
is not even imported). The operator allows content here (`PA_OTEL_CONTENT`): only an org that turned it on gets its
prompts and answers in its spans, never in a restricted chat; a durable run's steps are one trace under one root."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.fake_provider import FakeProvider, Reply, running_fake_provider, tool_results
from tests.otlp_collector import FakeCollector, SpanSeen, running_collector

KEY = "sk-otel-provider-key-never-in-a-span-7777"
PROMPT = "Confidential question about zebra-quokka-1234: what is 6 times 7?"
ANSWER = "The product is forty-two, said the aardvark-9876."


def _asked(messages: list[dict[str, Any]]) -> str:
    return " ".join(str(m.get("content")) for m in messages if m.get("role") == "user")


def script(messages: list[dict[str, Any]]) -> Reply:
    marker = next((word for word in _asked(messages).split() if word.startswith("otel-")), None)
    if marker is not None:  # the content and durable runs: their own words and arguments, never the first run's
        if not tool_results(messages):
            return {"tool_calls": [{"name": "calculate", "arguments": {"expression": "3+4"}}]}
        return {"content": f"Seven, answers {marker}-reply."}
    if not tool_results(messages):
        return {
            "tool_calls": [
                {"name": "calculate", "arguments": {"expression": "6*7"}},
                {"name": "search_knowledge", "arguments": {"query": "zebra-quokka-1234"}},
            ]
        }
    return {"content": ANSWER}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, FakeProvider, FakeCollector]]:
    with running_collector() as collector, running_fake_provider(script) as fake:
        env = {"PA_OTEL_ENDPOINT": collector.endpoint, "PA_OTEL_CONTENT": "true"}  # allowed; no org turned it on
        with running_pa_dev(tmp_path_factory.mktemp("pa-dev-otel"), env_extra=env) as server:
            yield server, fake, collector


def _until(check: Callable[[], Any], what: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)  # the exporter sends in batches: wait for the one that holds it, with a deadline
    raise AssertionError(f"not seen in {timeout}s: {what}")


def _setup(http: httpx.Client, server: DevServer, fake: FakeProvider, org: str = "e2e") -> None:
    admin = server.auth_for("ada", "org-admin", org=org)
    key = http.post("/api/v1/keys", headers=admin, json={"provider": "fake", "key": KEY})
    fields = {"name": "fake", "kind": "openai-compatible", "base_url": fake.base_url, "trust_tier": 2}
    provider = http.post("/api/v1/admin/providers", headers=admin, json={**fields, "key_id": key.json()["id"]})
    assert provider.status_code == 201, provider.text
    model = {"name": "m", "input_price": 2.0, "output_price": 4.0}
    assert http.post(f"/api/v1/admin/providers/{provider.json()['id']}/models", headers=admin, json=model).is_success


def _named(spans: list[SpanSeen], prefix: str) -> list[SpanSeen]:
    return [s for s in spans if s.name.startswith(prefix)]


@pytest.mark.timeout(300)
def test_a_run_exports_genai_spans_without_content(world: tuple[DevServer, FakeProvider, FakeCollector]) -> None:
    server, fake, collector = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        _setup(http, server, fake)
        chat = http.post("/api/v1/chats", json={}, headers=server.auth).json()
        started = http.post(
            f"/api/v1/chats/{chat['id']}/runs", json={"message": PROMPT, "model": "fake:m"}, headers=server.auth
        )
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        with http.stream("GET", started.json()["events_url"], headers=server.auth) as stream:
            types = [json.loads(line[5:])["type"] for line in stream.iter_lines() if line.startswith("data:")]
        assert types[-1] == "RUN_FINISHED", types

    def complete() -> list[SpanSeen] | None:
        spans = collector.snapshot()
        chats, figures = _named(spans, "chat "), [e for s in spans for e in s.events if e[0] == "pa.model_response"]
        return spans if len(chats) >= 2 and len(figures) >= 2 and _named(spans, "retrieval") else None

    spans = _until(complete, "the run's spans")
    for span in spans:
        print(span.name, sorted(span.attributes), [e[0] for e in span.events])
    agent = _named(spans, "invoke_agent")
    assert agent and agent[0].attributes.get("gen_ai.agent.name") == "assistant"
    chats = _named(spans, "chat ")
    for request in chats:
        assert request.attributes["gen_ai.operation.name"] == "chat"
        assert request.attributes["gen_ai.request.model"] == "m"
        assert request.attributes["gen_ai.usage.input_tokens"] == 20
        assert request.attributes["gen_ai.usage.output_tokens"] == 5
        assert request.duration_ns > 0  # the request's latency
    figures = [e[1] for s in spans for e in s.events if e[0] == "pa.model_response"]
    assert {f["pa.run_id"] for f in figures} == {run_id}
    assert sorted(f["pa.request_index"] for f in figures) == [0, 1]
    assert all(f["pa.cost_usd"] == pytest.approx((20 * 2.0 + 5 * 4.0) / 1_000_000) for f in figures)
    tools = {s.attributes.get("gen_ai.tool.name") for s in _named(spans, "execute_tool")}
    assert {"calculate", "search_knowledge"} <= tools
    reviews = [s for s in _named(spans, "gate ") if s.name != "gate classification"]
    gates = {s.attributes["gen_ai.tool.name"]: s.attributes["pa.gate.decision"] for s in reviews}
    assert gates == {"calculate": "allow", "search_knowledge": "allow"}
    classification = _named(spans, "gate classification")  # the model resolved for each engine step
    assert classification and all(s.attributes["pa.gate.decision"] == "allow" for s in classification)
    assert {s.attributes["gen_ai.request.model"] for s in classification} >= {"fake:m"}
    (retrieval,) = _named(spans, "retrieval")
    assert retrieval.attributes["pa.retrieval.passages"] == 0

    sent = collector.raw_bytes()  # the wire bytes: no message text, no tool argument, no key anywhere
    for secret in ("zebra-quokka-1234", "aardvark-9876", "6*7", KEY):
        assert secret.encode() not in sent, secret


CONTENT_ORG = "otel-content"


def _run(http: httpx.Client, auth: dict[str, str], chat: dict[str, Any], message: str, mode: str = "inline") -> str:
    """Start a run on the fake model and read its stream to the end; its id."""
    body = {"message": message, "model": "fake:m", "mode": mode}
    started = http.post(f"/api/v1/chats/{chat['id']}/runs", json=body, headers=auth)
    assert started.status_code == 202, started.text
    with http.stream("GET", started.json()["events_url"], headers=auth) as stream:
        types = [json.loads(line[5:])["type"] for line in stream.iter_lines() if line.startswith("data:")]
    assert types[-1] == "RUN_FINISHED", types
    return str(started.json()["run_id"])


def _run_trace(collector: FakeCollector, run_id: str, done: Callable[[list[SpanSeen]], bool]) -> list[SpanSeen]:
    """Every span of the traces that name the run (an attribute or an event with its `pa.run_id`), once `done`."""

    def find() -> list[SpanSeen] | None:
        spans = collector.snapshot()
        ours = {s.trace_id for s in spans if s.attributes.get("pa.run_id") == run_id}
        ours |= {s.trace_id for s in spans for e in s.events if e[1].get("pa.run_id") == run_id}
        found = [s for s in spans if s.trace_id in ours]
        return found if found and done(found) else None

    found: list[SpanSeen] = _until(find, f"the spans of run {run_id}")
    return found


def _answered(spans: list[SpanSeen]) -> bool:
    return len(_named(spans, "chat ")) >= 2 and bool(_named(spans, "invoke_agent"))


@pytest.mark.timeout(300)
def test_content_only_where_the_org_turned_it_on_and_never_in_a_restricted_chat(
    world: tuple[DevServer, FakeProvider, FakeCollector],
) -> None:
    server, fake, collector = world
    admin = server.auth_for("olga", "org-admin", org=CONTENT_ORG)
    with httpx.Client(base_url=server.url, timeout=60) as http:
        _setup(http, server, fake, org=CONTENT_ORG)
        assert http.get("/api/v1/admin/settings", headers=admin).json()["trace_content"] is False  # off by default
        off = _run(http, admin, http.post("/api/v1/chats", json={}, headers=admin).json(), "otel-before asks 3+4")
        turned = http.put("/api/v1/admin/settings", json={"trace_content": True}, headers=admin)
        assert turned.status_code == 200 and turned.json()["trace_content"] is True, turned.text
        assert http.get("/api/v1/admin/settings", headers=admin).json()["trace_content"] is True
        normal = http.post("/api/v1/chats", json={}, headers=admin).json()
        on = _run(http, admin, normal, "otel-normal asks 3+4")
        restricted = http.post("/api/v1/chats", json={"classification": "restricted"}, headers=admin)
        assert restricted.status_code == 201 and restricted.json()["classification"] == "restricted", restricted.text
        secret = _run(http, admin, restricted.json(), "otel-restricted asks 3+4")

    def text_of(spans: list[SpanSeen]) -> bytes:
        return b"".join(s.raw for s in spans)

    before = _run_trace(collector, off, _answered)
    assert b"otel-before" not in text_of(before) and b"3+4" not in text_of(before)  # the org had not turned it on
    shown = _run_trace(collector, on, lambda spans: b"otel-normal-reply" in text_of(spans))
    assert b"otel-normal asks 3+4" in text_of(shown)  # the prompt, and the answer (waited for above)
    chats = _named(shown, "chat ")
    assert chats and all(c.attributes["gen_ai.request.model"] == "m" for c in chats)  # the GenAI names still
    hidden = _run_trace(collector, secret, _answered)
    for word in (b"otel-restricted", b"3+4", b"Seven"):  # a restricted chat's spans carry no text, org's choice or not
        assert word not in text_of(hidden), word
    hidden_chats = _named(hidden, "chat ")
    assert _named(hidden, "execute_tool") and all(c.attributes["gen_ai.usage.input_tokens"] == 20 for c in hidden_chats)
    for word in (b"otel-restricted", b"otel-before"):  # nor anywhere else in what was sent
        assert word not in collector.raw_bytes(), word


@pytest.mark.timeout(300)
def test_a_durable_runs_steps_are_one_trace_under_one_root(
    world: tuple[DevServer, FakeProvider, FakeCollector],
) -> None:
    server, fake, collector = world
    auth = server.auth_for("dora", "org-admin", org="otel-durable")
    with httpx.Client(base_url=server.url, timeout=60) as http:
        _setup(http, server, fake, org="otel-durable")
        chat = http.post("/api/v1/chats", json={}, headers=auth).json()
        run_id = _run(http, auth, chat, "otel-durable asks 3+4", mode="durable")

    spans = _run_trace(collector, run_id, lambda found: any(s.name == "run" for s in found))
    for span in spans:
        print(span.name, span.trace_id, span.span_id, span.parent_id)
    assert len({s.trace_id for s in spans}) == 1  # one trace holds everything that names the run
    (root,) = [s for s in spans if not s.parent_id]  # and it has one root: the run's
    assert root.name == "run" and root.attributes["pa.run_id"] == run_id
    assert root.attributes["pa.run.status"] == "succeeded" and root.attributes["pa.run.mode"] == "durable"
    ids = {s.span_id for s in spans}
    assert all(s.parent_id in ids for s in spans if s is not root), "every other span hangs from the tree"
    steps = _named(spans, "step ")
    assert steps and all(s.parent_id == root.span_id for s in steps)  # each Task's span right under the root
    assert {s.attributes["pa.step.action"] for s in steps} >= {"advance"}
    by_id = {s.span_id: s for s in spans}

    def under_a_step(span: SpanSeen) -> bool:
        while span.parent_id and span.parent_id != root.span_id:
            span = by_id[span.parent_id]
        return span.name.startswith("step ")

    agent_spans = _named(spans, "invoke_agent") + _named(spans, "chat ") + _named(spans, "execute_tool")
    assert {s.attributes.get("gen_ai.tool.name") for s in _named(spans, "execute_tool")} == {"calculate"}
    assert len(_named(spans, "chat ")) >= 2 and all(under_a_step(s) for s in agent_spans)
    launch_gate = [s for s in _named(spans, "gate classification") if s.parent_id == root.span_id]
    assert launch_gate, "the launch's gate decision is in the run's trace too"
    assert root.duration_ns >= max(s.duration_ns for s in steps)  # from the launch to the last step's end
