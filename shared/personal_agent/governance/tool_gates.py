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
from personal_agent.spec.labels import run_labels
from personal_agent.spec.run_spec import RunSpec

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage


def untrusted_in_context(spec: RunSpec, messages: Sequence[ModelMessage]) -> bool:
    """True when the run launched untrusted (its chat, its trigger) or anything untrusted entered its context."""
    return run_labels(spec, messages).untrusted


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
