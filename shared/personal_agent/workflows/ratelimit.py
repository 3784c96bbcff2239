"""Webhook requests per workflow per minute: a fixed one-minute window counted in Postgres (one row per
workflow, so nothing to clean up). Over the limit: 429 `rate_limited` with `Retry-After` to the next window."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from uuid import UUID

from personal_agent.errors import RateLimited
from personal_agent.workflows import rate_window_store


def utc_now() -> datetime:
    return datetime.now(UTC)


clock: Callable[[], datetime] = utc_now  # which minute it is (tests pin it to stay off window edges)


async def take(org_id: UUID, workflow_id: UUID, per_minute: int) -> None:
    """Count one request in the current window; refuse it when the window is full."""
    now = clock()
    window = now.replace(second=0, microsecond=0)
    hits = await rate_window_store.hit(org_id, workflow_id, window)
    if hits > per_minute:
        retry_after = max(1, math.ceil((window + timedelta(minutes=1) - now).total_seconds()))
        raise RateLimited(
            f"this workflow accepts {per_minute} webhook requests a minute; try again in {retry_after} s",
            limit=per_minute,
            retry_after=retry_after,
        )
