"""RUN_ERROR never echoes what a model server answered (issue 28, item 5): a provider's error body can repeat the
prompt or name the key it was sent, and the run's error reaches the browser, the run row and workflow outputs. The
message says the HTTP status and the model; the errors are pydantic-ai's own, as its OpenAI model raises them."""

from __future__ import annotations

import uuid

from pydantic_ai.exceptions import FallbackExceptionGroup, ModelAPIError, ModelHTTPError, UnexpectedModelBehavior

from personal_agent.engine.failures import run_error
from personal_agent.governance.keys import KeyEndpointMismatch
from personal_agent.models.provider_address import ProviderAddressRefused
from personal_agent.spec.run_spec import ModelRef, RunSpec

BODY = {"error": {"message": "Incorrect API key provided: sk-live-7d3e9a1c. You said: the merger closes Friday"}}


def test_a_model_http_error_says_status_provider_and_model_only() -> None:
    error = run_error(ModelHTTPError(401, "gpt-4o-mini", BODY))
    assert error == {"code": "model_error", "message": "the model provider answered HTTP 401 (model gpt-4o-mini)"}
    spec = RunSpec(
        run_id=uuid.uuid4(),
        org_id=uuid.uuid4(),
        user_id=None,
        chat_id=uuid.uuid4(),
        model="cheapo:gpt-4o-mini",
        model_chain=(
            ModelRef(id="cheapo:gpt-4o-mini", provider="cheapo", kind="openai", tier=0, model_name="gpt-4o-mini"),
        ),
        instructions="i",
        mode="inline",
    )
    named = run_error(ModelHTTPError(401, "gpt-4o-mini", BODY), spec)
    assert named["message"] == "the model provider cheapo answered HTTP 401 (model gpt-4o-mini)"


def test_no_failure_of_a_model_carries_the_body_it_answered() -> None:
    failures = [
        ModelHTTPError(500, "m", BODY),
        ModelAPIError("m", f"connection reset after {BODY}"),
        UnexpectedModelBehavior("the model answered in an unexpected shape", body=str(BODY)),
        FallbackExceptionGroup("all failed", [ModelHTTPError(429, "a", BODY), ModelHTTPError(503, "b", BODY)]),
    ]
    for failure in failures:
        error = run_error(failure)
        assert error["code"] == "model_error"
        assert "merger" not in error["message"] and "sk-live" not in error["message"], error
    assert run_error(failures[3])["message"] == (
        "every model failed: the model provider answered HTTP 429 (model a); the model provider answered HTTP 503"
        " (model b)"
    )


def test_key_and_address_refusals_keep_their_own_codes() -> None:
    assert run_error(KeyEndpointMismatch("the provider key was entered for another endpoint"))["code"] == (
        "key_endpoint_mismatch"
    )
    assert run_error(ProviderAddressRefused("base_url: 10.0.0.1 is not public"))["code"] == "address_not_allowed"
