"""A run's and a chat's two governance labels, computed in this one module and read by every gate (launch, the
tool gates, the MCP tier gate, `delegate`, the summariser, memory recall).

- `content_tier`: the highest classification tier of anything that entered (the chat's classification, retrieved
  passages, attachments, recalled memories, a child's result).
- `untrusted`: anything from outside entered (a fetched page, search results, a tier-0 or external MCP result, a
  webhook body, a document the caller did not author, a tainted child's result or memory).

Labels only go up: a later action never lowers them (DESIGN.md, frozen contract 11). Data carries its labels with
it: a tool result in `ToolReturn(metadata=result_metadata(...))`, a child's answer the same way, a chat in its
`content_tier`/`untrusted` columns, a memory in its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from personal_agent.spec.run_spec import MAX_TIER, Labels, RunSpec

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

__all__ = [
    "CLEAN",
    "UNTRUSTED_METADATA",
    "UNTRUSTED_TRIGGERS",
    "Labels",
    "launch_labels",
    "messages_labels",
    "metadata_labels",
    "result_metadata",
    "run_labels",
    "run_tier",
    "step_spec",
]

UNTRUSTED_TRIGGERS = frozenset({"webhook"})
"""Triggers whose prompt comes from outside: a webhook's body is written by whoever can call the hook."""


CLEAN = Labels()


def result_metadata(labels: Labels, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The metadata a tool puts on its result (`ToolReturn(metadata=...)`) so the result's labels go with it into
    the run's messages, its checkpoints, the chat and anything derived from them."""
    return {**(extra or {}), "untrusted": labels.untrusted, "content_tier": labels.content_tier}


UNTRUSTED_METADATA = result_metadata(Labels(untrusted=True))
"""The metadata of a result from an untrusted source."""


def metadata_labels(metadata: Any) -> Labels:
    """The labels a tool result's metadata carries (none: clean)."""
    if not isinstance(metadata, Mapping):
        return CLEAN
    tier = metadata.get("content_tier", 0)
    tier = min(MAX_TIER, tier) if isinstance(tier, int) and tier > 0 else 0
    untrusted = metadata.get("untrusted") is True
    return Labels(content_tier=tier, untrusted=untrusted) if tier or untrusted else CLEAN


def launch_labels(
    chat: Labels, classification_tier: int, trigger_source: str, entered: Iterable[Labels] = ()
) -> Labels:
    """A run's labels at launch: the chat's, its classification (the new message enters under it), an untrusted
    trigger's body, and whatever else enters with the message (attachments, recallable memories)."""
    own = Labels(content_tier=min(MAX_TIER, classification_tier), untrusted=trigger_source in UNTRUSTED_TRIGGERS)
    return chat.join(own, *entered)


def messages_labels(messages: Sequence[ModelMessage], untrusted_tools: frozenset[str] = frozenset()) -> Labels:
    """The labels of the tool results in these messages (their metadata, and tools whose every result is
    untrusted) and of the summaries in front of them."""
    labels = CLEAN
    for message in messages:
        if message.kind == "request" and message.metadata:  # a summary of earlier turns carries theirs
            labels = labels.join(metadata_labels(message.metadata))
        for part in message.parts:
            if part.part_kind != "tool-return":
                continue
            labels = labels.join(metadata_labels(part.metadata))
            if part.tool_name in untrusted_tools and not labels.untrusted:
                labels = labels.join(Labels(untrusted=True))
    return labels


def run_labels(spec: RunSpec, messages: Sequence[ModelMessage]) -> Labels:
    """The run's labels now: what it launched with, raised by everything that entered its context since."""
    untrusted_tools = frozenset(ref.name for ref in spec.tools if ref.untrusted)
    launched = spec.labels
    if spec.trigger_source in UNTRUSTED_TRIGGERS and not launched.untrusted:
        launched = launched.join(Labels(untrusted=True))
    if any(ref.untrusted and ref.server_id is not None for ref in spec.tools) and not launched.untrusted:
        launched = launched.join(Labels(untrusted=True))  # a tier-0 MCP tool's description is in every request
    return launched.join(messages_labels(messages, untrusted_tools))


def run_tier(spec: RunSpec, messages: Sequence[ModelMessage]) -> int:
    """The tier every model and tool source of the run must pass now: its routing tier raised to its content."""
    return max(spec.routing_tier, run_labels(spec, messages).content_tier)


def step_spec(spec: RunSpec, messages: Sequence[ModelMessage]) -> RunSpec:
    """The spec an engine step runs with: its routing tier raised to what its content needs now (the
    classification gate, the tools and the summariser of the step read it)."""
    tier = run_tier(spec, messages)
    return spec if tier == spec.routing_tier else spec.model_copy(update={"routing_tier": tier})
