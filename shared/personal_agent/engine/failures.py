"""What ends a run `failed`, and the RUN_ERROR code each failure gets (a stable code and a short message)."""

from __future__ import annotations

from typing import Any

from pydantic_ai.exceptions import AgentRunError, ModelHTTPError, UnexpectedModelBehavior, UsageLimitExceeded

from personal_agent.governance.budgets import BudgetExceeded
from personal_agent.governance.tiers import ClassificationBlocked


class RunLimitExceeded(Exception):
    """The run reached a hard limit of its spec (`RunLimits`: model requests, tool calls)."""


MODEL_ERRORS = (ModelHTTPError, UnexpectedModelBehavior, UsageLimitExceeded, AgentRunError)
RUN_FAILURES = (*MODEL_ERRORS, RunLimitExceeded, BudgetExceeded, ClassificationBlocked)
"""The exceptions the engine turns into a failed run; anything else is a bug (the driver fails the run)."""


def run_error(exc: BaseException) -> dict[str, Any]:
    """The run's `error` (and its RUN_ERROR event): `limit_exceeded`, the budget's or the gate's own code, or
    `model_error`."""
    if isinstance(exc, BudgetExceeded | ClassificationBlocked):
        code = exc.code
    elif isinstance(exc, RunLimitExceeded | UsageLimitExceeded):
        code = "limit_exceeded"
    else:
        code = "model_error"
    return {"code": code, "message": str(exc)[:500]}
