"""Every CUSTOM AG-UI event value, one pydantic model each, registered by event name for the stream it goes on: a
run's stream (`RUN_EVENTS`) or a user's feed (`FEED_EVENTS`; `approval_requested` there is a count, not the
approval). The run emitter and the feed announcers call `check` before publishing, so a value that drifts from its
model, or a name nobody registered, fails where it is made (in a test) instead of in a browser. The models are
exported with the OpenAPI document (`openapi_components`) and generated into the web chat's TypeScript.

Values are checked, not rewritten: what goes on the wire is the dict the emitter built, and `extra="forbid"` keeps
a field the model does not declare from slipping through."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import models_json_schema

Stream = Literal["run", "feed"]


class _Value(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---- a run's stream -------------------------------------------------------------------------------------------


class ApprovalRequested(_Value):
    """A tool call waits for a person's decision (also on the parent's and the root's stream for a sub-agent's
    call, then with the child's ids)."""

    approval_id: str
    run_id: str
    tool: str
    tool_call_id: str
    args: Any
    expires_at: str
    child_run_id: str | None = None
    parent_run_id: str | None = None
    events_url: str | None = None


class QuestionAsked(_Value):
    """The run asks its person a question (`ask_user`) and waits for the answer: free text, one of `choices`, or a
    value of `schema`; `default` is taken when nobody answers by `expires_at`."""

    question_id: str
    run_id: str
    tool_call_id: str
    question: str
    choices: list[str] | None = None
    schema_: dict[str, Any] | None = Field(None, alias="schema")
    default: Any = None
    expires_at: str


class QuestionAnswered(_Value):
    """The run goes on with the answer to its question (`answered`: a person's, or the default at the timeout;
    `expired`: none, the call failed)."""

    question_id: str
    run_id: str
    tool_call_id: str
    status: Literal["answered", "expired"]
    answer: Any = None


class GatedToolValue(_Value):
    """A tool the tier gate kept from the run (the run view's `GatedToolOut`)."""

    name: str
    server: str
    trust_tier: int
    required_tier: int


class ToolGated(_Value):
    """Sent first when the run's tier kept tools from it."""

    tools: list[GatedToolValue]


class UnavailableServer(_Value):
    server: str
    error: str | None
    tools: list[str]


class ToolsUnavailable(_Value):
    """MCP servers this run could not reach (once per server per run); it goes on without their tools."""

    servers: list[UnavailableServer]


class RunResumed(_Value):
    """Recovery took the run over from a worker that stopped; it goes on from its last checkpoint."""

    run_id: str
    attempt: int


class RunCancelled(_Value):
    run_id: str


class HistorySummarised(_Value):
    """The model now reads the chat's older turns as a summary (`summary_message_id` null: they were left out)."""

    covers_message_id: int
    summary_message_id: int | None
    turns: int


class ResumeExpired(_Value):
    """The relay no longer keeps the events after `after` (`retention`: expired, trimmed, or lost with a bus that
    restarted empty), or could not reach them within `PA_DEPENDENCY_RETRY_SECONDS` (`unavailable`): reload the
    transcript from the API."""

    after: str | None
    """The id of the last event the client has (None: it read from the start)."""
    reason: Literal["retention", "unavailable"]


class AccessRevoked(_Value):
    """The stream's reader lost access (membership or token revoked); the relay stops."""

    code: str
    message: str


class _SubagentRef(_Value):
    child_run_id: str
    parent_run_id: str
    tool_call_id: str | None
    events_url: str


class SubagentStarted(_SubagentRef):
    task: str
    preset: str | None
    model: str
    tools: list[str]
    depth: int


class SubagentProgress(_SubagentRef):
    request_index: int
    tool_calls: list[str]


