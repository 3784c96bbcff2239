"""`/v1/responses` on `pa dev` with the official `openai` SDK (issue 32): a whole response with the agent's own
tool, `previous_response_id` continuing a conversation whose history stays stored, a client tool round trip,
structured output, input items; in the background: a stream the client leaves mid-way and resumes with
`starting_after` (every event exactly once, at every cut point), an approval the run waits for until it is decided
through the API, and cancel."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import openai
import pytest

from tests.e2e.openai_world import SCHEMA, World, script
from tests.e2e.pa_dev import running_pa_dev
from tests.fake_provider import running_fake_provider

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with (
        running_fake_provider(script) as fake,
        running_fake_provider(script) as cheap,
        running_pa_dev(tmp_path_factory.mktemp("pa-dev-responses")) as server,
    ):
        world = World(server, fake, cheap)
        world.agent(slug="calculator", tools=["calculate"])
        world.agent(slug="careful", tools=["calculate"], approval={"calculate": "always"})
        world.agent(slug="asker", tools=["ask_user"])
        yield world
        world.http.close()


def _dump(event: Any) -> dict[str, Any]:
    return dict(event.model_dump(mode="json", exclude_none=True))


def _wait_for_approval(world: World, run_id: str) -> str:
    return _wait_for_approval_of(world, world.member, run_id)


def _wait_for_approval_of(world: World, auth: dict[str, str], run_id: str) -> str:
    """The run's pending approval, read from its AG-UI stream as it is announced (no polling)."""
    with world.http.stream("GET", f"/api/v1/runs/{run_id}/events", headers=auth) as events:
        for line in events.iter_lines():
            if line.startswith("data:"):
                event = json.loads(line[5:])
                if event.get("type") == "CUSTOM" and event.get("name") == "approval_requested":
                    return str(event["value"]["approval_id"])
    raise AssertionError("the run ended without asking for an approval")


def test_a_whole_response_and_a_conversation_continued_by_previous_response_id(world: World) -> None:
    client = world.client()
    first = client.responses.create(model="calculator", input="calc please")
    assert first.status == "completed" and first.output_text == "Result: 42"
    assert first.usage is not None and first.usage.total_tokens == 50
    assert client.responses.retrieve(first.id).output_text == "Result: 42"
    items = client.responses.input_items.list(first.id).data
    assert [(i.type, i.role) for i in items] == [("message", "user")]  # type: ignore[union-attr]
    before = len(world.fake.requests)
    second = client.responses.create(model="calculator", input="say hello", previous_response_id=first.id)
    assert second.output_text == "Hello from the fake model."
    sent = world.fake.requests[before]["messages"]
    texts = [str(m.get("content")) for m in sent]
    assert any("calc please" in t for t in texts) and any("Result: 42" in t for t in texts)  # stored, not resent
    runs = {r["id"]: r for r in world.http.get("/api/v1/runs", headers=world.member).json()["items"]}
    first_run, second_run = runs[_uuid(first.id)], runs[_uuid(second.id)]
    assert first_run["chat_id"] == second_run["chat_id"] and second_run["trigger_source"] == "openai_api"


def _uuid(response_id: str) -> str:
    hexed = response_id.removeprefix("resp_")
    return f"{hexed[:8]}-{hexed[8:12]}-{hexed[12:16]}-{hexed[16:20]}-{hexed[20:]}"


def test_a_client_function_call_is_answered_with_a_function_call_output(world: World) -> None:
    client = world.client()
    asked = client.responses.create(model="fake:m", input="what is the weather?", tools=[WEATHER])  # type: ignore[list-item]
    calls = [item for item in asked.output if item.type == "function_call"]
    assert asked.status == "completed" and len(calls) == 1 and calls[0].name == "get_weather"
    answered = client.responses.create(
        model="fake:m",
        previous_response_id=asked.id,
        input=[{"type": "function_call_output", "call_id": calls[0].call_id, "output": "sunny, 21 C"}],
        tools=[WEATHER],  # type: ignore[list-item]
    )
    assert answered.output_text == "Result: sunny, 21 C"
    with pytest.raises(openai.BadRequestError) as orphan:
        client.responses.create(
            model="fake:m", input=[{"type": "function_call_output", "call_id": "nope", "output": "x"}]
        )
    assert orphan.value.param == "input[0].tool_call_id"


def test_structured_output_through_text_format(world: World) -> None:
    answer = world.client().responses.create(
        model="fake:m",
        input="structured, please",
        text={"format": {"type": "json_schema", "name": "weather", "schema": SCHEMA}},
    )
    assert json.loads(answer.output_text) == {"city": "Paris", "celsius": 21}


