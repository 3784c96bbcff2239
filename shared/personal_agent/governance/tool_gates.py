"""Whether a tool call needs a person's approval: the declared policy, the untrusted-content gate and the
confidence gate, in one place. The engine asks `needs_approval` before every model request (a tool's `prepare`).

Untrusted-content gate: once anything from an untrusted source is in the run's context (a result of a tool the
snapshot marks `untrusted` or that marked itself so, or a webhook's body as the run's prompt), every acting tool
needs approval for the rest of the run, whatever the router's confidence. Approve rather than strip: the
injected text may be exactly what the user asked to act on, so the person decides, and the model still sees the
tool (a stripped tool would just make it try another route or claim it cannot).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from personal_agent.governance.routing import tool_needs_approval
from personal_agent.runs.spec import RunSpec

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

UNTRUSTED_METADATA = {"untrusted": True}
"""The metadata a tool puts on its result (`ToolReturn(metadata=...)`) to mark it untrusted wherever it goes."""

UNTRUSTED_TRIGGERS = frozenset({"webhook"})
"""Triggers whose prompt comes from outside: a webhook's body is written by whoever can call the hook."""


def _is_marked(metadata: Any) -> bool:
    return isinstance(metadata, dict) and metadata.get("untrusted") is True


def untrusted_in_context(spec: RunSpec, messages: Sequence[ModelMessage]) -> bool:
    """True when the run's prompt or any tool result in its history comes from an untrusted source."""
    if spec.trigger_source in UNTRUSTED_TRIGGERS:
        return True
    untrusted = {ref.name for ref in spec.tools if ref.untrusted}
    for message in messages:
        for part in message.parts:
            if part.part_kind == "tool-return" and (part.tool_name in untrusted or _is_marked(part.metadata)):
                return True
    return False


def needs_approval(
    spec: RunSpec,
    messages: Sequence[ModelMessage],
    *,
    acts: bool,
    declared: bool,
    routing: dict[str, Any] | None,
) -> bool:
    """Declared policy first, then the untrusted-content gate for acting tools, then the confidence gate."""
    if declared:
        return True
    if acts and untrusted_in_context(spec, messages):
        return True
    return tool_needs_approval(acts, declared, routing, spec.confidence_threshold)
