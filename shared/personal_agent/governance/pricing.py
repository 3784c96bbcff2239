"""What a model request may cost before it is sent: the amount a budget reserves for it.

The estimate is the request's input (its message history, counted as one token per 3 bytes of JSON, which
over-counts English) plus its whole output token limit (`ModelRef.max_output_tokens`, sent as `max_tokens`),
at the highest price in the run's model chain, since any fallback may answer. A model nobody can price
(no price on its ref, unknown to genai-prices) is estimated at `PA_BUDGET_UNPRICED_USD_PER_MTOK`.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from functools import lru_cache
from typing import TYPE_CHECKING

from personal_agent.settings import get_settings
from personal_agent.spec.run_spec import ModelRef, RunSpec

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

MILLION = Decimal(1_000_000)
BYTES_PER_TOKEN = 3
_GENAI_PROVIDERS = {"openai": "openai", "anthropic": "anthropic"}

Rates = tuple[Decimal, Decimal]  # USD per million input tokens, per million output tokens


def unpriced_rate() -> Decimal:
    """The configured conservative price (USD per million tokens) for usage nobody can price."""
    return Decimal(str(get_settings().budget_unpriced_usd_per_mtok))


@lru_cache(maxsize=256)
def _genai_rates(model_name: str, kind: str) -> Rates | None:
    from genai_prices import Usage, calc_price

    try:
        calc = calc_price(
            Usage(input_tokens=1_000_000, output_tokens=1_000_000), model_name, provider_id=_GENAI_PROVIDERS.get(kind)
        )
    except (LookupError, ValueError):
        return None
    return Decimal(str(calc.input_price)), Decimal(str(calc.output_price))


def ref_rates(ref: ModelRef) -> Rates | None:
    """The ref's own prices (the platform's for a platform-key model, else an admin's), else genai-prices'."""
    if ref.input_price is not None and ref.output_price is not None:
        return Decimal(str(ref.input_price)), Decimal(str(ref.output_price))
    return _genai_rates(ref.model_name, ref.kind)


def request_estimate(
    spec: RunSpec, messages: Sequence[ModelMessage], models: tuple[ModelRef, ...] | None = None
) -> Decimal:
    """The most the next request of `spec` (to `models`, default its chain) is expected to cost, in USD."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    size = len(ModelMessagesTypeAdapter.dump_json(list(messages))) + len(spec.instructions.encode())
    input_tokens = Decimal(size // BYTES_PER_TOKEN + 1)
    fallback = unpriced_rate()
    chain = (
        models
        or spec.model_chain
        or (ModelRef(id=spec.model, provider="", kind="registered", tier=0, model_name=spec.model),)
    )
    costs = []
    for ref in chain:
        input_rate, output_rate = ref_rates(ref) or (fallback, fallback)
        costs.append((input_tokens * input_rate + ref.max_output_tokens * output_rate) / MILLION)
    return max(costs)
