"""What ends a run `failed`, and the RUN_ERROR code each failure gets (a stable code and a short message).

A message never carries what an upstream server answered: a provider's error body can echo the request (the
prompt, a tool result) or name the key it was sent, and RUN_ERROR reaches the browser, the run row and the
workflow outputs. A model error says the HTTP status and which model answered, nothing more."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic_ai.exceptions import (
    AgentRunError,
    FallbackExceptionGroup,
    ModelAPIError,
    ModelHTTPError,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
)

from personal_agent.errors import AppError
from personal_agent.governance.budgets import BudgetExceeded
from personal_agent.governance.keys import KeyEndpointMismatch
from personal_agent.governance.tiers import ClassificationBlocked
from personal_agent.models.provider_address import ProviderAddressRefused
from personal_agent.spec.run_spec import RunSpec


class RunLimitExceeded(Exception):
    """The run reached a hard limit of its spec (`RunLimits`: model requests, tool calls)."""


MODEL_ERRORS = (ModelHTTPError, UnexpectedModelBehavior, UsageLimitExceeded, AgentRunError, FallbackExceptionGroup)
RUN_FAILURES = (
    *MODEL_ERRORS,
    RunLimitExceeded,
    BudgetExceeded,
    ClassificationBlocked,
    KeyEndpointMismatch,
    ProviderAddressRefused,
)
"""The exceptions the engine turns into a failed run; anything else is a bug (the driver fails the run)."""


def model_error_message(exc: BaseException, providers: Mapping[str, str] | None = None) -> str:
    """What the run may say of a model's failure: its status, provider and model, never the body it answered.
    `providers`: the provider of each model name the run may call (its spec's chain)."""
    who = f"the model provider {(providers or {}).get(getattr(exc, 'model_name', ''), '')}".rstrip()
    if isinstance(exc, ModelHTTPError):
        return f"{who} answered HTTP {exc.status_code} (model {exc.model_name})"
    if isinstance(exc, ModelAPIError):
        return f"{who} could not be reached (model {exc.model_name})"
    if isinstance(exc, UnexpectedModelBehavior):
        return f"the model answered something unexpected: {exc.message}"
    if isinstance(exc, FallbackExceptionGroup):
        return "every model failed: " + "; ".join(model_error_message(e, providers) for e in exc.exceptions)
    if isinstance(exc, AgentRunError | RunLimitExceeded):
        return str(exc)  # pydantic-ai's or our own words (limits, retries), not a server's
    return f"the model failed ({type(exc).__name__})"


def run_error(exc: BaseException, spec: RunSpec | None = None) -> dict[str, Any]:
    """The run's `error` (and its RUN_ERROR event): `limit_exceeded`, the budget's, the gate's or the key's own
    code, or `model_error` naming the provider of the run's model that failed (from `spec`)."""
    if isinstance(exc, AppError):
        return {"code": exc.code, "message": exc.message[:500]}
    if isinstance(exc, RunLimitExceeded | UsageLimitExceeded):
        return {"code": "limit_exceeded", "message": str(exc)[:500]}
    if spec is not None and spec.answer_schema is not None:
        if isinstance(exc, UnexpectedModelBehavior) and "output" in exc.message and "retries" in exc.message:
            message = "the model did not produce an answer that matches the agent's output schema"
            return {"code": "output_invalid", "message": message}
    refs = [*spec.model_chain, *([spec.router_model] if spec.router_model else [])] if spec else []
    providers = {ref.model_name: ref.provider for ref in refs}
    return {"code": "model_error", "message": model_error_message(exc, providers)[:500]}
