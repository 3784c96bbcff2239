"""Usage pricing: genai-prices for known models, admin overrides win, unknown stays unknown."""

from __future__ import annotations

import uuid
from decimal import Decimal

from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.usage import RequestUsage

from personal_agent.engine.usage import price
from personal_agent.spec.run_spec import ModelRef, RunSpec


def _spec(*refs: ModelRef) -> RunSpec:
    return RunSpec(
        run_id=uuid.uuid4(),
        org_id=uuid.uuid4(),
        user_id=None,
        chat_id=uuid.uuid4(),
        model=refs[0].id,
        model_chain=refs,
        instructions="",
        mode="inline",
    )


def _response(model_name: str) -> ModelResponse:
    return ModelResponse(
        parts=[TextPart("x")], usage=RequestUsage(input_tokens=1_000_000, output_tokens=500_000), model_name=model_name
    )


def test_known_model_is_priced_from_genai_prices() -> None:
    cost, version = price(_response("gpt-4o-mini"))
    assert cost is not None and cost > 0 and version and version.startswith("genai-prices")


def test_unknown_model_is_unknown_not_zero() -> None:
    assert price(_response("my-private-model-7")) == (None, None)


def test_an_admin_price_override_wins() -> None:
    ref = ModelRef(
        id="acme:m1",
        provider="acme",
        kind="openai-compatible",
        tier=2,
        model_name="gpt-4o-mini",
        input_price=2.0,
        output_price=8.0,
    )
    cost, version = price(_response("gpt-4o-mini"), _spec(ref))
    assert cost == Decimal("6") and version == "override acme:m1"
