"""`ask_user` in a chat run (inline), in-process against the live API: a question with a JSON Schema form waits for
its person; another org's user gets 404 for it, an answer that does not fit the schema is 422 and stores nothing,
the fitting one resumes the run with it as the call's result, and the transcript keeps the question with its answer.
A form the model gets wrong is the model's to fix (the call fails saying why, nothing stored)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall

from tests.auth import auth_headers
from tests.scripted import scripted_model
from tests.sse import read_events

FORM = {
    "question": "How much should I refund?",
    "schema": {
        "type": "object",
        "required": ["amount"],
        "properties": {"amount": {"type": "integer", "minimum": 1}, "reason": {"type": "string"}},
    },
}


def _returns(messages: list[ModelMessage]) -> list[Any]:
    return [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]


async def refund_script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    """First a form that cannot be asked (choices and a schema), then the right one, then the refund."""
    results = _returns(messages)
    if not results:
        bad = {**FORM, "choices": ["10", "20"]}
        yield {0: DeltaToolCall(name="ask_user", json_args=json.dumps(bad), tool_call_id="q0")}
    elif len(results) == 1:  # the tool said what was wrong with the form
        yield {0: DeltaToolCall(name="ask_user", json_args=json.dumps(FORM), tool_call_id="q1")}
    else:
        yield f"Refunding {json.dumps(results[-1].content, sort_keys=True)}."


async def _until(http: httpx.AsyncClient, url: str, headers: dict[str, str], name: str) -> list[dict[str, Any]]:
    """The run's events from its start until the CUSTOM event `name`, or (name RUN_FINISHED) its last RUN_FINISHED
    that is not an interrupt."""
    events: list[dict[str, Any]] = []
    async with http.stream("GET", url, headers=headers, timeout=60) as stream:
        assert stream.status_code == 200
        async for line in stream.aiter_lines():
            if not line.startswith("data:"):
                continue
            events.append(json.loads(line[5:]))
            last = events[-1]
            if last.get("name") == name:
                return events
            if name == "RUN_FINISHED" and last["type"] == name and last["outcome"]["type"] != "interrupt":
                return events
    raise AssertionError(f"the stream ended before {name}: {events[-3:]}")


async def test_a_chat_run_asks_with_a_schema_form_and_goes_on_with_the_fitting_answer(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    owner, stranger = make_tenant(), make_tenant()
    headers = auth_headers(owner)
    with scripted_model(refund_script) as (model, _):
        chat = (await http.post("/api/v1/chats", json={"title": "refund"}, headers=headers)).json()
        started = await http.post(
            f"/api/v1/chats/{chat['id']}/runs",
            json={"message": "Refund the customer", "model": model, "tools": ["ask_user"]},
            headers=headers,
        )
        assert started.status_code == 202, started.text
        events_url = started.json()["events_url"]
        asked = await _until(http, events_url, headers, "question_asked")
        question = asked[-1]["value"]
        assert (question["question"], question["schema"], question["tool_call_id"]) == (
            FORM["question"],
            FORM["schema"],
            "q1",
        )
        url = f"/api/v1/questions/{question['question_id']}"

        theirs = await http.post(url, json={"answer": {"amount": 5}}, headers=auth_headers(stranger))
        assert (theirs.status_code, theirs.json()["code"]) == (404, "question_not_found")
        assert (await http.get("/api/v1/questions", headers=auth_headers(stranger))).json()["items"] == []
        for wrong in ({"amount": 0}, {"reason": "no amount"}, "250"):
            refused = await http.post(url, json={"answer": wrong}, headers=headers)
            assert (refused.status_code, refused.json()["code"]) == (422, "answer_invalid"), refused.text
        pending = (await http.get("/api/v1/questions", headers=headers)).json()["items"]
        assert [(q["id"], q["status"], q["answer"]) for q in pending] == [(question["question_id"], "pending", None)]

        answered = await http.post(url, json={"answer": {"amount": 250, "reason": "late"}}, headers=headers)
        assert answered.status_code == 200, answered.text
        events = await _until(http, events_url, headers, "RUN_FINISHED")
        transcript = (await http.get(f"/api/v1/chats/{chat['id']}/messages", headers=headers)).json()

    text = "".join(e.get("delta", "") for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text.endswith('Refunding {"amount": 250, "reason": "late"}.')
    said = next(e["value"] for e in events if e.get("name") == "question_answered")
    assert (said["status"], said["answer"]) == ("answered", {"amount": 250, "reason": "late"})
    calls = [c for item in transcript["items"] for c in item.get("tool_calls") or []]
    assert [c["id"] for c in calls] == ["q0", "q1"]
    assert "question" not in calls[0]  # the form the model got wrong never became a question
    assert (calls[1]["question"]["status"], calls[1]["question"]["answer"]) == (
        "answered",
        {"amount": 250, "reason": "late"},
    )


async def _ask_once(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    if not _returns(messages):
        yield {
            0: DeltaToolCall(name="ask_user", json_args=json.dumps({"question": "Which colour?"}), tool_call_id="c1")
        }
    else:
        yield f"Painting it {_returns(messages)[-1].content}."


async def test_the_feed_announces_a_question_to_its_person(http: httpx.AsyncClient, make_tenant: Any) -> None:
    tenant = make_tenant()
    headers = auth_headers(tenant)
    with scripted_model(_ask_once) as (model, _):
        chat = (await http.post("/api/v1/chats", json={"title": "paint"}, headers=headers)).json()
        connected = asyncio.Event()
        feed = asyncio.create_task(read_events(http, "/api/v1/feed", headers, limit=2, connected=connected, timeout=60))
        await connected.wait()
        body = {"message": "Paint the fence", "model": model, "tools": ["ask_user"]}
        started = await http.post(f"/api/v1/chats/{chat['id']}/runs", json=body, headers=headers)
        assert started.status_code == 202, started.text
        announced = await asyncio.wait_for(feed, 30)
        asked = await _until(http, started.json()["events_url"], headers, "question_asked")
        question_id = asked[-1]["value"]["question_id"]
        answered = await http.post(f"/api/v1/questions/{question_id}", json={"answer": "green"}, headers=headers)
        assert answered.status_code == 200, answered.text
        await _until(http, started.json()["events_url"], headers, "RUN_FINISHED")

    assert [f.data["name"] for f in announced] == ["run_started", "question_asked"]
    assert announced[1].data["value"] == {
        "question_id": question_id,
        "run_id": started.json()["run_id"],
        "chat_id": chat["id"],
        "question": "Which colour?",
    }
