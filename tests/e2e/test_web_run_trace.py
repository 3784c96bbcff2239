"""The run trace view in the web chat (issue 37 item 5): a run whose acting tool call waited for a person's approval
shows its steps on a timeline — each bar with its start and duration in text beside it — then, per model request,
what it was sent (the user's turn, the history as sent) and the tools offered, the demo MCP server's with the schema
its server gave; axe finds no serious violation."""

from __future__ import annotations

import json
import re
import time
from typing import Any

from tests.e2e.web_chat_stack import DevStack, describe_violations, screenshot, serious_violations
from tests.e2e.web_chat_steps import sign_in

MESSAGE = "/tool send_demo_message " + json.dumps({"to": "team", "text": "otters at six"})
TOOLS = ["calculate", "send_demo_message", "demo_weather"]


def _approved_run(web: DevStack) -> str:
    """A run of the offline demo model that calls an acting tool, approved by its owner; its id once it ended."""
    with web.api(web.token()) as api:
        chat = api.post("/api/v1/chats", json={"title": "trace"}).json()
        body = {"message": MESSAGE, "model": "offline:demo", "tools": TOOLS, "mode": "inline"}
        started = api.post(f"/api/v1/chats/{chat['id']}/runs", json=body)
        assert started.status_code == 202, started.text
        run_id = str(started.json()["run_id"])
        deadline = time.monotonic() + 120
        while True:
            run = api.get(f"/api/v1/runs/{run_id}").json()
            pending = api.get("/api/v1/approvals").json()["items"]
            asked = [a for a in pending if a["run_id"] == run_id]
            if asked:
                assert api.post(f"/api/v1/approvals/{asked[0]['id']}", json={"decision": "approve"}).is_success
            if run["status"] in ("succeeded", "failed", "cancelled"):
                assert run["status"] == "succeeded", run.get("error")
                return run_id
            assert time.monotonic() < deadline, run
            time.sleep(0.2)  # polling the run and its approvals, with a bound


def test_the_trace_shows_the_timeline_and_what_a_model_request_was_sent(page: Any, web: DevStack) -> None:
    from playwright.sync_api import expect

    run_id = _approved_run(web)
    sign_in(page)
    page.goto(f"/runs/{run_id}/trace")
    trace = page.get_by_test_id("run-trace")
    timeline = trace.get_by_test_id("trace-timeline")
    expect(timeline).to_be_visible()
    labels = timeline.get_by_test_id("trace-step-label")
    expect(labels.filter(has_text="Model request 1")).to_have_count(1)
    gate = labels.filter(has_text="Approval: send_demo_message")
    expect(gate).to_contain_text(re.compile(r"starts at \d+(\.\d+)? m?s · takes \d+(\.\d+)? m?s · approved"))
    expect(labels.filter(has_text="send_demo_message").filter(has_text="Tool call")).to_have_count(1)
    expect(labels.filter(has_text="Model request 2")).to_have_count(1)
    # the bars are drawn on one axis, hidden from assistive technology (the text beside each says the same)
    expect(timeline.locator(".track[aria-hidden='true'] .bar")).to_have_count(labels.count())

    first = trace.get_by_test_id("trace-request").first
    expect(first.get_by_test_id("trace-sent").filter(has_text="otters at six")).to_be_visible()
    first.get_by_test_id("trace-history").locator("summary").first.click()
    expect(first.get_by_test_id("trace-history-sent")).to_contain_text("otters at six")

    trace.get_by_test_id("trace-tools").locator("summary").first.click()
    weather = trace.get_by_test_id("trace-tool").filter(has_text="demo_weather")
    expect(weather).to_contain_text("server demo")
    weather.get_by_text("Parameters of demo_weather").click()
    expect(weather.get_by_test_id("trace-tool-schema")).to_contain_text('"city"')
    screenshot(page, "run-trace-timeline")
    violations = serious_violations(page)
    assert not violations, describe_violations(violations)
