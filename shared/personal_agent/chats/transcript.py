"""The transcript a person reads, from stored pydantic-ai messages (Postgres is the source of truth)."""

from __future__ import annotations

import json
from typing import Any


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(c if isinstance(c, str) else "" for c in content)
    return json.dumps(content, default=str)


def transcript_items(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """User turns, assistant text with its tool calls, and tool results, in order."""
    items: list[dict[str, Any]] = []
    for row in rows:
        message, base = (
            row["message"],
            {"run_id": str(row["run_id"]) if row["run_id"] else None, "created_at": row["created_at"].isoformat()},
        )
        for index, part in enumerate(message.get("parts", [])):
            kind = part.get("part_kind")
            item_id = f"{row['id']}:{index}"
            if kind == "user-prompt":
                items.append({"id": item_id, "role": "user", "text": _text(part.get("content")), **base})
            elif kind == "text":
                items.append({"id": item_id, "role": "assistant", "text": part.get("content", ""), **base})
            elif kind == "tool-call":
                args = part.get("args")
                items.append(
                    {
                        "id": item_id,
                        "role": "assistant",
                        "text": "",
                        "tool_calls": [
                            {
                                "id": part.get("tool_call_id"),
                                "name": part.get("tool_name"),
                                "args": args if isinstance(args, dict) else _parse(args),
                            }
                        ],
                        **base,
                    }
                )
            elif kind in ("tool-return", "retry-prompt"):
                items.append(
                    {
                        "id": item_id,
                        "role": "tool",
                        "tool_call_id": part.get("tool_call_id"),
                        "name": part.get("tool_name"),
                        "content": _text(part.get("content")),
                        **base,
                    }
                )
    return items


def _parse(args: Any) -> Any:
    if isinstance(args, str):
        try:
            return json.loads(args)
        except ValueError:
            return args
    return args
