"""Chat titles made from a chat's first exchange: the routing model's (it names the request when it classifies it,
`governance/routing.py`), else one made offline and deterministically — the demo model's, from what it understood
of the request, or the request's first words. A chat keeps a title a person gave it: only the default is replaced."""

from __future__ import annotations

import re

from personal_agent.models.demo_intents import Offered, plan

DEFAULT_TITLE = "New chat"
"""What a chat is called until someone (or its first exchange) names it (`chats/service.py`)."""
MAX_WORDS = 7
MAX_CHARS = 60
_MARKUP = re.compile(r"`+|\*\*|__|^#+\s*|^>\s*")
_EDGES = " \t\"'“”‘’.,;:!?-–—"


def clean_title(text: str | None) -> str | None:
    """A model's title as a chat list shows it: one line, no quotes, markup or end punctuation, at most
    `MAX_CHARS` characters; None when nothing is left."""
    if not text:
        return None
    line = _MARKUP.sub("", text.strip().splitlines()[0] if text.strip() else "")
    line = re.sub(r"^title\s*:\s*", "", " ".join(line.split()).strip(_EDGES), flags=re.I)
    line = line.strip(_EDGES)
    if len(line) > MAX_CHARS:
        line = line[:MAX_CHARS].rsplit(" ", 1)[0].rstrip(_EDGES) + "…"
    return line or None


def first_words_title(text: str) -> str | None:
    """The request's first words (a `/tool NAME …` command is titled by its tool)."""
    stripped = text.strip()
    if stripped.startswith("/tool "):
        name = stripped.split()[1] if len(stripped.split()) > 1 else "tool"
        return f"Tool: {name}"
    words = _MARKUP.sub("", stripped.splitlines()[0] if stripped else "").split()
    title = " ".join(words[:MAX_WORDS])
    return clean_title(title[:1].upper() + title[1:] + ("…" if len(words) > MAX_WORDS else ""))


_EVERYTHING = Offered(
    frozenset({"search_knowledge", "remember", "delegate", "send_demo_message", "current_time", "calculate"})
    | {"demo_weather", "demo_post_note"},
    {"demo_weather": ["city"]},
)


def _named(intent: str, calls: list[dict[str, object]], tool: str) -> str | None:
    first = calls[0] if calls else {}
    if intent == "knowledge":
        return "Questions about your documents"
    if intent == "remember":
        return f"Remember: {first.get('fact', '')}"
    if intent == "delegate":
        return "Research: " + " and ".join(str(c.get("task", "")).removeprefix("Research ") for c in calls)
    if intent == "send":
        return f"Message to {first.get('to', '')}"
    if intent == "mcp":
        return f"Weather in {first.get('city')}" if tool.endswith("weather") else f"Note for {first.get('team')}"
    if intent == "calculate":
        return f"Calculate {first.get('expression', '')}"
    return "The time" if intent == "time" else None


def demo_title(text: str) -> str | None:
    """The offline demo model's title: what it would do with the request, named (deterministic, no model call)."""
    if text.strip().startswith("/tool "):
        return first_words_title(text)
    chosen = plan(text, _EVERYTHING)
    tool = chosen.calls[0].name if chosen.calls else ""
    return clean_title(_named(chosen.intent, [c.args for c in chosen.calls], tool)) or first_words_title(text)
