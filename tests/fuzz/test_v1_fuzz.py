"""`/v1` (the OpenAI-compatible API) under property-based fuzzing: it is left out of the OpenAPI document (OpenAI's own
specification describes its shapes), so schemathesis (`test_openapi_fuzz.py`) never reaches it. Hypothesis posts
malformed and random bodies to `POST /v1/chat/completions` and `POST /v1/responses` — raw bytes, JSON that is not
an object, and objects shaped like OpenAI's requests with random, wrong-typed or missing fields and content parts —
and asks `GET /v1/responses/{id}` (with odd `stream` and `starting_after`), its cancel and its input items for
random ids, against the dev app on loopback.

Every answer must be below 500, and every error must be in OpenAI's shape: `{"error": {"message", "type", "param",
"code"}}`. A request that happens to be valid runs on the offline demo model (an org of its own, no providers)."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.auth import auth_headers

EXAMPLES = 120
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,  # repeatable: the same bodies every run
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=12)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)


def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A field's value as sent: mostly a plausible one (so bodies get past validation into the code behind it),
    sometimes any JSON at all."""
    return st.integers(0, 15).flatmap(lambda pick: json_values if pick == 0 else strategy)


def _object(required: dict[str, Any], optional: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {k: _maybe(v) for k, v in required.items()}, optional={k: _maybe(v) for k, v in optional.items()}
    )


PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()
image_urls = st.sampled_from(
    [
        f"data:image/png;base64,{PNG}",
        "data:image/png;base64,@@@",
        "data:text/plain;base64,aGk=",
        "https://x.test/a.png",
        "ftp://x",
        "",
    ]
)
parts = _object(
    {"type": st.sampled_from(["text", "image_url", "input_text", "input_image", "output_text", "audio", ""])},
    {
        "text": st.text(max_size=30),
        "image_url": st.one_of(image_urls, _object({"url": image_urls}, {"detail": st.text(max_size=5)})),
    },
)
contents = st.one_of(st.text(max_size=40), st.lists(parts, max_size=3), st.none())
functions = _object(
    {"name": st.sampled_from(["get_weather", "calculate", "x" * 65, "bad name", ""])},
    {
        "description": st.text(max_size=20),
        "parameters": st.just({"type": "object", "properties": {}}),
        "strict": st.booleans(),
    },
)
tool_calls = _object(
    {
        "id": st.text(max_size=10),
        "function": _object({"name": st.text(max_size=10)}, {"arguments": st.text(max_size=20)}),
    },
    {"type": st.just("function")},
)
messages = _object(
    {"role": st.sampled_from(["system", "developer", "user", "assistant", "tool", "function", ""])},
    {
        "content": contents,
        "tool_calls": st.lists(tool_calls, max_size=2),
        "tool_call_id": st.text(max_size=10),
        "name": st.text(max_size=8),
    },
)
tool_choices = st.sampled_from(
    [
        "auto",
        "none",
        "required",
        "any",
        {"type": "function", "function": {"name": "get_weather"}},
        {"type": "function", "name": "nope"},
        {"type": "file_search"},
    ]
)
models = st.sampled_from(["auto", "assistant", "offline:demo", "nope", "no:such", "", "a" * 300, "Assistant!"])
formats = _object(
    {"type": st.sampled_from(["text", "json_schema", "json_object", "xml"])},
    {
        "json_schema": _object(
            {"name": st.text(max_size=8)},
            {"schema": st.just({"type": "object", "properties": {"a": {"type": "string"}}})},
        )
    },
)
chat_bodies = _object(
    {"model": models, "messages": st.lists(messages, min_size=0, max_size=4)},
    {
        "stream": st.booleans(),
        "stream_options": _object({}, {"include_usage": st.booleans()}),
        "temperature": st.floats(-1, 3, allow_nan=False),
        "top_p": st.floats(-1, 2, allow_nan=False),
        "max_tokens": st.integers(-5, 2_000_000),
        "stop": st.one_of(st.text(max_size=5), st.lists(st.text(max_size=5), max_size=6)),
        "n": st.integers(0, 3),
        "response_format": formats,
        "tools": st.lists(_object({"type": st.just("function"), "function": functions}, {}), max_size=2),
        "tool_choice": tool_choices,
    },
)
items = _object(
    {"type": st.sampled_from(["message", "function_call", "function_call_output", "reasoning", ""])},
    {
        "role": st.sampled_from(["system", "developer", "user", "assistant", "tool"]),
        "content": contents,
        "call_id": st.text(max_size=10),
        "name": st.text(max_size=10),
        "arguments": st.text(max_size=20),
        "output": st.one_of(
            st.text(max_size=20),
            st.lists(_object({"type": st.just("input_text")}, {"text": st.text(max_size=10)}), max_size=2),
        ),
    },
)
response_ids = st.one_of(
    st.text(max_size=40),
    st.builds(lambda h: f"resp_{h}", st.text(alphabet="0123456789abcdef", min_size=0, max_size=34)),
    st.just("resp_" + "0" * 32),
)
response_bodies = _object(
    {"model": models, "input": st.one_of(st.text(max_size=40), st.lists(items, max_size=3))},
    {
        "instructions": st.text(max_size=40),
        "previous_response_id": response_ids,
        "store": st.booleans(),
        "stream": st.booleans(),
        "tools": st.lists(functions.map(lambda f: {**f, "type": "function"} if isinstance(f, dict) else f), max_size=2),
        "tool_choice": tool_choices,
        "text": _object(
            {},
            {
                "format": _object(
                    {"type": st.sampled_from(["text", "json_schema", "json_object", "yaml"])},
                    {"name": st.text(max_size=6), "schema": json_values},
                )
            },
        ),
        "temperature": st.floats(-1, 3, allow_nan=False),
        "max_output_tokens": st.integers(-5, 2_000_000),
        "metadata": json_values,
    },
)
raw_bodies = st.one_of(
    st.binary(max_size=64),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.sampled_from([b"", b"{", b"null", b"[]", b'{"model": "auto"}', '{"model": "\u0000"}'.encode()]),
)


