"""The passages a run's `search_knowledge` calls returned, read from the tool's result (its JSON text live, a list
or an object when stored): what `/v1` answers end with as footnotes and what an evaluation's `passage_cited` scorer
checks the answer against."""

from __future__ import annotations

import json
from typing import Any

SEARCH_TOOL = "search_knowledge"


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
