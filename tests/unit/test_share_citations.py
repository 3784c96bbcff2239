"""A share's citations (`chats/share_citations.py`) are numbered as the web chat numbers them
(`frontend/src/knowledge/citations.ts`): a turn's `search_knowledge` passages, deduplicated and in order, go with the
turn's last answer after the searches, with the chat's source label and the passage's text."""

from __future__ import annotations

import json
from typing import Any

from personal_agent.chats.share_citations import with_citations


def _passage(chunk: str, document: str, page: int | None = None, section: str | None = None) -> dict[str, Any]:
    return {"chunk_id": chunk, "document": document, "page": page, "section": section, "text": f"text of {chunk}"}


def _search(item_id: str, *passages: dict[str, Any]) -> dict[str, Any]:
    return {"id": item_id, "role": "tool", "name": "search_knowledge", "content": json.dumps(list(passages))}


def test_a_turns_passages_go_with_its_last_answer_numbered_and_labelled() -> None:
    items = [
        {"id": "u1", "role": "user", "text": "when does the boat leave?"},
        {"id": "a1", "role": "assistant", "text": "", "tool_calls": [{"id": "c1", "name": "search_knowledge"}]},
        _search("t1", _passage("k1", "handbook.pdf", page=3), _passage("k2", "notes.md", section="Travel")),
        _search("t2", _passage("k1", "handbook.pdf", page=3), _passage("k3", "plan.txt")),
        {"id": "a2", "role": "assistant", "text": "At seven [handbook.pdf, p. 3]."},
        {"id": "u2", "role": "user", "text": "thanks"},
        {"id": "a3", "role": "assistant", "text": "You're welcome."},
    ]
    shown = {item["id"]: item for item in with_citations(items)}
    assert [(c["number"], c["label"]) for c in shown["a2"]["citations"]] == [
        (1, "handbook.pdf, p. 3"),
        (2, "notes.md, § Travel"),
        (3, "plan.txt"),
    ]
    assert shown["a2"]["citations"][0]["text"] == "text of k1"
    assert all("citations" not in shown[i] for i in ("a1", "a3", "t1", "u1"))


def test_other_tools_and_unreadable_results_cite_nothing() -> None:
    items = [
        {"id": "u1", "role": "user", "text": "hi"},
        {"id": "t1", "role": "tool", "name": "web_search", "content": json.dumps([_passage("k1", "x.pdf")])},
        {"id": "t2", "role": "tool", "name": "search_knowledge", "content": "not json"},
        {"id": "t3", "role": "tool", "name": "search_knowledge", "content": None},
        {"id": "a1", "role": "assistant", "text": "Hello."},
    ]
    assert with_citations(items) == items
