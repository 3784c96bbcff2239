"""Fixtures shared by the integration tests: scripted models and tools registered for one test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from personal_agent.local.demo_mcp import DemoLog
from personal_agent.models.catalog import register_model, unregister_model
from personal_agent.tools.registry import ToolDef, register_tool, unregister_tool
from tests.emulators import durable_aws, localstack_aws  # noqa: F401 - fixtures: durable tests on moto and LocalStack
from tests.live_server import LiveServer
from tests.mcp_demo import serve_demo
from tests.receiver import receiver  # noqa: F401 - fixture: an HTTP endpoint on loopback
from tests.scripted import scripted_model
from tests.workflows import echo_prompt


@pytest.fixture
def echo_model() -> Iterator[str]:
    with scripted_model(echo_prompt) as (model_id, _):
        yield model_id


@pytest.fixture
def email_tool() -> Iterator[list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []

    def send_email(to: str, subject: str) -> str:
        sent.append({"to": to, "subject": subject})
        return f"sent to {to}"

    register_tool(ToolDef("send_email", send_email, "Send an email.", acts=True, requires_approval=True))
    yield sent
    unregister_tool("send_email")


@pytest.fixture
def post_note() -> Iterator[list[str]]:
    """`post_note`, a tool that acts on the world (no approval declared: the gates decide); yields what it posted."""
    posted: list[str] = []

    def post(text: str) -> str:
        posted.append(text)
        return "posted"

    register_tool(ToolDef("post_note", post, "Post a note to the team channel.", acts=True))
    yield posted
    unregister_tool("post_note")


@pytest.fixture
def demo() -> Iterator[tuple[LiveServer, DemoLog]]:
    """The demo MCP server on loopback (see `tests/mcp_demo.py`) and what it saw."""
    with serve_demo() as served:
        yield served


@pytest.fixture
def sure_router() -> Iterator[str]:
    def classify(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        args = {"intent": "post a note", "acts_on_world": True, "confidence": 1.0}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

    register_model("router:sure", lambda: FunctionModel(classify, model_name="router"), tags=("cheap",), quality=2)
    yield "router:sure"
    unregister_model("router:sure")