class SubagentError(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    code: str
    message: str


class SubagentFinished(_SubagentRef):
    status: str
    error: SubagentError | None = None
    answer: str | None = None
    cost_usd: float | None = None
    """What it cost, its own sub-agents included (as the transcript's sub-agent says after the run)."""


# ---- a user's feed ---------------------------------------------------------------------------------------------


class FeedRun(_Value):
    """A run of one of the user's chats started or ended (in another tab, by a webhook or a schedule)."""

    run_id: str
    chat_id: str
    status: str
    source: str
    mode: str


class FeedRunSkipped(_Value):
    """A trigger's run was refused before it started (a budget, the gate); `reason` is the error code."""

    run_id: str
    chat_id: str
    status: Literal["skipped"]
    reason: str
    source: str


class FeedApprovalsRequested(_Value):
    """A run of the user's chat waits for `count` decisions."""

    run_id: str
    chat_id: str
    count: int


class FeedQuestionAsked(_Value):
    """A run of the user's chat asks them a question."""

    question_id: str
    run_id: str
    chat_id: str
    question: str


class FeedOutputDelivery(_Value):
    """An attempt to deliver a workflow's output ended."""

    delivery_id: str
    workflow_id: str
    status: Literal["succeeded", "failed", "retrying"]


class DocumentErrorValue(_Value):
    code: str
    message: str


class FeedDocumentStatus(_Value):
    """A knowledge document the user uploaded changed status."""

    document_id: str
    collection: str
    status: Literal["uploading", "processing", "ready", "failed"]
    error: DocumentErrorValue | None
    chunk_count: int
    embedding_model: str | None = None


RUN_EVENTS: dict[str, type[BaseModel]] = {
    "approval_requested": ApprovalRequested,
    "question_asked": QuestionAsked,
    "question_answered": QuestionAnswered,
    "tool_gated": ToolGated,
    "tools_unavailable": ToolsUnavailable,
    "run_resumed": RunResumed,
    "run_cancelled": RunCancelled,
    "history_summarised": HistorySummarised,
    "resume_expired": ResumeExpired,
    "access_revoked": AccessRevoked,
    "subagent_started": SubagentStarted,
    "subagent_progress": SubagentProgress,
    "subagent_finished": SubagentFinished,
}
FEED_EVENTS: dict[str, type[BaseModel]] = {
    "run_started": FeedRun,
    "run_finished": FeedRun,
    "run_skipped": FeedRunSkipped,
    "approval_requested": FeedApprovalsRequested,
    "question_asked": FeedQuestionAsked,
    "output_delivery": FeedOutputDelivery,
    "document_status": FeedDocumentStatus,
}
REGISTRIES: dict[Stream, dict[str, type[BaseModel]]] = {"run": RUN_EVENTS, "feed": FEED_EVENTS}
UNION_NAMES: dict[Stream, str] = {"run": "RunCustomEvent", "feed": "FeedCustomEvent"}


class UnregisteredEvent(LookupError):
    """A CUSTOM event whose name has no model for its stream: a developer error, raised where it is emitted."""


def check(stream: Stream, name: str, value: Any) -> None:
    """Raise unless `value` is what the model registered for `name` on `stream` says (pydantic's ValidationError
    for a wrong value, `UnregisteredEvent` for an unknown name)."""
    model = REGISTRIES[stream].get(name)
    if model is None:
        raise UnregisteredEvent(f"no model for the CUSTOM event {name!r} on a {stream} stream (events/custom.py)")
    model.model_validate(value)


def openapi_components() -> dict[str, dict[str, Any]]:
    """The event models as OpenAPI component schemas, plus one union per stream (`RunCustomEvent`,
    `FeedCustomEvent`) of `{type: "CUSTOM", name, value}` discriminated by the name."""
    models = sorted({m for registry in REGISTRIES.values() for m in registry.values()}, key=lambda m: m.__name__)
    _, document = models_json_schema([(m, "validation") for m in models], ref_template="#/components/schemas/{model}")
    schemas: dict[str, dict[str, Any]] = dict(document.get("$defs", {}))
    for stream, registry in REGISTRIES.items():
        schemas[UNION_NAMES[stream]] = {
            "title": UNION_NAMES[stream],
            "description": f"A CUSTOM AG-UI event on a {stream} stream, its value typed by its name.",
            "oneOf": [
                {
                    "type": "object",
                    "required": ["type", "name", "value"],
                    "properties": {
                        "type": {"type": "string", "const": "CUSTOM"},
                        "name": {"type": "string", "const": name},
                        "value": {"$ref": f"#/components/schemas/{model.__name__}"},
                        "timestamp": {"type": "integer"},
                    },
                }
                for name, model in sorted(registry.items())
            ],
        }
    return schemas
