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


def test_a_result_says_how_the_call_went_in_the_transcript_s_words() -> None:
    def outcome(part: dict[str, object]) -> object:
        base = {"tool_name": "send", "tool_call_id": "c1", "content": "x", **part}
        row = TranscriptRow(
            id=7, parent_id=None, run_id=None, message={"parts": [base]}, created_at=datetime.now(UTC), sibling_ids=[7]
        )
        return row_items(row)[0]["outcome"]

    assert outcome({"part_kind": "tool-return"}) == "done"  # stored before pydantic-ai kept an outcome
    assert outcome({"part_kind": "tool-return", "outcome": "success"}) == "done"
    assert outcome({"part_kind": "tool-return", "outcome": "denied"}) == "denied"
    assert outcome({"part_kind": "tool-return", "outcome": "failed"}) == "failed"
    assert outcome({"part_kind": "tool-return", "outcome": "retried"}) == "failed"  # a failed try
    assert outcome({"part_kind": "tool-return", "outcome": "interrupted"}) == "interrupted"
    assert outcome({"part_kind": "retry-prompt"}) == "failed"
