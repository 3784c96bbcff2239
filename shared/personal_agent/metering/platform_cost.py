"""The platform's own cost of the usage it meters: what AWS bills the stack per run and per model request.

The items are the ones bench/economics.py prices per turn (Lambda GB-seconds at the configured memory, Lambda and
HTTP API requests, Step Functions transitions, Redis commands) at the same list prices; the quantities here are
defaults of the order it measures. Put the figures it prints for your deployment in PA_METERING_RATES (JSON,
per stack). An estimate for the operator's margin, beside the model cost the ledger prices exactly.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, fields

# AWS list prices, us-east-1 (2026): Lambda arm64 per GB-second and per request, Step Functions standard per
# state transition, HTTP API per request, Upstash Redis per command.
LAMBDA_GB_SECOND_USD = 0.0000133334
LAMBDA_REQUEST_USD = 0.0000002
SFN_TRANSITION_USD = 0.000025
HTTP_API_REQUEST_USD = 0.000001
REDIS_COMMAND_USD = 0.000002


@dataclass(frozen=True)
class PlatformRates:
    """USD per unit of what a run does; every field is derived from the measured quantities documented here."""

    # A run: the launch (POST /runs, one API request of ~60 ms at 1 GB) and the stream relay's connection.
    per_run_usd: float = HTTP_API_REQUEST_USD * 2 + LAMBDA_REQUEST_USD * 2 + LAMBDA_GB_SECOND_USD * 1.0 * 0.06
    # A durable run adds its Step Functions transitions (start, choice, end ~ 6) and one step invocation per turn.
    per_durable_run_usd: float = SFN_TRANSITION_USD * 6
    # A model request: ~0.35 s of worker time at 1 GB besides waiting, a checkpoint, ~12 batched Redis commands.
    per_model_request_usd: float = LAMBDA_GB_SECOND_USD * 1.0 * 0.35 + REDIS_COMMAND_USD * 12
    # Waiting for the model is billed Lambda time: output tokens at ~60 tokens/s at 1 GB.
    per_output_token_usd: float = LAMBDA_GB_SECOND_USD * 1.0 / 60

    @classmethod
    def from_environment(cls) -> PlatformRates:
        """The defaults, with any field overridden by PA_METERING_RATES (`{"per_run_usd": 0.00001}`)."""
        raw = os.environ.get("PA_METERING_RATES", "").strip()
        if not raw:
            return cls()
        overrides = json.loads(raw)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ValueError(f"PA_METERING_RATES: unknown rates {', '.join(unknown)}")
        return cls(**{**asdict(cls()), **{k: float(v) for k, v in overrides.items()}})

    def estimate(self, *, runs: int, durable_runs: int, model_requests: int, output_tokens: int) -> float:
        """The platform's cost of this much usage, in USD."""
        total = (
            runs * self.per_run_usd
            + durable_runs * self.per_durable_run_usd
            + model_requests * self.per_model_request_usd
            + output_tokens * self.per_output_token_usd
        )
        return round(total, 8)
