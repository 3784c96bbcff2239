"""The offline demo model's choices on plain requests: which tool it calls for which message, that it calls only
tools it is offered, and what it answers from what the tools returned (it quotes and cites the passages)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

from personal_agent.models.demo import demo_model
from personal_agent.models.demo_intents import Offered, plan
from personal_agent.models.demo_replies import DEMO_NAME, chat_answer, tool_answer

CHAT_TOOLS = frozenset(
    {"current_time", "calculate", "web_fetch", "remember", "delegate", "search_knowledge", "send_demo_message"}
)
ALL = Offered(CHAT_TOOLS | {"demo_weather", "demo_post_note"}, {"demo_weather": ["city"]})


def calls(text: str, offered: Offered = ALL, attached: bool = False) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.args) for c in plan(text, offered, attached).calls]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What do my documents say about the Zephyr valve?", "search_knowledge"),
        ("Search my documents for the warranty", "search_knowledge"),
        ("Remember that I prefer metric units.", "remember"),
        ("What's the weather in Paris?", "demo_weather"),
        ("Post a note to the design team: the mockups are ready", "demo_post_note"),
        ("Please send the weekly report to the team", "send_demo_message"),
        ("What time is it?", "current_time"),
        ("what is 6 * 7?", "calculate"),
    ],
)
def test_a_plain_request_picks_the_tool_that_shows_its_capability(text: str, expected: str) -> None:
    assert [name for name, _ in calls(text)] == [expected]


def test_the_arguments_come_from_the_message() -> None:
    assert calls("Remember that I prefer metric units.") == [("remember", {"fact": "I prefer metric units."})]
    assert calls("what's the weather in tokyo today?") == [("demo_weather", {"city": "Tokyo"})]
    assert calls("Search my documents for the warranty") == [("search_knowledge", {"query": "the warranty"})]
    assert calls("Send the summary to ana@example.org")[0][1]["to"] == "ana@example.org"
    assert calls("Send the weekly summary")[0][1]["to"] == "team@example.com"
    assert calls("Post a note to the design team: the mockups are ready") == [
        ("demo_post_note", {"team": "design", "text": "The mockups are ready"})
    ]


def test_research_in_parallel_delegates_one_explore_sub_agent_per_topic() -> None:
    assert calls("Research solar power and wind power in parallel.") == [
        ("delegate", {"task": "Research solar power", "preset": "explore"}),
        ("delegate", {"task": "Research wind power", "preset": "explore"}),
    ]
    assert plan("Research solar power", ALL).intent == "research"  # the sub-agent's own task: no tool
    assert calls("Research solar power") == []


def test_a_question_searches_the_documents_once_one_was_attached() -> None:
    assert calls("how often is it serviced?") == []
    assert [n for n, _ in calls("how often is it serviced?", attached=True)] == ["search_knowledge"]
    assert [n for n, _ in calls("what is in this picture?")] == []  # an image is no document


@pytest.mark.parametrize("text", ["hello", "Accessibility check", "first question", "and now?", "Say something long"])
def test_chit_chat_calls_no_tool(text: str) -> None:
    assert plan(text, ALL).calls == () and plan(text, ALL).intent == "chat"


@pytest.mark.parametrize(
    "text",
    [
        "What do my documents say about the Zephyr valve?",
        "Remember that I prefer metric units.",
        "What's the weather in Paris?",
        "Research solar power and wind power in parallel.",
        "Please send the weekly report to the team",
        "What time is it?",
        "what is 6 * 7?",
    ],
)
def test_it_calls_only_tools_it_is_offered(text: str) -> None:
    for offered in (Offered(frozenset()), Offered(frozenset({"current_time"})), Offered(CHAT_TOOLS)):
        assert {name for name, _ in calls(text, offered)} <= offered.names


def test_the_weather_tool_is_found_on_any_mcp_server() -> None:
    other = Offered(frozenset({"outside_weather"}), {"outside_weather": ["location"]})
    assert calls("What's the weather in Oslo?", other) == [("outside_weather", {"location": "Oslo"})]


PASSAGES = [
    {
        "citation": "zephyr.md, § Maintenance [chunk 1]",
        "document": "zephyr.md",
        "text": "The Zephyr valve must be recalibrated every ninety days.",
        "untrusted": False,
    }
]


def test_it_answers_from_the_passages_it_got_quoting_and_citing_them() -> None:
    answer = tool_answer([("search_knowledge", PASSAGES, {"query": "valve"}, False)], "valve?")
    assert "> The Zephyr valve must be recalibrated every ninety days." in answer
    assert "> — *zephyr.md, § Maintenance* [1]" in answer and DEMO_NAME in answer
    empty = tool_answer([("search_knowledge", [], {"query": "valve"}, False)], "valve?")
    assert "found no passage" in empty and "Knowledge page" in empty


def test_the_answers_say_what_happened_and_that_a_demo_wrote_them() -> None:
    denied = tool_answer(
        [("send_demo_message", "The tool call was not approved: denied by a person.", {}, False)], "send it"
    )
    assert denied.startswith("Not done: The tool call was not approved")
    sent = tool_answer([("send_demo_message", "(demo) message to team@example.com queued: x", {}, False)], "send")
    assert sent.startswith("Done: (demo) message to team@example.com queued")
    both = tool_answer(
        [
            ("delegate", "notes A", {"task": "Research A"}, False),
            ("delegate", "notes B", {"task": "Research B"}, False),
        ],
        "research A and B in parallel",
    )
    assert both.startswith("All 2 sub-agents finished:") and "**Research A** — notes A" in both
    hello = chat_answer("hello")
    assert "You said: *hello*" in hello and DEMO_NAME in hello and "real model" in hello
    assert "offline demo model" in hello  # the browser tests of the chat read it


async def _streamed(ctx: Any, events: Any) -> None:
    """The demo model streams (as the engine asks it to)."""
    async for _ in events:
        pass


async def test_the_model_makes_the_planned_calls_and_answers_from_their_results(monkeypatch: Any) -> None:
    monkeypatch.setenv("PA_DEMO_DELAY_MS", "0")
    agent: Agent[None, str] = Agent(demo_model())
    seen: list[str] = []

    @agent.tool_plain
    def delegate(task: str, preset: str | None = None) -> str:
        seen.append(task)
        return f"notes on {task.split(' ', 1)[1]}"

    @agent.tool_plain
    def current_time() -> str:
        return "2026-01-01T00:00:00Z"

    result = await agent.run("Research solar power and wind power in parallel.", event_stream_handler=_streamed)
    first = next(m for m in result.all_messages() if isinstance(m, ModelResponse))
    assert [p.tool_name for p in first.parts if isinstance(p, ToolCallPart)] == ["delegate", "delegate"]
    assert any(isinstance(p, TextPart) for p in first.parts)
    assert sorted(seen) == ["Research solar power", "Research wind power"]
    assert "**Research solar power** — notes on solar power" in result.output
    # Not offered (no `remember` on this agent): no call, a plain answer.
    result = await agent.run("Remember that I prefer metric units.", event_stream_handler=_streamed)
    assert not any(isinstance(p, ToolCallPart) for m in result.all_messages() for p in m.parts)
    assert "You said" in result.output
