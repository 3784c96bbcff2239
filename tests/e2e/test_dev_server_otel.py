"""Traces over OTLP (issue 37 item 5) on `pa dev`, received by a fake collector on loopback that decodes the
protobuf export as a collector does: a run whose model calls a tool and searches the knowledge yields GenAI spans
(the agent run, each model request with its model and tokens, each tool call) and ours (the request's ledger
figures with its cost, each gate decision: the tool review's and the classification gate's, the retrieval); no
message text, tool argument or key in any of it (`tests/unit/test_otel_off.py`: without PA_OTEL_ENDPOINT the SDK
is not even imported)."""

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


def script(messages: list[dict[str, Any]]) -> Reply:
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
        env = {"PA_OTEL_ENDPOINT": collector.endpoint}
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


def _setup(http: httpx.Client, server: DevServer, fake: FakeProvider) -> None:
    admin = server.auth_for("ada", "org-admin")
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
