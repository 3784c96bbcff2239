"""The transcript a person reads, from stored pydantic-ai messages (Postgres is the source of truth).

A transcript is served in pages that each stay far below Lambda's 6 MB response limit: the newest page
first (what a chat window shows), then older ones through `next_cursor`. A page holds at most `limit` items
and about `PAGE_BYTES` of JSON; a single text, tool result or tool-call argument longer than
`MAX_PART_CHARS` is cut there and marked `truncated`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from personal_agent.chats.attachment_refs import described
from personal_agent.chats.message_store import TranscriptRow
from personal_agent.errors import InvalidInput

PAGE_BYTES = 4 * 1024 * 1024
MAX_PART_CHARS = 256 * 1024
_CURSOR = re.compile(r"^(\d{1,18}):(\d{1,6})$")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(c if isinstance(c, str) else "" for c in content)
    return json.dumps(content, default=str)


def _parse(args: Any) -> Any:
    if isinstance(args, str):
        try:
            return json.loads(args)
        except (ValueError, RecursionError):
            return args
    return args


def _cut(item: dict[str, Any], key: str) -> None:
    value = item.get(key)
    if isinstance(value, str) and len(value) > MAX_PART_CHARS:
        item[key] = value[:MAX_PART_CHARS]
        item["truncated"] = True


def _tool_call(part: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    args = part.get("args")
    call = {"id": str(part.get("tool_call_id") or ""), "name": str(part.get("tool_name") or "")}
    raw = args if isinstance(args, str) else json.dumps(args, default=str)
    if len(raw) > MAX_PART_CHARS:  # too long to show whole: the start of its JSON, as text
        return {**call, "args": raw[:MAX_PART_CHARS]}, True
    return {**call, "args": args if isinstance(args, dict) else _parse(args)}, False


# pydantic-ai's `outcome` of a tool return, in the words the transcript uses (a retry is a failed attempt).
_OUTCOMES = {
    "success": "done",
    "retried": "failed",
    "failed": "failed",
    "denied": "denied",
    "interrupted": "interrupted",
}


def _outcome(kind: Any, part: dict[str, Any]) -> str:
    if kind == "retry-prompt":
        return "failed"
    return _OUTCOMES.get(str(part.get("outcome") or "success"), "done")


def _item(kind: Any, part: dict[str, Any], base: dict[str, Any]) -> dict[str, Any] | None:
    if kind == "user-prompt":
        files = described(part.get("content"))
        return {**base, "role": "user", "text": _text(part.get("content")), **({"attachments": files} if files else {})}
    if kind == "text":
        return {**base, "role": "assistant", "text": part.get("content", "")}
    if kind == "tool-call":
        call, cut = _tool_call(part)
        return {**base, "role": "assistant", "text": "", "tool_calls": [call], **({"truncated": True} if cut else {})}
    if kind in ("tool-return", "retry-prompt"):
        raw = part.get("content")
        # A list result (e.g. search_knowledge's passages) is data, not text parts: keep it as its JSON.
        content = json.dumps(raw, default=str) if isinstance(raw, list) else _text(raw)
        return {
            **base,
            "role": "tool",
            "tool_call_id": part.get("tool_call_id"),
            "name": part.get("tool_name"),
            "content": content,
            "outcome": _outcome(kind, part),
        }
    return None


def row_items(row: TranscriptRow) -> list[dict[str, Any]]:
    """One stored message as transcript items: user turns, assistant text with its tool calls, tool results."""
    message = row.message if isinstance(row.message, dict) else {}
    run_id = str(row.run_id) if row.run_id else None
    items: list[dict[str, Any]] = []
    for index, part in enumerate(message.get("parts", [])):
        if not isinstance(part, dict):
            continue
        base = {
            "id": f"{row.id}:{index}",
            "run_id": run_id,
            "created_at": row.created_at.isoformat(),
            # its place in the chat's message tree (0021)
            "message_id": row.id,
            "parent_id": row.parent_id,
            "sibling_ids": row.sibling_ids,
        }
        item = _item(part.get("part_kind"), part, base)
        if item is not None:
            _cut(item, "text")
            _cut(item, "content")
            items.append(item)
    return items


def parse_cursor(cursor: str) -> tuple[int, int]:
    """A page cursor is the id (`<message>:<part>`) of the oldest item the caller already has."""
    match = _CURSOR.match(cursor)
    if match is None:
        raise InvalidInput("the cursor is not valid", code="invalid_cursor")
    return int(match.group(1)), int(match.group(2))


@dataclass
class TranscriptPage:
    """Collects items newest first until `limit` items or about `PAGE_BYTES` of JSON; hands them out in order."""

    limit: int
    before: tuple[int, int] | None = None
    max_bytes: int = PAGE_BYTES
    newest_first: list[dict[str, Any]] = field(default_factory=list)
    size: int = 0
    full: bool = False

    def add_row(self, row: TranscriptRow) -> bool:
        """Add a message's items (those before the cursor); False once the page is full."""
        items = row_items(row)
        if self.before is not None and row.id == self.before[0]:
            items = [i for i in items if int(i["id"].split(":")[1]) < self.before[1]]
        for item in reversed(items):
            cost = len(json.dumps(item, ensure_ascii=False, default=str).encode()) + 1
            if len(self.newest_first) >= self.limit or (self.newest_first and self.size + cost > self.max_bytes):
                self.full = True
                return False
            self.newest_first.append(item)
            self.size += cost
        return True

    def body(self) -> dict[str, Any]:
        """`items` oldest first; `next_cursor` fetches the items before them (null at the chat's start)."""
        items = list(reversed(self.newest_first))
        return {"items": items, "next_cursor": items[0]["id"] if self.full and items else None}
