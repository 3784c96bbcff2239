"""The session's guard (tests/conftest.py): a real provider model refuses to send a request, so no test can
reach a model provider by accident; scripted and function models are unaffected."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pydantic_ai.models
import pytest
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.providers.openai import OpenAIProvider


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A loopback port that would hold any connection made to it (nothing accepts it)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        yield server


def _connections(server: socket.socket) -> int:
    try:
        conn, _ = server.accept()
    except BlockingIOError:
        return 0
    conn.close()
    return 1


async def test_a_real_model_request_is_refused_before_any_connection(listener: socket.socket) -> None:
    assert pydantic_ai.models.ALLOW_MODEL_REQUESTS is False
    base_url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=base_url, api_key="sk-test-not-a-key"))
    with pytest.raises(RuntimeError, match="ALLOW_MODEL_REQUESTS is False"):
        await Agent(model).run("hello")
    assert _connections(listener) == 0


async def test_test_models_still_run_under_the_guard() -> None:
    result = await Agent(TestModel(custom_output_text="scripted")).run("hello")
    assert result.output == "scripted"
