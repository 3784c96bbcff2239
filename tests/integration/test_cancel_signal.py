"""Stop reaches a run driven by another process through Redis: the API process sets the run's cancel flag there
(`signal_cancel`) and the engine, reading it between stream chunks and before every step, stops without asking
Postgres; Postgres, the source of truth, is read at a watch's first check and every DB_POLL_SECONDS."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from personal_agent.bus import get_bus
from personal_agent.bus.key_names import cancel_flag
from personal_agent.db import org_transaction
from personal_agent.engine import cancellation
from personal_agent.engine.cancellation import CancelWatch, RunCancelled
from personal_agent.runs import store
from tests.auth import auth_headers
from tests.runs import start_run
from tests.scripted import scripted_model, text_then_tool
from tests.sse import read_events


async def test_a_stop_set_in_redis_by_another_process_stops_the_engine_at_its_next_check(
    stack: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cancellation, "POLL_SECONDS", 0.0)  # every chunk checks (the default is every second)
    run_id, org_id = uuid.uuid4(), uuid.uuid4()
    watch = CancelWatch(run_id, org_id)
    await watch.check(force=True)  # Postgres: not cancelled; the next Postgres read is DB_POLL_SECONDS away
    await watch.check()  # Redis: not cancelled either

    # What `signal_cancel` does in the API process that took the Stop (its in-process set is not ours).
    await get_bus().bump(cancel_flag(run_id), ttl_seconds=60)

    with pytest.raises(RunCancelled):
        await watch.check()


async def test_a_flag_only_in_postgres_is_read_at_a_watchs_first_check_and_every_db_poll(
    http: httpx.AsyncClient, make_tenant: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every Stop copies the flag to Redis, so a step's forced check reads Redis; Postgres is read at a watch's
    first check and every DB_POLL_SECONDS, which is how a flag whose Redis copy failed still stops the run."""
    tenant = make_tenant()
    with scripted_model(text_then_tool(rounds=0)) as (model, _):
        run = await start_run(http, auth_headers(tenant), model)
        await read_events(http, run["events_url"], auth_headers(tenant))
    run_id, org_id = uuid.UUID(run["run_id"]), uuid.UUID(str(tenant.org_id))
    within = CancelWatch(run_id, org_id)
    await within.check(force=True)  # its first check reads Postgres: not cancelled; the next read is 2 s away
    monkeypatch.setattr(cancellation, "DB_POLL_SECONDS", 0.0)
    due = CancelWatch(run_id, org_id)
    await due.check(force=True)  # not cancelled; its next Postgres read is due at once
    async with org_transaction(org_id) as conn:  # a Stop whose Redis copy was lost
        await store.request_cancel(conn, run_id)

    await within.check(force=True)  # a step within DB_POLL_SECONDS: Redis only, which has no copy
    with pytest.raises(RunCancelled):
        await due.check(force=True)  # the Postgres read is due
    with pytest.raises(RunCancelled):
        await CancelWatch(run_id, org_id).check(force=True)  # the next drive's (or durable step's) first check


async def test_the_flag_read_as_the_run_is_marked_running_stands_for_its_first_postgres_read(
    http: httpx.AsyncClient, make_tenant: Any
) -> None:
    """`store.mark_running` returns the flag in checkpoint 0's transaction, so the drive's first check need not
    read Postgres again; a set flag still stops the run at that check."""
    tenant = make_tenant()
    with scripted_model(text_then_tool(rounds=0)) as (model, _):
        run = await start_run(http, auth_headers(tenant), model)
        await read_events(http, run["events_url"], auth_headers(tenant))
    run_id, org_id = uuid.UUID(run["run_id"]), uuid.UUID(str(tenant.org_id))
    async with org_transaction(org_id) as conn:  # set after that read, its Redis copy lost
        await store.request_cancel(conn, run_id)

    read_unset = CancelWatch(run_id, org_id)
    read_unset.read_from_db(False)
    await read_unset.check(force=True)  # within DB_POLL_SECONDS of the drive's own read: Redis only
    read_set = CancelWatch(run_id, org_id)
    read_set.read_from_db(True)
    with pytest.raises(RunCancelled):
        await read_set.check(force=True)
    not_read = CancelWatch(run_id, org_id)
    not_read.read_from_db(None)
    with pytest.raises(RunCancelled):
        await not_read.check(force=True)
