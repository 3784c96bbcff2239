"""Native pydantic-ai events to AG-UI events (the `ag-ui-protocol` types), with deterministic ids.

The translation is stateless across steps: message ids derive from (run, model request index, part
index), so a durable step that restarts from a checkpoint emits the same ids as the inline path.
"""

from __future__ import annotations

import json
from typing import Any

from ag_ui.core import (
    BaseEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from pydantic_ai.messages import (
    FunctionToolResultEvent,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
    ToolReturnPart,
)

# A tool return's pydantic-ai outcome when it is not a success, as the transcript words it (a retry: a failed try).
_OUTCOMES = {"failed": "failed", "retried": "failed", "denied": "denied", "interrupted": "interrupted"}


def _args_text(args: Any) -> str:
    if args is None:
        return ""
    if isinstance(args, str):
        return args
    if hasattr(args, "model_dump"):
        args = args.model_dump(mode="json")
    return json.dumps(args, separators=(",", ":"), default=str)


class AgUiTranslator:
    """Turns the native events of one model request (or one tool round) into AG-UI events."""

    def __init__(self, run_id: str, request_index: int) -> None:
        self.run_id = run_id
        self.request_index = request_index
        self.open_text: dict[int, str] = {}  # part index -> message id of a text message not yet ended
        self.text_so_far: dict[int, str] = {}
        self.open_tool_calls: dict[int, str] = {}

    def message_id(self, part_index: int) -> str:
        return f"{self.run_id}:{self.request_index}:{part_index}"

    def translate(self, event: Any) -> list[BaseEvent]:
        if isinstance(event, PartStartEvent):
            return self._start(event)
        if isinstance(event, PartDeltaEvent):
            return self._delta(event)
        if isinstance(event, PartEndEvent):
            return self._end(event)
        if isinstance(event, FunctionToolResultEvent):
            return self.tool_result(event.part)
        return []

    def _start(self, event: PartStartEvent) -> list[BaseEvent]:
        part = event.part
        if isinstance(part, TextPart):
            mid = self.message_id(event.index)
            self.open_text[event.index] = mid
            self.text_so_far[event.index] = part.content
            out: list[BaseEvent] = [TextMessageStartEvent(message_id=mid, role="assistant")]
            if part.content:
                out.append(TextMessageContentEvent(message_id=mid, delta=part.content))
            return out
        if isinstance(part, ToolCallPart):
            self.open_tool_calls[event.index] = part.tool_call_id
            out = [
                ToolCallStartEvent(
                    tool_call_id=part.tool_call_id,
                    tool_call_name=part.tool_name,
                    parent_message_id=f"{self.run_id}:{self.request_index}",
                )
            ]
            args = _args_text(part.args)
            if args:
                out.append(ToolCallArgsEvent(tool_call_id=part.tool_call_id, delta=args))
            return out
        return []

    def _delta(self, event: PartDeltaEvent) -> list[BaseEvent]:
        delta = event.delta
        if isinstance(delta, TextPartDelta) and event.index in self.open_text and delta.content_delta:
            self.text_so_far[event.index] += delta.content_delta
            return [TextMessageContentEvent(message_id=self.open_text[event.index], delta=delta.content_delta)]
        if isinstance(delta, ToolCallPartDelta) and event.index in self.open_tool_calls:
            args = _args_text(delta.args_delta)
            if args:
                return [ToolCallArgsEvent(tool_call_id=self.open_tool_calls[event.index], delta=args)]
        return []

    def _end(self, event: PartEndEvent) -> list[BaseEvent]:
        if event.index in self.open_text:
            return [TextMessageEndEvent(message_id=self.open_text.pop(event.index))]
        if event.index in self.open_tool_calls:
            return [ToolCallEndEvent(tool_call_id=self.open_tool_calls.pop(event.index))]
        return []

    def close_open(self) -> list[BaseEvent]:
        """End whatever is still open (a cancelled or failed stream), so no client waits on it."""
        out: list[BaseEvent] = [TextMessageEndEvent(message_id=mid) for mid in self.open_text.values()]
        out += [ToolCallEndEvent(tool_call_id=tid) for tid in self.open_tool_calls.values()]
        self.open_text.clear()
        self.open_tool_calls.clear()
        return out

    def partial_text(self) -> str:
        return "".join(self.text_so_far.values())

    def tool_result(self, part: Any) -> list[BaseEvent]:
        """The call's result; one that did not succeed says how in `metadata.outcome` (failed, denied,
        interrupted), the word the stored transcript uses for it too."""
        if not isinstance(part, ToolReturnPart):
            content = getattr(part, "model_response", None) or str(getattr(part, "content", ""))
            return [
                ToolCallResultEvent(
                    message_id=f"{self.run_id}:tool:{part.tool_call_id}",
                    tool_call_id=part.tool_call_id,
                    content=str(content),
                    role="tool",
                    metadata={"outcome": "failed"},
                )
            ]
        outcome = _OUTCOMES.get(part.outcome)
        return [
            ToolCallResultEvent(
                message_id=f"{self.run_id}:tool:{part.tool_call_id}",
                tool_call_id=part.tool_call_id,
                content=part.model_response_str(),
                role="tool",
                metadata={"outcome": outcome} if outcome else None,
            )
        ]
