"""The citations of a shared snapshot, numbered under the answers that drew on them, as the chat shows them
(`frontend/src/knowledge/citations.ts`): the passages the `search_knowledge` calls of a turn returned, deduplicated
and in order, go with the turn's last answer after those calls. The passage's text comes along, since a viewer of
a link cannot open the knowledge base it came from."""

from __future__ import annotations

import json
from typing import Any

SEARCH_TOOL = "search_knowledge"


def _passages(content: Any) -> list[dict[str, Any]]:
    """The passages of a stored `search_knowledge` result (its JSON list), [] for anything else."""
    try:
        value = json.loads(content) if isinstance(content, str) else content
    except (ValueError, RecursionError):
        return []
    if isinstance(value, dict):
        value = value.get("return_value", value.get("items"))
    if not isinstance(value, list):
        return []
    return [p for p in value if isinstance(p, dict) and isinstance(p.get("chunk_id"), str)]


def _label(passage: dict[str, Any]) -> str:
    """ "handbook.pdf, p. 3", "notes.md, § Travel" or the document's name (the chat's source label)."""
    document = str(passage.get("document") or passage.get("filename") or "document")
    if isinstance(passage.get("page"), int) and passage["page"]:
        return f"{document}, p. {passage['page']}"
    return f"{document}, § {passage['section']}" if passage.get("section") else document


def _citation(passage: dict[str, Any]) -> dict[str, Any]:
    return {
        "label": _label(passage),
        "document": str(passage.get("document") or passage.get("filename") or "document"),
        "page": passage.get("page") if isinstance(passage.get("page"), int) else None,
        "section": passage.get("section") or None,
        "text": str(passage.get("text") or ""),
    }


def _answers_citing(items: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Item id of each answer that cites, with its passages (deduplicated by chunk, in order)."""
    cited: dict[str, list[dict[str, Any]]] = {}
    pending: list[dict[str, Any]] = []
    answer: str | None = None

    def flush() -> None:
        if answer is not None and pending:
            cited[answer] = pending

    for item in items:
        if item.get("role") == "user":
            flush()
            pending, answer = [], None
        elif item.get("role") == "tool" and item.get("name") == SEARCH_TOOL:
            if answer is not None:  # an answer between two searches keeps what came before it
                flush()
                pending, answer = [], None
            seen = {p["chunk_id"] for p in pending}
            for passage in _passages(item.get("content")):
                if passage["chunk_id"] not in seen:
                    seen.add(passage["chunk_id"])
                    pending.append(passage)
        elif item.get("role") == "assistant" and item.get("text") and pending:
            answer = str(item.get("id"))
    flush()
    return cited


def with_citations(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The snapshot's items with `citations` (`[{number, label, document, page, section, text}]`) on each answer
    that drew on `search_knowledge` passages."""
    cited = _answers_citing(items)
    out = []
    for item in items:
        passages = cited.get(str(item.get("id")))
        if passages:
            item = {**item, "citations": [{"number": n, **_citation(p)} for n, p in enumerate(passages, 1)]}
        out.append(item)
    return out