def _check(answer: httpx.Response) -> None:
    """Below 500; an error in OpenAI's shape."""
    event(f"status {answer.status_code}")
    assert answer.status_code < 500, (answer.status_code, answer.text[:2000])
    if answer.status_code >= 400:
        error = answer.json()["error"]
        assert {"message", "type", "param", "code"} <= set(error), error
        assert isinstance(error["message"], str) and isinstance(error["type"], str) and isinstance(error["code"], str)
        assert error["param"] is None or isinstance(error["param"], str)


@pytest.fixture
def v1(live_url: str, make_tenant: Any) -> Any:
    tenant = make_tenant()
    with httpx.Client(base_url=live_url, headers=auth_headers(tenant), timeout=60) as http:
        yield http


def _post(http: httpx.Client, path: str, body: Any) -> None:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    with http.stream("POST", path, content=content, headers={"Content-Type": "application/json"}) as answer:
        answer.read()  # a stream too: to its end
        _check(answer)


def test_random_chat_completion_bodies_never_get_a_server_error(v1: httpx.Client) -> None:
    @FUZZ
    @given(st.one_of(chat_bodies, raw_bodies))
    def post(body: Any) -> None:
        _post(v1, "/v1/chat/completions", body)

    post()


def test_random_response_bodies_never_get_a_server_error(v1: httpx.Client) -> None:
    @FUZZ
    @given(st.one_of(response_bodies, raw_bodies))
    def post(body: Any) -> None:
        _post(v1, "/v1/responses", body)

    post()


def test_odd_response_ids_and_query_parameters_never_get_a_server_error(v1: httpx.Client) -> None:
    made = v1.post("/v1/responses", json={"model": "auto", "input": "hello"})
    assert made.status_code == 200, made.text
    known = made.json()["id"]
    query_values = st.one_of(st.text(max_size=8), st.sampled_from(["true", "false", "1", "0", "-1", "-2", "99", "1e3"]))

    @FUZZ
    @given(
        st.one_of(response_ids, st.just(known)),
        st.dictionaries(st.sampled_from(["stream", "starting_after", "include", "foo"]), query_values, max_size=3),
        st.sampled_from(["", "/cancel", "/input_items"]),
    )
    def ask(response_id: str, query: dict[str, str], tail: str) -> None:
        path = f"/v1/responses/{quote(response_id, safe='')}{tail}"
        method = "POST" if tail == "/cancel" else "GET"
        with v1.stream(method, path, params=query) as answer:
            answer.read()
            if answer.status_code != 404 or answer.headers.get("content-type", "").startswith("application/json"):
                _check(answer)

    ask()
