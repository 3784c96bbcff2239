"""Usage per ModelResponse, priced with genai-prices; an unpriced model is unknown (NULL), never zero."""

from __future__ import annotations

from decimal import Decimal
from importlib.metadata import version

from pydantic_ai.messages import ModelResponse

from personal_agent.db.pool import Conn
from personal_agent.runs import store
from personal_agent.runs.spec import RunSpec


def price(response: ModelResponse, spec: RunSpec | None = None) -> tuple[Decimal | None, str | None]:
    """The response's cost in USD and where the price came from: an admin override for the model that
    answered, else genai-prices; (None, None) when unknown."""
    for ref in spec.model_chain if spec else ():
        if ref.model_name == response.model_name and ref.input_price is not None and ref.output_price is not None:
            usage = response.usage
            cost = (
                Decimal(str(ref.input_price)) * usage.input_tokens
                + Decimal(str(ref.output_price)) * usage.output_tokens
            ) / Decimal(1_000_000)
            return cost, f"override {ref.id}"
    try:
        calculation = response.cost()
    except (LookupError, ValueError, AssertionError):
        return None, None
    return Decimal(str(calculation.total_price)), f"genai-prices {version('genai-prices')}"


async def record(conn: Conn, spec: RunSpec, request_index: int, response: ModelResponse) -> bool:
    """Write the usage row for one response; False when it was already written (a replay)."""
    cost, price_version = price(response, spec)
    usage = response.usage
    return await store.record_usage(
        conn,
        spec,
        request_index,
        response.model_name or spec.model,
        response.provider_name,
        {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
        },
        cost,
        price_version,
    )
