"""Usage per ModelResponse, priced with genai-prices; an unpriced model is unknown (NULL), never zero.

Platform-key usage is priced at the platform's price: the catalog puts the platform's prices (or none, so
genai-prices decides) on a platform-key ModelRef, whatever price an org admin set on the model."""

from __future__ import annotations

from decimal import Decimal
from importlib.metadata import version

from pydantic_ai.messages import ModelResponse

from personal_agent.db.pool import Conn
from personal_agent.governance import reservation_store
from personal_agent.models.answered import answering_provider, run_refs
from personal_agent.runs import store
from personal_agent.spec.run_spec import ModelRef, RunSpec

Priced = tuple[Decimal | None, str | None]


def _genai(response: ModelResponse) -> Priced:
    try:
        calculation = response.cost()
    except (LookupError, ValueError, AssertionError):
        return None, None
    return Decimal(str(calculation.total_price)), f"genai-prices {version('genai-prices')}"


def _ref_price(ref: ModelRef, response: ModelResponse) -> Priced:
    if ref.input_price is None or ref.output_price is None:
        return _genai(response)
    usage = response.usage
    cost = (
        Decimal(str(ref.input_price)) * usage.input_tokens + Decimal(str(ref.output_price)) * usage.output_tokens
    ) / Decimal(1_000_000)
    return cost, f"{'platform' if ref.platform_key else 'override'} {ref.id}"


def price(response: ModelResponse, spec: RunSpec | None = None) -> Priced:
    """The response's cost in USD and where the price came from: the price on the ref that answered (the
    platform's for a platform-key model, else an admin override), else genai-prices; (None, None) when
    unknown. When several refs share the response's model name, the highest price counts (unknown wins)."""
    refs = run_refs(spec) if spec else ()
    candidates = [_ref_price(ref, response) for ref in refs if ref.model_name == response.model_name]
    if not candidates:
        return _genai(response)
    known = [c for c in candidates if c[0] is not None]
    if len(known) < len(candidates):
        return None, None
    return max(known, key=lambda c: c[0] or Decimal(0))


async def record(conn: Conn, spec: RunSpec, request_index: int, response: ModelResponse) -> bool:
    """Write the usage row for one response and settle its budget reservation (one transaction); False when
    the row was already written (a replay)."""
    cost, price_version = price(response, spec)
    usage = response.usage
    written = await store.record_usage(
        conn,
        spec,
        request_index,
        response.model_name or spec.model,
        answering_provider(run_refs(spec), response.model_name, response.provider_name),
        {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
        },
        cost,
        price_version,
    )
    await reservation_store.settle(conn, spec.run_id, request_index)
    return written
