"""The offline demo model: every path works without a provider key (streamed text, a tool, an approval)."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.auth import auth_headers
from tests.runs import start_run
from tests.sse import Frame, read_events


async def test_demo_model_is_offered_and_labelled(http: httpx.AsyncClient, make_tenant: Any) -> None:
    models = (await http.get("/api/v1/models", headers=auth_headers(make_tenant()))).json()["items"]
    demo = [m for m in models if m["id"] == "offline:demo"]
    assert demo and demo[0]["offline_demo"] is True and "demo" in demo[0]["label"].lower()


async def test_demo_model_streams_text_and_calls_a_tool(
    http: httpx.AsyncClient, make_tenant: Any, monkeypatch: Any
) -> None:
    monkeypatch.setenv("PA_DEMO_DELAY_MS", "0")
    headers = auth_headers(make_tenant())
    run = await start_run(http, headers, "offline:demo", message="what time is it?")
    frames = await read_events(http, run["events_url"], headers)
    assert [f.data["toolCallName"] for f in frames if f.type == "TOOL_CALL_START"] == ["current_time"]
    text = "".join(f.data.get("delta", "") for f in frames if f.type == "TEXT_MESSAGE_CONTENT")
    assert "offline demo model" in text and frames[-1].type == "RUN_FINISHED"


async def test_demo_model_asks_before_it_acts(http: httpx.AsyncClient, make_tenant: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("PA_DEMO_DELAY_MS", "0")
    headers = auth_headers(make_tenant())
    run = await start_run(http, headers, "offline:demo", message="Please send the weekly report to the team")
    frames: list[Frame] = []
    while not any(f.data.get("name") == "approval_requested" for f in frames):
        frames = await read_events(http, run["events_url"], headers, limit=len(frames) + 1)
    approval = next(f for f in frames if f.data.get("name") == "approval_requested").data["value"]
    assert approval["tool"] == "send_demo_message"
    decided = await http.post(
        f"/api/v1/approvals/{approval['approval_id']}", json={"decision": "approve"}, headers=headers
    )
    assert decided.status_code == 200
    rest = await read_events(http, run["events_url"], headers, last_event_id=frames[-1].id)
    assert rest[-1].type == "RUN_FINISHED" and rest[-1].data["outcome"] == {"type": "success"}
    assert "Done: (demo) message to team@example.com queued" in "".join(f.data.get("delta", "") for f in rest)


def _text(frames: list[Frame]) -> str:
    return "".join(f.data.get("delta", "") for f in frames if f.type == "TEXT_MESSAGE_CONTENT")


async def test_the_tool_command_calls_the_named_tool_and_quotes_its_result(
    http: httpx.AsyncClient, make_tenant: Any, monkeypatch: Any
) -> None:
    monkeypatch.setenv("PA_DEMO_DELAY_MS", "0")
    headers = auth_headers(make_tenant())
    run = await start_run(http, headers, "offline:demo", message='/tool calculate {"expression": "6 * 7"}')
    frames = await read_events(http, run["events_url"], headers)
    assert [f.data["toolCallName"] for f in frames if f.type == "TOOL_CALL_START"] == ["calculate"]
    args = "".join(f.data["delta"] for f in frames if f.type == "TOOL_CALL_ARGS")
    assert json.loads(args) == {"expression": "6 * 7"}
    assert [f.data["content"] for f in frames if f.type == "TOOL_CALL_RESULT"] == ["42"]
    assert "`calculate` returned: 42" in _text(frames) and frames[-1].type == "RUN_FINISHED"


async def test_the_tool_command_without_args_and_for_a_tool_not_offered(
    http: httpx.AsyncClient, make_tenant: Any, monkeypatch: Any
) -> None:
    monkeypatch.setenv("PA_DEMO_DELAY_MS", "0")
    headers = auth_headers(make_tenant())
    run = await start_run(http, headers, "offline:demo", message="/tool current_time")
    frames = await read_events(http, run["events_url"], headers)
    assert [f.data["toolCallName"] for f in frames if f.type == "TOOL_CALL_START"] == ["current_time"]
    assert "`current_time` returned: 20" in _text(frames) and frames[-1].type == "RUN_FINISHED"

    run = await start_run(http, headers, "offline:demo", message='/tool no_such_tool {"x": 1}')
    frames = await read_events(http, run["events_url"], headers)
    text = _text(frames)
    assert not any(f.type == "TOOL_CALL_START" for f in frames) and frames[-1].type == "RUN_FINISHED"
    assert "`no_such_tool` is not offered" in text and "current_time" in text and "calculate" in text

    run = await start_run(http, headers, "offline:demo", message="/tool calculate {not json")
    frames = await read_events(http, run["events_url"], headers)
    assert "not valid JSON" in _text(frames) and not any(f.type == "TOOL_CALL_START" for f in frames)
