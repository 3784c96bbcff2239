"""The launch chokepoint's store: the one way a run's row is created, from a RunSpec the chokepoint prepared (a
chat turn in `launch.py`, a skipped trigger run, a sub-agent's children in `child_runs.py`). Below the drivers,
so the inline driver stores a round of children through it without importing the launch, which imports it."""

from __future__ import annotations

from typing import Any

from personal_agent.db.pool import Conn
from personal_agent.runs import store
from personal_agent.spec.run_spec import RunSpec


async def store_prepared(
    conn: Conn, spec: RunSpec, status: str = "queued", error: dict[str, Any] | None = None, owner: str | None = None
) -> store.RunRow:
    """The one way a launched run is stored: its prepared RunSpec becomes its row (a `skipped` one with `error`;
    with `owner`, stored already leased to the driver of this process that drives it first)."""
    return await store.insert_run(conn, spec, status, error, owner)
