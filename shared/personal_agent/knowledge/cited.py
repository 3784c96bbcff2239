"""The passages a run's `search_knowledge` calls returned, read from the tool's result (its JSON text live, a list
or an object when stored): the footnotes a `/v1` answer and a channel's answer end with (`Sources`: the web chat
shows them under the answer; an OpenAI client or a Slack thread has only the text) and what an evaluation's
`passage_cited` scorer checks the answer against. Read from the live result events and from the stored tool returns
alike, so a streamed answer and the stored one cite the same sources, numbered as the web chat numbers them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

SEARCH_TOOL = "search_knowledge"
MAX_SOURCES = 10


def passages(content: Any) -> list[dict[str, Any]]:
    """The passages in a `search_knowledge` result; [] for anything else."""
    if isinstance(content, str):
        try:
            content = json.loads(content)
        except ValueError:
            return []
    if isinstance(content, dict):
        content = content.get("passages", content.get("items"))
    return [p for p in content if isinstance(p, dict) and "citation" in p] if isinstance(content, list) else []


def retrieved(messages: list[Any]) -> tuple[dict[str, Any], ...]:
    """The distinct passages (by chunk id) a run's stored messages (pydantic-ai JSON) got from `search_knowledge`, in
    the order they came: the order the web chat numbers them `[1]`, `[2]`, …"""
    seen: dict[str, dict[str, Any]] = {}
    for message in messages:
        if not isinstance(message, dict) or message.get("kind") != "request":
            continue
        for part in message.get("parts", []):
            if part.get("part_kind") == "tool-return" and part.get("tool_name") == SEARCH_TOOL:
                for passage in passages(part.get("content")):
                    seen.setdefault(str(passage.get("chunk_id") or passage["citation"]), passage)
    return tuple(seen.values())


@dataclass
class Sources:
    """The distinct passages cited so far, in the order they came (by chunk id, as `retrieved`)."""

    _seen: dict[str, str] = field(default_factory=dict)  # chunk id -> citation

    def add(self, content: Any) -> None:
        for passage in passages(content):
            key = str(passage.get("chunk_id") or passage["citation"])
            self._seen.setdefault(key, str(passage["citation"]))

    def footnote(self) -> str:
        """`Sources:` and one numbered line per passage (at most `MAX_SOURCES`); empty when none."""
        cited = list(self._seen.values())[:MAX_SOURCES]
        return "Sources:\n" + "\n".join(f"[{i}] {c}" for i, c in enumerate(cited, 1)) if cited else ""

    def appended_to(self, text: str) -> str:
        """`text` ending with the footnote after a blank line (a channel's answer); as it is when none."""
        footnote = self.footnote()
        return f"{text.rstrip()}\n\n{footnote}" if footnote and text.strip() else text

    @classmethod
    def of_messages(cls, messages: list[dict[str, Any]]) -> Sources:
        """The sources in stored messages (pydantic-ai JSON)."""
        sources = cls()
        for passage in retrieved(messages):
            sources.add([passage])
        return sources