def test_a_background_stream_left_mid_way_resumes_with_starting_after_each_event_once(world: World) -> None:
    client = world.client()
    seen: list[dict[str, Any]] = []
    with client.responses.create(model="calculator", input="calc please", stream=True, background=True) as stream:
        for event in stream:
            seen.append(_dump(event))
            if event.type == "response.output_text.delta":
                break  # the client goes away mid-answer (after its first text); the run does not
    response_id = seen[0]["response"]["id"]
    rest = [
        _dump(e)
        for e in client.responses.retrieve(response_id, stream=True, starting_after=seen[-1]["sequence_number"])
    ]
    events = seen + rest
    assert seen[-1]["type"] == "response.output_text.delta" and rest[0]["type"] != "response.output_text.delta"
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert events[-1]["type"] == "response.completed"
    assert "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta") == "Result: 42"
    assert events[-1]["response"]["output"][-1]["content"][0]["text"] == "Result: 42"
    for cut in range(-1, len(events)):  # every cut point: the resumed tail is exactly what followed it
        tail = [_dump(e) for e in client.responses.retrieve(response_id, stream=True, starting_after=cut)]
        assert tail == events[cut + 1 :], f"resumed after {cut}"


def test_a_background_response_waits_for_an_approval_decided_through_the_api(world: World) -> None:
    client = world.client()
    waiting = client.responses.create(model="careful", input="calc carefully", background=True)
    assert waiting.background and waiting.status in ("queued", "in_progress")
    approval = _wait_for_approval(world, _uuid(waiting.id))
    assert client.responses.retrieve(waiting.id).status == "in_progress"
    decided = world.http.post(f"/api/v1/approvals/{approval}", headers=world.member, json={"decision": "approve"})
    assert decided.status_code == 200, decided.text
    events = [_dump(e) for e in client.responses.retrieve(waiting.id, stream=True)]
    assert events[-1]["type"] == "response.completed"
    assert client.responses.retrieve(waiting.id).output_text == "Result: 42"


