"""Which runs an agent's online sampling takes: a run is in the sample when the hash of its id falls below the rate,
so the choice is the same wherever and however often it is asked (tests compute it too)."""

from __future__ import annotations

import hashlib
from uuid import UUID


def in_sample(run_id: UUID, rate: float) -> bool:
    """Whether the run is among the `rate` (0 to 1) sampled: the first 8 bytes of SHA-256 of its id, as a fraction."""
    if rate <= 0:
        return False
    fraction = int.from_bytes(hashlib.sha256(run_id.bytes).digest()[:8], "big") / 2**64
    return fraction < rate
