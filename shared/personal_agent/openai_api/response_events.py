"""A run's AG-UI events as the Responses API's typed semantic events, each with its `sequence_number`.

The translation is a pure function of the run's event sequence (the snapshots in `response.created` and
`response.in_progress` come from the spec alone), so the same run always gives the same numbered events: a client
that resumes with `starting_after=N` gets the events numbered after N from a replay of the run's stream, each
exactly once. The terminal event's response object is read from Postgres by the caller (`terminal`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from personal_agent.knowledge.cited import SEARCH_TOOL, Sources
from personal_agent.openai_api.response_object import (
    call_item,
    item_id,
    message_item,
    question_item,
    sources_item_id,
    structured_item_id,
)
from personal_agent.spec.run_spec import OUTPUT_TOOL

Ending = Literal["completed", "failed", "cancelled"]


@dataclass
class _Item:
    id: str
    index: int
    kind: Literal["text", "call"]
    name: str = ""
    text: str = ""


@dataclass
class ResponseEvents:
    """Feed it the run's events in order; it returns the semantic events to send."""

    skeleton: dict[str, Any]
    client_tools: frozenset[str]
    structured: bool = False
    """The answer is JSON (an output schema): no sources are appended to it."""
    seq: int = -1
    ending: Ending | None = None
    _items: dict[str, _Item] = field(default_factory=dict)  # by AG-UI message or tool call id
    _count: int = 0
    _searches: set[str] = field(default_factory=set)
    _sources: Sources = field(default_factory=Sources)

    def opening(self) -> list[dict[str, Any]]:
        queued = {**self.skeleton, "status": "queued"}
        return [self._event("response.created", response=queued), self._event("response.queued", response=queued)]

    def feed(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        kind = event.get("type")
        if kind == "RUN_STARTED":
            return [self._event("response.in_progress", response={**self.skeleton, "status": "in_progress"})]
        if kind == "TEXT_MESSAGE_START":
            return self._open(str(event.get("messageId")), item_id(str(event.get("messageId"))), "text")
        if kind == "TEXT_MESSAGE_CONTENT":
            return self._delta(str(event.get("messageId")), str(event.get("delta", "")))
        if kind == "TOOL_CALL_START":
            return self._call_start(str(event.get("toolCallId")), str(event.get("toolCallName")))
        if kind == "TOOL_CALL_ARGS":
            return self._delta(str(event.get("toolCallId")), str(event.get("delta", "")))
        if kind == "TOOL_CALL_RESULT" and event.get("toolCallId") in self._searches:
            self._sources.add(event.get("content"))
        if kind in ("TEXT_MESSAGE_END", "TOOL_CALL_END"):
            key = str(event.get("messageId") if kind == "TEXT_MESSAGE_END" else event.get("toolCallId"))
            return self._close(key)
        if kind == "CUSTOM" and event.get("name") == "question_asked":
            return self._question(event.get("value") or {})
        if kind == "RUN_ERROR":
            self.ending = "failed"
        elif kind == "RUN_FINISHED":
            outcome = (event.get("outcome") or {}).get("type")
            if outcome != "interrupt":  # an interrupt: the run waits for a person and goes on
                self.ending = "cancelled" if outcome == "cancelled" else "completed"
                return self._footnote() if self.ending == "completed" else []
        return []

    def _footnote(self) -> list[dict[str, Any]]:
        """The sources the run's knowledge searches returned, as a last message item (as stored: `sources_item`)."""
        footnote = self._sources.footnote()
        if not footnote or self.structured:
            return []
        item = sources_item_id(str(self.skeleton["id"]))
        return [*self._open(item, item, "text"), *self._delta(item, footnote), *self._close(item)]

    def terminal(self, response: dict[str, Any]) -> dict[str, Any]:
        """The last event, with the response object as Postgres has it once the run ended."""
        name = {"completed": "response.completed", "failed": "response.failed", "cancelled": "response.incomplete"}
        return self._event(name[self.ending or "failed"], response=response)

    def _event(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.seq += 1
        return {"type": kind, "sequence_number": self.seq, **fields}

    def _open(self, key: str, item: str, kind: Literal["text", "call"], name: str = "") -> list[dict[str, Any]]:
        self._items[key] = entry = _Item(item, self._count, kind, name)
        self._count += 1
        if kind == "call":
            added = call_item(key, name, "", status="in_progress")
            return [self._event("response.output_item.added", output_index=entry.index, item=added)]
        part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        return [
            self._event(
                "response.output_item.added", output_index=entry.index, item=message_item(item, "", "in_progress")
            ),
            self._event(
                "response.content_part.added", item_id=item, output_index=entry.index, content_index=0, part=part
            ),
        ]

    def _question(self, value: dict[str, Any]) -> list[dict[str, Any]]:
        """An `ask_user` question the run waits on: a function call the caller answers with a
        `function_call_output` (call id = the question's id) in a request whose `previous_response_id` is this one."""
        item = question_item(value)
        index, self._count = self._count, self._count + 1
        return [
            self._event("response.output_item.added", output_index=index, item=item),
            self._event("response.output_item.done", output_index=index, item=item),
        ]

    def _call_start(self, call_id: str, name: str) -> list[dict[str, Any]]:
        if name == SEARCH_TOOL:
            self._searches.add(call_id)
        if name == OUTPUT_TOOL:
            return self._open(call_id, structured_item_id(call_id), "text")
        if name in self.client_tools:
            return self._open(call_id, f"fc_{call_id}", "call", name)
        return []

    def _delta(self, key: str, delta: str) -> list[dict[str, Any]]:
        entry = self._items.get(key)
        if entry is None or not delta:
            return []
        entry.text += delta
        where = {"item_id": entry.id, "output_index": entry.index, "delta": delta}
        if entry.kind == "call":
            return [self._event("response.function_call_arguments.delta", **where)]
        return [self._event("response.output_text.delta", content_index=0, logprobs=[], **where)]

    def _close(self, key: str) -> list[dict[str, Any]]:
        entry = self._items.get(key)
        if entry is None:
            return []
        where = {"item_id": entry.id, "output_index": entry.index}
        if entry.kind == "call":
            done = call_item(key, entry.name, entry.text)
            return [
                self._event("response.function_call_arguments.done", arguments=entry.text, name=entry.name, **where),
                self._event("response.output_item.done", output_index=entry.index, item=done),
            ]
        item = message_item(entry.id, entry.text)
        return [
            self._event("response.output_text.done", content_index=0, text=entry.text, logprobs=[], **where),
            self._event("response.content_part.done", content_index=0, part=item["content"][0], **where),
            self._event("response.output_item.done", output_index=entry.index, item=item),
        ]
