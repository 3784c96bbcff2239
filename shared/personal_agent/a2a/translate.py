"""A run's AG-UI events (the `data:` lines the relay sends) as A2A stream events.

- Text deltas go out as chunks of the task's one artifact, `answer`. The first text after a tool call starts it
  over (`append: false`): what the model said before calling a tool was not its answer. So a client that applies
  the chunks as the protocol says ends with the text of the run's last model response, the answer `tasks/get` gives.
- A tool call and its result are `working` status updates naming the tool (never its arguments or result).
- An approval the run waits for is remembered; the run's `RUN_FINISHED` interrupt ends the stream (the task is
  `input-required` until a person decides in the web chat or the API).
- `RUN_FINISHED` or `RUN_ERROR` ends it; the caller then reads the run's final status from the database (written
  before the terminal event).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from a2a.server.events import Event
from a2a.types import Artifact, Part, TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent

from personal_agent.a2a.tasks import ANSWER_ARTIFACT, agent_message

Outcome = Literal["open", "interrupted", "ended"]
_ENDING = {"access_revoked", "resume_expired"}
"""CUSTOM events after which the relay sends nothing more (the caller lost access; the events are gone)."""


def frame_events(chunk: str) -> list[dict[str, Any]]:
    """The events in a chunk of SSE frames (comments and pings carry none)."""
    return [json.loads(line[6:]) for line in chunk.split("\n") if line.startswith("data: ")]


@dataclass
class Translator:
    task_id: str
    context_id: str
    outcome: Outcome = "open"
    approvals: list[dict[str, Any]] = field(default_factory=list)
    streamed_text: bool = False
    _restart: bool = True
    _tools: dict[str, str] = field(default_factory=dict)

    def feed(self, event: dict[str, Any]) -> list[Event]:
        kind = event.get("type")
        if kind == "TEXT_MESSAGE_CONTENT" and event.get("delta"):
            return [self._text(str(event["delta"]))]
        if kind == "TOOL_CALL_START":
            name = str(event.get("toolCallName", ""))
            self._tools[str(event.get("toolCallId", ""))] = name
            self._restart = True
            return [self._working(f"Calling {name}", tool=name, toolCallId=event.get("toolCallId"))]
        if kind == "TOOL_CALL_RESULT":
            call_id = str(event.get("toolCallId", ""))
            name = self._tools.get(call_id, "the tool")
            outcome = (event.get("metadata") or {}).get("outcome") or "done"
            return [self._working(f"{name} answered ({outcome})", tool=name, toolCallId=call_id, outcome=outcome)]
        if kind == "CUSTOM":
            return self._custom(event)
        if kind == "RUN_FINISHED":
            interrupted = (event.get("outcome") or {}).get("type") == "interrupt"
            self.outcome = "interrupted" if interrupted else "ended"
            return self._close()
        if kind == "RUN_ERROR":
            self.outcome = "ended"
            return self._close()
        return []

    def _custom(self, event: dict[str, Any]) -> list[Event]:
        name, value = event.get("name"), event.get("value") or {}
        if name == "approval_requested" and not value.get("child_run_id"):
            self.approvals.append(value)
        elif name in _ENDING:
            self.outcome = "ended"
            return self._close()
        return []

    def _text(self, delta: str) -> TaskArtifactUpdateEvent:
        append = not self._restart
        self._restart, self.streamed_text = False, True
        artifact = Artifact(artifact_id=ANSWER_ARTIFACT, name=ANSWER_ARTIFACT, parts=[Part(text=delta)])
        return TaskArtifactUpdateEvent(
            task_id=self.task_id, context_id=self.context_id, artifact=artifact, append=append
        )

    def _close(self) -> list[Event]:
        """The artifact's last chunk (empty), when any text was streamed."""
        if not self.streamed_text:
            return []
        artifact = Artifact(artifact_id=ANSWER_ARTIFACT, name=ANSWER_ARTIFACT, parts=[Part(text="")])
        return [
            TaskArtifactUpdateEvent(
                task_id=self.task_id, context_id=self.context_id, artifact=artifact, append=True, last_chunk=True
            )
        ]

    def _working(self, text: str, **metadata: Any) -> TaskStatusUpdateEvent:
        message_id = f"{self.task_id}-status-{metadata.get('toolCallId')}-{metadata.get('outcome', 'call')}"
        message = agent_message(self.task_id, self.context_id, text, message_id, **metadata)
        status = TaskStatus(state=TaskState.TASK_STATE_WORKING, message=message)
        return TaskStatusUpdateEvent(task_id=self.task_id, context_id=self.context_id, status=status)
