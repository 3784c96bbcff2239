"""`/v1` Chat Completions on `pa dev` as a user runs it, with the official `openai` SDK (issue 32): the models list,
a streamed and a whole completion with the agent's own tool, a client-side tool round trip, structured output,
a denied approval in a synchronous request, OpenAI's error shapes, budgets and tiers.

The org's model is an OpenAI-compatible server on loopback (`tests/fake_provider.py`) that records every request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from tests.e2e.feed_listener import FeedListener
from tests.e2e.openai_world import SCHEMA, WEATHER_TOOL, World, script
from tests.e2e.pa_dev import running_pa_dev
from tests.fake_provider import running_fake_provider
from tests.knowledge import make_pdf


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with (
        running_fake_provider(script) as fake,
        running_fake_provider(script) as cheap,
        running_pa_dev(tmp_path_factory.mktemp("pa-dev-openai")) as server,
    ):
        world = World(server, fake, cheap)
        world.agent(slug="calculator", tools=["calculate"])
        world.agent(slug="careful", tools=["calculate"], approval={"calculate": "always"})
        world.agent(slug="librarian", tools=["search_knowledge"])
        yield world
        world.http.close()


def test_models_lists_the_callers_agents_and_the_models_that_pass_the_floor(world: World) -> None:
    ids = [m.id for m in world.client().models.list()]
    assert {"assistant", "calculator", "careful", "auto", "fake:m", "cheap:m"} <= set(ids)
    assert ids.index("calculator") < ids.index("fake:m")  # agents first
    settings = world.http.get("/api/v1/admin/settings", headers=world.admin).json()
    floor = world.http.put("/api/v1/admin/settings", headers=world.admin, json={**settings, "tier_floor": 1})
    assert floor.status_code == 200, floor.text
    try:
        assert "cheap:m" not in [m.id for m in world.client().models.list()]
    finally:
        world.http.put("/api/v1/admin/settings", headers=world.admin, json=settings)


def test_a_whole_completion_runs_the_agents_own_tool_inside_and_is_a_run_in_the_ledger(world: World) -> None:
    before = len(world.fake.requests)
    completion = world.client().chat.completions.with_raw_response.create(
        model="calculator", messages=[{"role": "user", "content": "calc please"}]
    )
    answer = completion.parse()
    assert answer.choices[0].message.content == "Result: 42"
    assert answer.choices[0].finish_reason == "stop" and not answer.choices[0].message.tool_calls
    assert answer.usage is not None and answer.usage.total_tokens == 50  # two model requests of 25 tokens
    offered = {t["function"]["name"] for t in world.fake.requests[before]["tools"]}
    assert offered == {"calculate"}
    run = world.run(completion.headers["x-run-id"])
    assert run["trigger_source"] == "openai_api" and run["status"] == "succeeded"
    assert run["agent"]["slug"] == "calculator" and run["cost_usd"] >= 0
    listed = world.http.get("/api/v1/runs", headers=world.member).json()["items"]
    assert any(r["id"] == completion.headers["x-run-id"] for r in listed)


def test_a_streamed_completion_sends_the_text_as_it_comes_and_the_usage_last(world: World) -> None:
    stream = world.client().chat.completions.create(
        model="calculator",
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "calc again"}],
        stream=True,
        stream_options={"include_usage": True},
        temperature=0.2,
        max_tokens=64,
        stop=["END"],
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Result: 42"
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["stop"]
    assert not chunks[-1].choices and chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 50
    assert len({c.id for c in chunks}) == 1
    sent = world.fake.requests[-1]
    assert any(m["role"] == "system" and "Be brief." in str(m["content"]) for m in sent["messages"])
    assert sent["temperature"] == 0.2 and sent["stop"] == ["END"]  # passed on to every request of the run
    assert 64 in (sent.get("max_tokens"), sent.get("max_completion_tokens"))


def test_a_client_tool_call_goes_back_to_the_caller_and_its_result_continues_the_answer(world: World) -> None:
    client = world.client()
    messages: list[Any] = [{"role": "user", "content": "what is the weather?"}]
    first = client.chat.completions.create(model="fake:m", messages=messages, tools=[WEATHER_TOOL])
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.tool_calls is not None
    call = choice.message.tool_calls[0]
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Paris"}
    messages += [
        choice.message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "sunny, 21 C"},
    ]
    second = client.chat.completions.create(model="fake:m", messages=messages, tools=[WEATHER_TOOL], stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in second if c.choices) == "Result: sunny, 21 C"
    sent = world.fake.requests[-1]["messages"]
    assert [m["role"] for m in sent if m["role"] != "system"] == ["user", "assistant", "tool"]


def test_structured_output_answers_json_that_matches_the_schema(world: World) -> None:
    answer = world.client().chat.completions.create(
        model="fake:m",
        messages=[{"role": "user", "content": "structured, please"}],
        response_format={"type": "json_schema", "json_schema": {"name": "weather", "schema": SCHEMA}},
    )
    assert json.loads(answer.choices[0].message.content or "") == {"city": "Paris", "celsius": 21}


def test_an_approval_a_synchronous_request_cannot_wait_for_is_denied_and_the_answer_says_so(world: World) -> None:
    answer = world.client().chat.completions.create(
        model="careful", messages=[{"role": "user", "content": "calc carefully"}]
    )
    content = answer.choices[0].message.content or ""
    assert content.startswith("Result: The tool call was not approved")
    assert "`calculate` needs a person's approval" in content and "background" in content


def test_errors_come_in_openais_shape_with_the_statuses_its_sdk_expects(world: World) -> None:
    messages: list[Any] = [{"role": "user", "content": "hi"}]
    with pytest.raises(openai.AuthenticationError) as bad_key:
        openai.OpenAI(base_url=f"{world.server.url}/v1", api_key="pa_pat_nope", max_retries=0).models.list()
    assert bad_key.value.code == "invalid_api_key" and bad_key.value.type == "authentication_error"
    with pytest.raises(openai.NotFoundError) as unknown:
        world.client().chat.completions.create(model="no-such-agent", messages=messages)
    assert unknown.value.code == "model_not_found" and unknown.value.param is None
    with pytest.raises(openai.BadRequestError) as two:
        world.client().chat.completions.create(model="fake:m", messages=messages, n=2)
    assert two.value.param == "n" and two.value.type == "invalid_request_error"
    with pytest.raises(openai.BadRequestError) as orphan:
        world.client().chat.completions.create(
            model="fake:m", messages=[*messages, {"role": "tool", "tool_call_id": "nope", "content": "x"}]
        )
    assert orphan.value.param == "messages[1].tool_call_id" and orphan.value.code == "unknown_tool_call"
    raw = world.http.post("/v1/chat/completions", headers=world.member, content=b"{not json")
    assert raw.status_code == 400 and raw.json()["error"]["type"] == "invalid_request_error"


def test_over_budget_is_429_insufficient_quota_and_nothing_reaches_the_provider(world: World) -> None:
    poor = world.server.auth_for("pat", "user")
    me = world.http.get("/api/v1/me", headers=poor).json()
    cap = world.http.put(
        "/api/v1/admin/budgets", headers=world.admin, json={"scope": "user", "user_id": me["user_id"], "monthly_usd": 0}
    )
    assert cap.status_code == 200, cap.text
    before = len(world.fake.requests)
    with pytest.raises(openai.RateLimitError) as refused:
        world.client(poor).chat.completions.create(model="fake:m", messages=[{"role": "user", "content": "hi"}])
    assert refused.value.code == "insufficient_quota" and refused.value.type == "insufficient_quota"
    assert len(world.fake.requests) == before


def test_a_restricted_agent_never_reaches_a_tier_0_model(world: World) -> None:
    world.agent(slug="secretive", model="cheap:m", classification="restricted")
    before = len(world.cheap.requests)
    with pytest.raises(openai.APIStatusError) as refused:
        world.client().chat.completions.create(model="secretive", messages=[{"role": "user", "content": "hi"}])
    assert 400 <= refused.value.status_code < 500
    assert len(world.cheap.requests) == before
    with pytest.raises(openai.APIStatusError):
        world.client().chat.completions.create(
            model="secretive", messages=[{"role": "user", "content": "hi"}], stream=True
        )
    assert len(world.cheap.requests) == before


def test_an_answer_from_the_knowledge_base_ends_with_its_sources_streamed_or_stored(world: World) -> None:
    data = make_pdf(["Holiday calendar: the office closes on the second Monday of August for the summer party."])
    body = {"filename": "calendar.pdf", "content_type": "application/pdf", "size": len(data)}
    created = world.http.post("/api/v1/knowledge/documents", json=body, headers=world.member)
    assert created.status_code == 201, created.text
    upload, document_id = created.json()["upload"], created.json()["document"]["id"]
    with FeedListener(world.server.url, world.member) as feed:
        sent = httpx.post(upload["url"], data=upload["fields"], files={"file": ("calendar.pdf", data)}, timeout=30)
        assert sent.status_code == 204, sent.text
        assert feed.until_done(document_id)["status"] == "ready"
    messages: list[Any] = [{"role": "user", "content": "what do the docs say about August?"}]
    answer = world.client().chat.completions.create(model="librarian", messages=messages)
    content = answer.choices[0].message.content or ""
    body_text, _, footnote = content.rpartition("\n\nSources:\n")
    assert body_text.startswith("Result: ") and footnote.startswith("[1] calendar.pdf, p. 1") and "\n" not in footnote
    client = world.client()
    streamed = list(client.responses.create(model="librarian", input="what do the docs say?", stream=True))
    final = streamed[-1].response  # type: ignore[union-attr]
    deltas = "".join(e.delta for e in streamed if e.type == "response.output_text.delta")  # type: ignore[union-attr]
    assert final.output[-1].content[0].text.startswith("Sources:\n[1] calendar.pdf, p. 1")  # type: ignore[union-attr]
    assert deltas == client.responses.retrieve(final.id).output_text == final.output_text


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def test_an_image_part_reaches_a_model_that_sees_and_a_model_that_does_not_is_400(world: World) -> None:
    data_url = f"data:image/png;base64,{PNG}"
    content: Any = [
        {"type": "text", "text": "what is in this picture?"},
        {"type": "image_url", "image_url": {"url": data_url}},
    ]
    with running_fake_provider(script) as eyes:
        provider = world.provider("eyes", eyes, 2, tags=("vision",))
        try:
            answer = world.client().chat.completions.create(
                model="eyes:m", messages=[{"role": "user", "content": content}]
            )
            assert answer.choices[0].message.content == "Hello from the fake model."
            user = [m for m in eyes.requests[-1]["messages"] if m["role"] == "user"][-1]
            assert {"type": "image_url", "image_url": {"url": data_url}} in [
                {"type": p["type"], "image_url": {"url": p["image_url"]["url"]}}
                for p in user["content"]
                if p["type"] == "image_url"
            ]
            before = len(world.fake.requests)
            for blind in ("fake:m", "calculator"):  # a model without `vision`, named or an agent's
                with pytest.raises(openai.BadRequestError) as refused:
                    world.client().chat.completions.create(model=blind, messages=[{"role": "user", "content": content}])
                assert refused.value.code == "model_lacks_vision" and refused.value.param == "messages"
            assert len(world.fake.requests) == before  # nothing was sent to it
        finally:
            world.http.delete(f"/api/v1/admin/providers/{provider}", headers=world.admin)


def test_tool_choice_required_or_a_named_function_binds_the_first_model_request(world: World) -> None:
    client = world.client()
    before = len(world.fake.requests)
    forced = client.chat.completions.create(
        model="calculator",
        messages=[{"role": "user", "content": "calc please"}],
        tools=[WEATHER_TOOL],
        tool_choice="required",
    )
    assert forced.choices[0].message.content == "Result: 42"  # the agent's own tool ran; its result answered freely
    first, then = world.fake.requests[before : before + 2]
    assert first["tool_choice"] == "required" and then.get("tool_choice", "auto") == "auto"
    named = {"type": "function", "function": {"name": "get_weather"}}
    called = client.chat.completions.create(
        model="fake:m",
        messages=[{"role": "user", "content": "what is the weather?"}],
        tools=[WEATHER_TOOL],
        tool_choice=named,  # type: ignore[arg-type]
    )
    assert called.choices[0].finish_reason == "tool_calls"
    assert world.fake.requests[-1]["tool_choice"] == named
    messages: Any = [{"role": "user", "content": "hi"}]
    refusals = [
        ({"type": "function", "function": {"name": "nope"}}, "invalid_value"),
        ("sometimes", "invalid_value"),
        ({"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": []}}, "unsupported_value"),
    ]
    for choice, code in refusals:
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(model="fake:m", messages=messages, tools=[WEATHER_TOOL], tool_choice=choice)  # type: ignore[arg-type]
        assert refused.value.code == code and refused.value.param == "tool_choice"
    with pytest.raises(openai.BadRequestError) as toolless:
        client.chat.completions.create(model="fake:m", messages=messages, tool_choice="required")
    assert toolless.value.code == "invalid_value" and toolless.value.param == "tool_choice"
