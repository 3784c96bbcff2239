"""Tool policies on `pa dev`, over HTTP only (issue 33): an org admin's deny rule over a call's arguments holds in a
headless run a signed webhook started (durable: the call is refused, nobody is asked) and inside a sub-agent; a
call the rule does not match goes on to the usual gates; the approval audit names the run, call and rule. The
offline demo model calls the tool a `/tool NAME {json}` message names."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.pa_dev import DevServer, running_pa_dev
from tests.workflows import sign

DEMO = "offline:demo"
BROADCAST = {"to": "everyone", "text": "the office is closed"}
pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    with running_pa_dev(tmp_path_factory.mktemp("pa-dev-policies")) as server:
        yield server


@pytest.fixture(scope="module")
def rule(dev: DevServer) -> dict[str, Any]:
    with httpx.Client(base_url=dev.url, headers=dev.auth_for("alice", "org-admin"), timeout=30) as http:
        bad = http.post(
            "/api/v1/admin/tool-policies", json={"tool": "send_demo_message", "when": "args.to ==", "effect": "deny"}
        )
        assert bad.status_code == 422 and bad.json()["details"]["column"] == 9, bad.text
        created = http.post(
            "/api/v1/admin/tool-policies",
            json={"tool": "send_demo_*", "when": 'args.to == "everyone"', "effect": "deny", "reason": "no broadcasts"},
        )
        assert created.status_code == 201, created.text
        return dict(created.json())


def _follow(http: Any, url: str) -> list[dict[str, Any]]:
    """The run's events until RUN_FINISHED (its end, or its pause for a person: the stream itself stays open while
    the run waits) or RUN_ERROR."""
    events: list[dict[str, Any]] = []
    with http.stream("GET", url) as stream:
        assert stream.status_code == 200
        for line in stream.iter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line[5:]))
                if events[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR"):
                    break
    return events


def _tool(name: str, args: dict[str, Any]) -> str:
    return f"/tool {name} {json.dumps(args)}"


def _denied_calls(dev: DevServer, rule_id: str) -> list[dict[str, Any]]:
    with httpx.Client(base_url=dev.url, headers=dev.auth_for("alice", "org-admin"), timeout=30) as http:
        trail = http.get("/api/v1/admin/approval-audit", params={"limit": 100})
        assert trail.status_code == 200, trail.text
    return [i for i in trail.json()["items"] if i["action"] == "policy_denied" and i["rule_id"] == rule_id]


def test_a_deny_rule_holds_in_a_webhook_run_without_asking_anyone(dev: DevServer, rule: dict[str, Any]) -> None:
    with httpx.Client(base_url=dev.url, headers=dev.auth_for("bob"), timeout=60) as http:
        body = {"name": "announcer", "prompt_template": "{{body.command}}", "model": DEMO}
        workflow = http.post("/api/v1/workflows", json=body)
        assert workflow.status_code == 201, workflow.text
        hook_body = json.dumps({"command": _tool("send_demo_message", BROADCAST)}).encode()
        secret = workflow.json()["signing_secret"]
        hook = http.post(f"/api/v1/hooks/{workflow.json()['id']}", content=hook_body, headers=sign(secret, hook_body))
        assert hook.status_code == 202, hook.text
        events = _follow(http, hook.json()["events_url"])
        run = http.get(f"/api/v1/runs/{hook.json()['run_id']}").json()
    assert run["mode"] == "durable" and run["status"] == "succeeded"
    assert [e for e in events if e.get("name") == "approval_requested"] == []  # refused, not asked about
    results = [str(e.get("content", "")) for e in events if e["type"] == "TOOL_CALL_RESULT"]
    assert any("tool policy: no broadcasts" in r for r in results), results
    assert [d["run_id"] for d in _denied_calls(dev, rule["id"])].count(hook.json()["run_id"]) == 1


def test_a_deny_rule_holds_inside_a_sub_agent_and_other_calls_meet_the_usual_gates(
    dev: DevServer, rule: dict[str, Any]
) -> None:
    with httpx.Client(base_url=dev.url, headers=dev.auth_for("carol"), timeout=60) as http:
        chat = http.post("/api/v1/chats", json={"title": "policies"}).json()
        task = _tool("send_demo_message", BROADCAST)
        started = http.post(
            f"/api/v1/chats/{chat['id']}/runs",
            json={"message": _tool("delegate", {"task": task}), "mode": "inline", "model": DEMO},
        )
        assert started.status_code == 202, started.text
        events = _follow(http, started.json()["events_url"])
        finished = [e["value"] for e in events if e.get("name") == "subagent_finished"]
        assert finished and "no broadcasts" in json.dumps(finished)
        assert [e for e in events if e.get("name") == "approval_requested"] == []
        denied = _denied_calls(dev, rule["id"])
        children = [c["id"] for c in http.get(started.json()["status_url"]).json()["children"]]
        assert len(children) == 1 and children[0] in [d["run_id"] for d in denied]

        # the same tool to someone else: not this rule's business, so the gates ask a person as before
        other = http.post(
            f"/api/v1/chats/{chat['id']}/runs",
            json={"message": _tool("send_demo_message", {"to": "team", "text": "hi"}), "mode": "inline", "model": DEMO},
        )
        assert other.status_code == 202, other.text
        asked = [e for e in _follow(http, other.json()["events_url"]) if e.get("name") == "approval_requested"]
        assert len(asked) == 1 and asked[0]["value"]["args"]["to"] == "team"
