"""A run's tool policy as snapshotted at launch: the org's ordered rules over tool calls and the review mode."""

from __future__ import annotations

from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

ReviewMode = Literal["autonomous", "approve_each", "judge"]
"""Who reviews a run's acting calls besides the gates: nobody more, a person each time, or a cheap judge model."""


class PolicyRule(BaseModel):
    """One of the org's ordered tool rules, snapshotted at launch (`governance/policy_rules.py` evaluates it)."""

    model_config = ConfigDict(frozen=True)

    id: UUID
    tool: str
    """A tool's name or a glob (`refund_*`, `*`)."""
    when: str = "true"
    """A CEL expression over `args`, `user.role`, `run.trigger`, `run.tier`, `run.untrusted`."""
    effect: Literal["allow", "ask", "deny"]
    reason: str = ""
    log_only: bool = False
    """Only recorded (what it would have done), never enforced."""
    quorum: int = Field(1, ge=1, le=2)
    """People who must approve a call this rule asks about (2: two, neither the requester)."""


class ToolPolicy(BaseModel):
    """The org's tool rules and the run's review mode as they stood at launch, with what the rules read of the
    caller (steps never re-read live config)."""

    model_config = ConfigDict(frozen=True)

    rules: tuple[PolicyRule, ...] = ()
    review_mode: ReviewMode = "autonomous"
    user_role: str = "user"
    escalation_seconds: int | None = None
    """An approval nobody decided this long goes to the org's admins too (None: never escalated)."""
