"""Agents on `pa dev` as a user runs it (issue 31), with an OpenAI-compatible model on loopback (the org's
provider, registered by an org admin) that records every request: a chat bound to an agent sends the agent's
instructions and offers exactly its tools; publishing version 2 changes the next run and rolling back to 1
restores it; a run in flight (waiting for an approval the agent made stricter) keeps its version; the same agent
started by a webhook, `/mcp` `start_run` and `/agui/{slug}` sends the same instructions; an `output_schema` gives a
validated object in the run, and a clear RUN_ERROR when the model cannot produce one."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import httpx
import pytest

from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.fake_provider import FakeProvider, Reply, last_user_text, running_fake_provider, tool_results
from tests.platform_mcp import mcp_session

V1 = "You are the contract reviewer, version one. Quote the clause you mean."
V2 = "You are the contract reviewer, version two. Answer in one line."
SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": ["ok", "risky"]}, "clauses": {"type": "integer"}},
    "required": ["verdict", "clauses"],
}


def script(messages: list[dict[str, Any]]) -> Reply:
    """`calc`: one `calculate` call, then an answer; `structured`: a valid `final_result`; `shapeless`: text only
    (never the structured answer); anything else: a short answer."""
    asked = last_user_text(messages)
    if "calc" in asked and not tool_results(messages):
        return {"tool_calls": [{"name": "calculate", "arguments": {"expression": "6*7"}}]}
    if "structured" in asked:
        return {"tool_calls": [{"name": "final_result", "arguments": {"verdict": "risky", "clauses": 3}}]}
    return {"content": "Reviewed."}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, FakeProvider]]:
    with running_fake_provider(script) as fake, running_pa_dev(tmp_path_factory.mktemp("pa-dev-agents")) as server:
        yield server, fake


def _system(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "system")


def _tools(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools", [])}


def _events(http: httpx.Client, url: str, auth: dict[str, str]) -> list[dict[str, Any]]:
    with http.stream("GET", url, headers=auth) as stream:
        assert stream.status_code == 200
        return [json.loads(line[5:]) for line in stream.iter_lines() if line.startswith("data:")]


def _wait_for(check: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


class Org:
    def __init__(self, server: DevServer, fake: FakeProvider, http: httpx.Client) -> None:
        self.http, self.fake = http, fake
        self.admin, self.member = server.auth_for("ada", "org-admin"), server.auth_for("max", "user")
        if not any(
            p["name"] == "fake" for p in http.get("/api/v1/admin/providers", headers=self.admin).json()["items"]
        ):
            provider = http.post(
                "/api/v1/admin/providers",
                headers=self.admin,
                json={"name": "fake", "kind": "openai-compatible", "base_url": fake.base_url, "trust_tier": 2},
            )
            assert provider.status_code == 201, provider.text
            model = http.post(
                f"/api/v1/admin/providers/{provider.json()['id']}/models", headers=self.admin, json={"name": "m"}
            )
            assert model.status_code == 201, model.text

    def agent(self, **fields: Any) -> dict[str, Any]:
        body = {"name": "Reviewer", "model": "fake:m", "visibility": "org", **fields}
        created = self.http.post("/api/v1/agents", json=body, headers=self.admin)
        assert created.status_code == 201, created.text
        return dict(created.json())

    def chat_run(self, slug: str, message: str, chat_id: str | None = None) -> tuple[str, dict[str, Any]]:
        if chat_id is None:
            chat = self.http.post("/api/v1/chats", json={"agent": slug}, headers=self.member)
            assert chat.status_code == 201, chat.text
            chat_id = chat.json()["id"]
        started = self.http.post(f"/api/v1/chats/{chat_id}/runs", json={"message": message}, headers=self.member)
        assert started.status_code == 202, started.text
        return chat_id, started.json()

    def finish(self, accepted: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        events = _events(self.http, accepted["events_url"], self.member)
        run = self.http.get(f"/api/v1/runs/{accepted['run_id']}", headers=self.member).json()
        return events, run

    def requests_since(self, count: int) -> list[dict[str, Any]]:
        return self.fake.requests[count:]


@pytest.mark.timeout(420)
def test_a_bound_chat_runs_the_published_version_and_a_run_in_flight_keeps_its_own(
    world: tuple[DevServer, FakeProvider],
) -> None:
    server, fake = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        org = Org(server, fake, http)
        agent = org.agent(
            slug="reviewer", instructions=V1, tools=["calculate", "current_time"], approval={"calculate": "always"}
        )
        before = len(fake.requests)
        chat_id, accepted = org.chat_run("reviewer", "hello")
        events, run = org.finish(accepted)
        assert events[-1]["type"] == "RUN_FINISHED" and run["agent"] == {
            "id": agent["id"],
            "slug": "reviewer",
            "version": 1,
        }
        sent = org.requests_since(before)
        assert sent and all(V1 in _system(b) for b in sent)
        assert _tools(sent[0]) == {"calculate", "current_time"}  # exactly the agent's tools

        # Version 2 published: the next run of the same chat sends it.
        patched = http.patch(f"/api/v1/agents/{agent['id']}", json={"instructions": V2}, headers=org.admin)
        assert patched.json()["published_version"] == 2
        before = len(fake.requests)
        _, accepted = org.chat_run("reviewer", "hello again", chat_id)
        _, run = org.finish(accepted)
        assert run["agent"]["version"] == 2
        assert all(V2 in _system(b) and V1 not in _system(b) for b in org.requests_since(before))

        # Rolled back to 1: the next run sends version 1 again.
        rolled = http.post(f"/api/v1/agents/{agent['id']}/versions/1/publish", headers=org.admin)
        assert rolled.json()["published_version"] == 1
        before = len(fake.requests)
        _, accepted = org.chat_run("reviewer", "and again", chat_id)
        _, run = org.finish(accepted)
        assert run["agent"]["version"] == 1 and all(V1 in _system(b) for b in org.requests_since(before))

        # A run in flight keeps its version: it waits for the approval the agent asks for on `calculate` while
        # version 2 is published, and its next request after the approval still sends version 1.
        before = len(fake.requests)
        _, accepted = org.chat_run("reviewer", "calc please", chat_id)
        run_url = f"/api/v1/runs/{accepted['run_id']}"
        _wait_for(lambda: http.get(run_url, headers=org.member).json()["status"] == "waiting", "the approval")
        http.post(f"/api/v1/agents/{agent['id']}/versions/2/publish", headers=org.admin).raise_for_status()
        pending = http.get("/api/v1/approvals", headers=org.member).json()["items"]
        (approval,) = [a for a in pending if a["run_id"] == accepted["run_id"]]
        assert approval["tool"] == "calculate"
        decided = http.post(f"/api/v1/approvals/{approval['id']}", json={"decision": "approve"}, headers=org.member)
        assert decided.status_code == 200, decided.text
        _wait_for(lambda: http.get(run_url, headers=org.member).json()["status"] == "succeeded", "the run's end")
        in_flight = org.requests_since(before)
        assert len(in_flight) == 2 and all(V1 in _system(b) and V2 not in _system(b) for b in in_flight)
        assert http.get(run_url, headers=org.member).json()["agent"]["version"] == 1


@pytest.mark.timeout(420)
def test_a_webhook_mcp_and_agui_send_the_same_agents_instructions(world: tuple[DevServer, FakeProvider]) -> None:
    server, fake = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        org = Org(server, fake, http)
        instructions = f"You are the triage agent {uuid.uuid4().hex[:8]}."
        org.agent(slug="triage", instructions=instructions, tools=["current_time"])

        # A webhook of a workflow that names the agent (and no instructions of its own).
        created = http.post(
            "/api/v1/workflows",
            json={"name": "triage-hook", "agent": "triage", "bearer_token": True},
            headers=org.member,
        )
        assert created.status_code == 201, created.text
        assert created.json()["agent"] == "triage"
        before = len(fake.requests)
        hook = http.post(
            f"/api/v1/hooks/{created.json()['id']}",
            json={"ticket": 7},
            headers={"Authorization": f"Bearer {created.json()['bearer_token']}"},
        )
        assert hook.status_code == 202, hook.text
        run_url = f"/api/v1/runs/{hook.json()['run_id']}"
        _wait_for(lambda: http.get(run_url, headers=org.member).json()["status"] == "succeeded", "the webhook's run")
        assert http.get(run_url, headers=org.member).json()["agent"]["slug"] == "triage"
        webhook_sent = org.requests_since(before)

        # `/mcp`: `list_agents` names it, `start_run(agent=...)` runs it.
        token = http.post("/api/v1/me/tokens", json={"name": "mcp"}, headers=org.member).json()["token"]
        before = len(fake.requests)

        async def over_mcp() -> tuple[list[str], str]:
            async with mcp_session(server.url, {"Authorization": f"Bearer {token}"}) as session:
                listed = (await session.call_tool("list_agents", {})).structured_content or {}
                started = await session.call_tool("start_run", {"message": "triage this", "agent": "triage"})
                assert not started.is_error, started.content
                return [a["slug"] for a in listed["agents"]], str((started.structured_content or {})["run_id"])

        slugs, mcp_run = anyio.run(over_mcp)
        assert "triage" in slugs and "assistant" in slugs
        mcp_url = f"/api/v1/runs/{mcp_run}"
        _wait_for(lambda: http.get(mcp_url, headers=org.member).json()["status"] == "succeeded", "the /mcp run")
        mcp_sent = org.requests_since(before)

        # `/agui/{slug}`.
        before = len(fake.requests)
        body = {
            "threadId": f"t-{uuid.uuid4().hex[:8]}",
            "runId": "r-1",
            "state": {},
            "messages": [{"id": "m1", "role": "user", "content": "triage via ag-ui"}],
            "tools": [],
            "context": [],
            "forwardedProps": {},
        }
        with http.stream("POST", "/api/v1/agui/triage", json=body, headers=org.member) as stream:
            assert stream.status_code == 200
            frames = [json.loads(line[5:]) for line in stream.iter_lines() if line.startswith("data:")]
        assert frames[-1]["type"] == "RUN_FINISHED"
        agui_sent = org.requests_since(before)
        unknown = http.post("/api/v1/agui/no-such-agent", json=body, headers=org.member)
        assert (unknown.status_code, unknown.json()["code"]) == (404, "agent_not_found")

    for sent in (webhook_sent, mcp_sent, agui_sent):
        assert sent and all(instructions in _system(b) for b in sent)
        assert _tools(sent[0]) == {"current_time"}


@pytest.mark.timeout(300)
def test_an_output_schema_gives_a_validated_object_or_a_clear_run_error(world: tuple[DevServer, FakeProvider]) -> None:
    server, fake = world
    with httpx.Client(base_url=server.url, timeout=60) as http:
        org = Org(server, fake, http)
        org.agent(slug="grader", instructions="Grade the contract.", tools=[], output_schema=SCHEMA)
        before = len(fake.requests)
        _, accepted = org.chat_run("grader", "structured verdict please")
        events, run = org.finish(accepted)
        assert events[-1]["type"] == "RUN_FINISHED", events[-3:]
        assert run["status"] == "succeeded" and run["output"] == {"verdict": "risky", "clauses": 3}
        assert _tools(org.requests_since(before)[0]) == {"final_result"}  # the schema is offered as the answer's form

        _, accepted = org.chat_run("grader", "shapeless answer please")
        events, run = org.finish(accepted)
        assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "output_invalid", events[-1]
        assert run["status"] == "failed" and run["error"]["code"] == "output_invalid" and run["output"] is None
