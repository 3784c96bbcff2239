"""Stop reaches a run driven by another process through Redis: the API process sets the run's cancel flag there
(`signal_cancel`) and the engine, reading it between stream chunks, stops without asking Postgres."""

from __future__ import annotations

import uuid

import pytest

from personal_agent.bus import get_bus
from personal_agent.bus.keys import cancel_flag
from personal_agent.engine import cancellation
from personal_agent.engine.cancellation import CancelWatch, RunCancelled


async def test_a_stop_set_in_redis_by_another_process_stops_the_engine_at_its_next_check(
    stack: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cancellation, "POLL_SECONDS", 0.0)  # every chunk checks (the default is every 0.25 s)
    run_id, org_id = uuid.uuid4(), uuid.uuid4()
    watch = CancelWatch(run_id, org_id)
    await watch.check(force=True)  # Postgres: not cancelled; the next Postgres read is DB_POLL_SECONDS away
    await watch.check()  # Redis: not cancelled either

    # What `signal_cancel` does in the API process that took the Stop (its in-process set is not ours).
    await get_bus().bump(cancel_flag(run_id), ttl_seconds=60)

    with pytest.raises(RunCancelled):
        await watch.check()
