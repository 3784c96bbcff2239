"""A stored tool result that is a list (search_knowledge's passages) reaches the web chat as its JSON, so the
citations under an answer survive a reload; text results stay text."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from personal_agent.chats.message_store import TranscriptRow
from personal_agent.chats.transcript import row_items


def _row(content: object) -> TranscriptRow:
    part = {"part_kind": "tool-return", "tool_name": "search_knowledge", "tool_call_id": "c1", "content": content}
    return TranscriptRow(
        id=7, parent_id=None, run_id=None, message={"parts": [part]}, created_at=datetime.now(UTC), sibling_ids=[7]
    )


def test_a_list_result_is_kept_as_json() -> None:
    passages = [{"citation": "handbook.md, § Travel [chunk x]", "chunk_id": "x", "text": "Trains need approval."}]
    (item,) = row_items(_row(passages))
    assert item["role"] == "tool"
    assert json.loads(item["content"]) == passages


def test_text_and_object_results_are_unchanged() -> None:
    assert row_items(_row("plain answer"))[0]["content"] == "plain answer"
    assert json.loads(row_items(_row({"ok": True}))[0]["content"]) == {"ok": True}