def test_cancel_stops_a_background_response_and_only_those(world: World) -> None:
    client = world.client()
    waiting = client.responses.create(model="careful", input="calc carefully", background=True)
    _wait_for_approval(world, _uuid(waiting.id))
    with pytest.raises(openai.ConflictError) as busy:  # continuing a response still in progress
        client.responses.create(model="careful", input="and then?", previous_response_id=waiting.id)
    assert busy.value.code == "run_in_progress"
    client.responses.cancel(waiting.id)
    assert client.responses.retrieve(waiting.id).status == "cancelled"
    done = client.responses.create(model="fake:m", input="hi")
    with pytest.raises(openai.BadRequestError):
        client.responses.cancel(done.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve("resp_0123")
    other = world.client(world.server.auth_for("eve", "user"))
    with pytest.raises(openai.NotFoundError):
        other.responses.retrieve(done.id)
    outsider = world.client(world.server.auth_for("mallory", "org-admin", org="elsewhere"))
    with pytest.raises(openai.NotFoundError):
        outsider.responses.retrieve(done.id)


def test_too_many_open_streams_is_429_with_retry_after_in_openais_shape(world: World) -> None:
    streamer = world.server.auth_for("sam", "user")
    client = world.client(streamer)
    waiting = client.responses.create(model="careful", input="calc carefully", background=True)
    _wait_for_approval_of(world, streamer, _uuid(waiting.id))
    url = f"/v1/responses/{waiting.id}?stream=true"
    with ExitStack() as held:
        for _ in range(10):  # PA_SSE_MAX_CONNECTIONS_PER_USER's default: each open stream holds a slot
            assert held.enter_context(world.http.stream("GET", url, headers=streamer)).status_code == 200
        with pytest.raises(openai.RateLimitError) as refused:
            client.responses.retrieve(waiting.id, stream=True)
    assert refused.value.code == "rate_limit_exceeded" and refused.value.type == "rate_limit_error"
    assert int(refused.value.response.headers["retry-after"]) >= 1
    client.responses.cancel(waiting.id)


def test_a_background_response_asks_a_question_answered_through_the_responses_api(world: World) -> None:
    client = world.client()
    waiting = client.responses.create(model="asker", input="which city should I visit?", background=True)
    with client.responses.retrieve(waiting.id, stream=True) as stream:
        asked = next(e for e in stream if e.type == "response.output_item.done" and e.item.type == "function_call")
    assert asked.item.name == "ask_user"  # type: ignore[union-attr]
    now = client.responses.retrieve(waiting.id)
    question = next(i for i in now.output if i.type == "function_call")
    assert now.status == "in_progress" and question.call_id == asked.item.call_id  # type: ignore[union-attr]
    assert json.loads(question.arguments) == {"question": "Which city?", "choices": ["Paris", "Rome"]}

    def answer(text: str) -> Any:
        item = {"type": "function_call_output", "call_id": question.call_id, "output": text}
        return client.responses.create(model="asker", previous_response_id=waiting.id, input=[item])  # type: ignore[list-item]

    with pytest.raises(openai.BadRequestError) as mismatch:
        answer("Oslo")
    assert mismatch.value.code == "answer_invalid" and mismatch.value.param == "input[0].output"
    assert answer("Rome").id == waiting.id  # the same response goes on
    events = [_dump(e) for e in client.responses.retrieve(waiting.id, stream=True)]
    assert events[-1]["type"] == "response.completed"
    assert client.responses.retrieve(waiting.id).output_text == "Result: Rome"


def test_a_streamed_client_function_call_and_its_output_continuing_the_stream(world: World) -> None:
    client = world.client()
    with client.responses.create(model="fake:m", input="what is the weather?", tools=[WEATHER], stream=True) as stream:  # type: ignore[list-item]
        events = [_dump(e) for e in stream]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    deltas = [e for e in events if e["type"] == "response.function_call_arguments.delta"]
    done = [e for e in events if e["type"] == "response.function_call_arguments.done"]
    assert deltas and len(done) == 1 and done[0]["name"] == "get_weather"
    assert "".join(d["delta"] for d in deltas) == done[0]["arguments"]
    assert json.loads(done[0]["arguments"]) == {"city": "Paris"}
    added = next(e["item"] for e in events if e["type"] == "response.output_item.added")
    item = next(e["item"] for e in events if e["type"] == "response.output_item.done")
    assert added["type"] == item["type"] == "function_call" and added["status"] == "in_progress"
    assert item["status"] == "completed" and item["name"] == "get_weather" and item["call_id"] == added["call_id"]
    assert {d["item_id"] for d in deltas} == {done[0]["item_id"]} == {item["id"]}
    final = events[-1]["response"]
    assert events[-1]["type"] == "response.completed" and final["output"] == [item]
    output = {"type": "function_call_output", "call_id": item["call_id"], "output": "sunny, 21 C"}
    with client.responses.create(
        model="fake:m",
        previous_response_id=final["id"],
        input=[output],
        tools=[WEATHER],
        stream=True,  # type: ignore[list-item]
    ) as stream:
        answer = [_dump(e) for e in stream]
    text = "".join(e["delta"] for e in answer if e["type"] == "response.output_text.delta")
    assert text == "Result: sunny, 21 C" and answer[-1]["response"]["previous_response_id"] == final["id"]
    sent = world.fake.requests[-1]["messages"]
    assert [m["role"] for m in sent if m["role"] != "system"] == ["user", "assistant", "tool"]
    assert sent[-1]["tool_call_id"] == item["call_id"] and sent[-1]["content"] == "sunny, 21 C"


def test_the_response_repeats_its_request_and_its_instructions_reach_the_model(world: World) -> None:
    client = world.client()
    before = len(world.fake.requests)
    first = client.responses.create(
        model="fake:m",
        input="say hello",
        instructions="Answer like a pirate.",
        store=False,
        tool_choice="none",
        tools=[WEATHER],  # type: ignore[list-item]
        metadata={"ticket": "T-1"},
    )
    sent = world.fake.requests[before]
    assert any(m["role"] == "system" and "Answer like a pirate." in str(m["content"]) for m in sent["messages"])
    assert "get_weather" not in json.dumps(sent.get("tools", []))  # `none`: the caller's tools are not offered
    for shown in (first, client.responses.retrieve(first.id)):
        assert shown.instructions == "Answer like a pirate." and shown.store is False
        assert shown.tool_choice == "none" and shown.previous_response_id is None
        assert shown.metadata == {"ticket": "T-1"}
    second = client.responses.create(model="fake:m", input="say hello again", previous_response_id=first.id)
    again = client.responses.retrieve(second.id)
    assert again.previous_response_id == first.id and again.instructions is None
    assert again.store is True and again.tool_choice == "auto"


def test_tool_choice_names_a_function_and_the_response_shows_it(world: World) -> None:
    client = world.client()
    named = {"type": "function", "name": "get_weather"}
    called = client.responses.create(model="fake:m", input="what is the weather?", tools=[WEATHER], tool_choice=named)  # type: ignore[list-item,arg-type]
    assert world.fake.requests[-1]["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert [i.type for i in called.output] == ["function_call"]
    assert client.responses.retrieve(called.id).tool_choice.model_dump(exclude_none=True) == named  # type: ignore[union-attr]
    with pytest.raises(openai.BadRequestError) as hosted:
        client.responses.create(model="fake:m", input="hi", tools=[WEATHER], tool_choice={"type": "file_search"})  # type: ignore[list-item,arg-type]
    assert hosted.value.code == "unsupported_value" and hosted.value.param == "tool_choice"
