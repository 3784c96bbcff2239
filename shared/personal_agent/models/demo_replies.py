"""What the offline demo model says: its answer to chit-chat, and its answer once its tools returned, written from
what they returned (the passages it quotes and cites, the memory saved, the sub-agents' answers, the weather the
MCP server gave, whether a person approved the message). Deterministic and offline."""

from __future__ import annotations

import json
import re
from typing import Any

DEMO_NAME = "Demo model (offline)"
FOOTER = (
    f"_{DEMO_NAME}: the offline demo model, a scripted stand-in that shows what the platform does. Add a key in "
    "Settings (or set `OPENAI_API_KEY` or `ANTHROPIC_API_KEY`) to talk to a real model._"
)
NOT_APPROVED = "The tool call was not approved"
"""How a denied or expired approval reaches the model (`engine/deferred.py`)."""
_CHUNK = re.compile(r"\s*\[chunk [^\]]*\]$")
"""The chunk id at the end of a passage's citation: the sources under the answer carry it, the quote need not."""
MAX_QUOTES = 3
MAX_QUOTE_CHARS = 400

SUGGESTIONS = (
    "- **Ask your documents**: upload a file on the Knowledge page (or attach one here), then ask "
    "*What do my documents say about …?*\n"
    "- **Memory**: *Remember that I prefer metric units.*\n"
    "- **Tools from an MCP server**: *What's the weather in Paris?*\n"
    "- **Sub-agents**: *Research solar power and wind power in parallel.*\n"
    "- **Approvals**: *Send the weekly summary to team@example.com.*"
)


def signed(text: str) -> str:
    """An answer with the demo's label under it."""
    return f"{text}\n\n{FOOTER}"


def chat_answer(text: str, images: str = "") -> str:
    """The answer to a message no rule matched: what it heard, and what to try."""
    return signed(
        f"{images}You said: *{text[:200]}*\n\nI'm the **{DEMO_NAME}**: I follow a few simple rules so you can try "
        f"what this platform does without a provider key. Try one of these:\n\n{SUGGESTIONS}"
    )


def research_answer(task: str) -> str:
    """A sub-agent's answer to a research task (the demo has no web access: it says so)."""
    topic = task.split(" ", 1)[1] if " " in task else task
    return signed(
        f"**Notes on {topic}** (from a demo sub-agent): the offline demo model cannot look anything up, so these "
        f"notes are a placeholder. With a real model, this sub-agent would use its read-only tools (web search, "
        f"your documents) on *{topic}* and report back, in parallel with the others."
    )


def _loads(content: Any) -> Any:
    if isinstance(content, str):
        try:
            return json.loads(content)
        except ValueError:
            return content
    return content


def _passages(content: Any) -> str:
    items = _loads(content)
    passages = [p for p in items if isinstance(p, dict) and "text" in p] if isinstance(items, list) else []
    left_out = [p["note"] for p in items if isinstance(p, dict) and "note" in p] if isinstance(items, list) else []
    if not passages:
        found = "I searched your documents and found no passage about that."
        return f"{found} Upload a file on the Knowledge page (or attach one here) and ask again. {' '.join(left_out)}"
    quotes = []
    for n, p in enumerate(passages[:MAX_QUOTES], start=1):
        text = " ".join(str(p["text"]).split())
        text = text if len(text) <= MAX_QUOTE_CHARS else text[:MAX_QUOTE_CHARS].rsplit(" ", 1)[0] + " …"
        warning = " (written by someone else: I do not follow instructions in it)" if p.get("untrusted") else ""
        source = _CHUNK.sub("", str(p.get("citation") or p.get("document") or "a document"))
        quotes.append(f"> {text}\n>\n> — *{source}* [{n}]{warning}")
    lead = f"Here is what your documents say ({len(passages)} passage{'s' if len(passages) != 1 else ''} found):"
    return "\n\n".join([lead, *quotes, *left_out])


def _one(name: str, content: Any, args: dict[str, Any], now_for: str) -> str:
    text = str(content)
    if text.startswith(NOT_APPROVED):
        return f"Not done: {text}"
    if name == "search_knowledge":
        return _passages(content)
    if name == "remember":
        return f"{text} I'll remember: *{args.get('fact', '')}* (see or delete it in Settings, Memories)."
    if name == "delegate":  # the sub-agent's answer, without the label it signed it with
        return f"**{args.get('task', 'Sub-agent')}** — {text.replace(FOOTER, '').strip()}"
    if name == "send_demo_message":
        return f"Done: {text}"
    if name == "calculate":
        return f"{args.get('expression', '')} = **{text}**"
    if name == "current_time":
        return now_for.replace("{now}", text)
    if name.endswith("weather"):
        return f"The demo MCP server's `{name}` says: **{text}**"
    if name.endswith("post_note"):
        return f"The demo MCP server's `{name}` says: {text}"
    return f"`{name}` returned: {text}"


def tool_answer(results: list[tuple[str, Any, dict[str, Any], bool]], user_text: str, images: str = "") -> str:
    """The answer once the tools returned: `results` is (tool name, content, the call's args, failed) per call."""
    if [r[0] for r in results] == ["current_time"] and not results[0][3]:
        # The time answer keeps its old shape (an echo, then the time): the browser tests read it mid-stream.
        now = str(results[0][1])
        return (
            f"{images}You said: *{user_text[:200]}*\n\nThe time is **{now}**. This answer comes from the "
            f"**offline demo model** ({DEMO_NAME}); set `OPENAI_API_KEY` or `ANTHROPIC_API_KEY` (or add a key in "
            "Settings) to talk to a real model."
        )
    parts = []
    for name, content, args, failed in results:
        parts.append(f"`{name}` failed: {content}" if failed else _one(name, content, args, "The time is **{now}**."))
    if [r[0] for r in results].count("delegate") > 1:
        parts.insert(0, f"All {len(results)} sub-agents finished:")
    return signed("\n\n".join(parts))
