"""The passages a run's `search_knowledge` calls returned, as the footnotes a `/v1` answer ends with (the web chat
shows them under the answer; an OpenAI client has only the text). Read from the live result events and from the
stored tool returns alike, so a streamed answer and the stored one cite the same sources."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from personal_agent.knowledge.cited import SEARCH_TOOL, passages

__all__ = ["SEARCH_TOOL", "MAX_SOURCES", "Sources"]
MAX_SOURCES = 10


@dataclass
class Sources:
    """The distinct passages cited so far, in the order they came."""

    _seen: dict[str, str] = field(default_factory=dict)  # chunk id -> citation

    def add(self, content: Any) -> None:
        for passage in passages(content):
            key = str(passage.get("chunk_id") or passage["citation"])
            self._seen.setdefault(key, str(passage["citation"]))

    def footnote(self) -> str:
        """`Sources:` and one numbered line per passage (at most `MAX_SOURCES`); empty when none."""
        cited = list(self._seen.values())[:MAX_SOURCES]
        return "Sources:\n" + "\n".join(f"[{i}] {c}" for i, c in enumerate(cited, 1)) if cited else ""

    @classmethod
    def of_messages(cls, messages: list[dict[str, Any]]) -> Sources:
        """The sources in stored messages (pydantic-ai JSON)."""
        sources = cls()
        for message in messages:
            for part in message.get("parts", []) if message.get("kind") == "request" else []:
                if part.get("part_kind") == "tool-return" and part.get("tool_name") == SEARCH_TOOL:
                    sources.add(part.get("content"))
        return sources
