"""A run's AG-UI events as one Chat Completions answer: the deltas of `chat.completion.chunk`s as they come, and
the whole `message` at the end.

What the caller sees: the run's text (the text of several model responses, as one answer), calls of the caller's
own tools (`tool_calls`, `finish_reason: "tool_calls"`), and a structured answer's JSON as the content. The
agent's own tools run inside, under the gates, and are not shown; the passages its knowledge searches returned end
the answer as numbered sources. An acting tool that needed a person's approval
was denied (a synchronous request cannot wait): the answer ends saying so."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from personal_agent.knowledge.cited import SEARCH_TOOL, Sources
from personal_agent.spec.run_spec import OUTPUT_TOOL

APPROVAL_NOTE = (
    "\n\n_(Not done: {tools} needs a person's approval, which a request that waits for its answer cannot get. "
    "Use the Responses API with `background: true` to wait for an approval.)_"
)


class RunFailed(Exception):
    """The run ended with RUN_ERROR: its code and message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class CompletionBuilder:
    """Feed it the run's events in order; it returns the deltas to send and keeps the whole answer."""

    client_tools: frozenset[str]
    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = None
    denied: list[str] = field(default_factory=list)
    _calls: dict[str, int] = field(default_factory=dict)  # a client call's id -> its index in tool_calls
    _structured: set[str] = field(default_factory=set)
    _open_text: bool = False
    _said_role: bool = False
    _searches: set[str] = field(default_factory=set)
    sources: Sources = field(default_factory=Sources)

    def feed(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """The deltas this event adds (none for what the caller does not see); raises `RunFailed` on RUN_ERROR."""
        kind = event.get("type")
        if kind == "TEXT_MESSAGE_START":
            self._open_text = bool(self.content)
        elif kind == "TEXT_MESSAGE_CONTENT":
            return self._text(str(event.get("delta", "")))
        elif kind == "TOOL_CALL_START":
            return self._call_start(event)
        elif kind == "TOOL_CALL_ARGS":
            return self._call_args(event)
        elif kind == "TOOL_CALL_RESULT" and event.get("toolCallId") in self._searches:
            self.sources.add(event.get("content"))
        elif kind == "CUSTOM" and event.get("name") == "approval_requested":
            self.denied.append(str((event.get("value") or {}).get("tool", "a tool")))
        elif kind == "RUN_ERROR":
            raise RunFailed(str(event.get("code") or "run_failed"), str(event.get("message", "the run failed")))
        elif kind == "RUN_FINISHED" and (event.get("outcome") or {}).get("type") != "interrupt":
            return self._finish()
        return []

    def message(self) -> dict[str, Any]:
        """The whole answer as a Chat Completions `message`."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content or None, "refusal": None}
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        return message

    def _delta(self, delta: dict[str, Any]) -> list[dict[str, Any]]:
        if not self._said_role:
            self._said_role = True
            delta = {"role": "assistant", **delta}
        return [delta]

    def _text(self, text: str) -> list[dict[str, Any]]:
        if not text:
            return []
        if self._open_text:  # a later response's text: a paragraph of its own
            self._open_text = False
            text = "\n\n" + text
        self.content += text
        return self._delta({"content": text})

    def _call_start(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        call_id, name = str(event.get("toolCallId")), str(event.get("toolCallName"))
        if name == SEARCH_TOOL:
            self._searches.add(call_id)
        if name == OUTPUT_TOOL:
            self._structured.add(call_id)
            self.content = ""  # a retried structured answer starts over
        if name not in self.client_tools:
            return []
        self._calls[call_id] = len(self.tool_calls)
        self.tool_calls.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}})
        first = {"index": self._calls[call_id], "id": call_id, "type": "function"}
        return self._delta({"tool_calls": [{**first, "function": {"name": name, "arguments": ""}}]})

    def _call_args(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        call_id, delta = str(event.get("toolCallId")), str(event.get("delta", ""))
        if call_id in self._structured:
            self.content += delta
            return self._delta({"content": delta})
        index = self._calls.get(call_id)
        if index is None or not delta:
            return []
        self.tool_calls[index]["function"]["arguments"] += delta
        return self._delta({"tool_calls": [{"index": index, "function": {"arguments": delta}}]})

    def _finish(self) -> list[dict[str, Any]]:
        deltas = []
        if (footnote := self.sources.footnote()) and not self._structured:
            deltas += self._text_tail(f"\n\n{footnote}")
        if self.denied:
            tools = ", ".join(f"`{name}`" for name in dict.fromkeys(self.denied))
            deltas += self._text_tail(APPROVAL_NOTE.format(tools=tools))
        self.finish_reason = "tool_calls" if self.tool_calls else "stop"
        return deltas

    def _text_tail(self, text: str) -> list[dict[str, Any]]:
        self.content += text
        return self._delta({"content": text})
