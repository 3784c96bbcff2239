"""Titles made offline from a chat's first request, a router's title cleaned for the chat list, the model that
answered named as the run names it, and decimals in the usage CSV in plain notation."""

from __future__ import annotations

from decimal import Decimal

from personal_agent.chats.titles import clean_title, demo_title, first_words_title
from personal_agent.models.answered import answered_model_id, answering_provider, stored_refs
from personal_agent.spec.run_spec import ModelRef
from personal_agent.usage.report import csv_cell


def test_the_demo_model_names_what_it_would_do() -> None:
    assert demo_title("What do my documents say about the Zephyr valve?") == "Questions about your documents"
    assert demo_title("Remember that I prefer metric units.") == "Remember: I prefer metric units"
    assert demo_title("Research solar power and wind power in parallel.") == "Research: solar power and wind power"
    assert demo_title("What's the weather in Paris?") == "Weather in Paris"
    assert demo_title("Send the weekly summary to team@example.com.") == "Message to team@example.com"
    assert demo_title("hello there, how are you doing today my friend") == "Hello there, how are you doing today…"
    assert demo_title('/tool calculate {"expression": "6 * 7"}') == "Tool: calculate"


def test_a_routers_title_is_cleaned_for_the_chat_list() -> None:
    assert clean_title('"Title: Zephyr valve maintenance."') == "Zephyr valve maintenance"
    assert clean_title("**Lisbon trip**\nand more") == "Lisbon trip"
    assert clean_title("  ") is None and clean_title(None) is None
    long = clean_title("word " * 40)
    assert long is not None and len(long) <= 61 and long.endswith("…")
    assert first_words_title("") is None


DEMO = ModelRef(id="offline:demo", provider="offline", kind="offline", tier=2, model_name="demo")
GPT = ModelRef(id="openai:gpt-4o", provider="openai", kind="openai", tier=1, model_name="gpt-4o")
GPT_MINI = ModelRef(id="openai:gpt-4o-mini", provider="openai", kind="openai", tier=1, model_name="gpt-4o-mini")


def test_the_model_that_answered_is_named_like_the_model_asked_for() -> None:
    refs = (DEMO, GPT, GPT_MINI)
    assert answered_model_id(refs, "demo") == "offline:demo"
    assert answered_model_id(refs, "gpt-4o-mini-2024-07-18") == "openai:gpt-4o-mini"  # the longest prefix
    assert answered_model_id(refs, "gpt-4o-2024-08-06") == "openai:gpt-4o"
    assert answered_model_id(refs, "claude-x") == "claude-x" and answered_model_id(refs, None) is None
    assert answering_provider(refs, "demo", None) == "offline"
    assert answering_provider(refs, "demo", "openai") == "openai"
    stored = {"model_chain": [DEMO.model_dump(mode="json"), {"id": "old"}], "router_model": GPT.model_dump(mode="json")}
    assert stored_refs(stored) == (DEMO, GPT) and stored_refs(None) == ()


def test_usage_csv_cells_are_plain() -> None:
    assert csv_cell(Decimal("0E-8")) == "0"
    assert csv_cell(Decimal("0.00012300")) == "0.000123"
    assert csv_cell(None) == "" and csv_cell(3) == 3
