"""Temporary chats and retention (issue 38). A temporary chat is not listed and is deleted, with its runs and
messages, `temporary_hours` after it was made (the org's policy, default 24); chats of a classification with a
retention period are deleted that many days after their last activity. The usage ledger and the approval audit
stay (they are content-free and do not reference the deleted rows). Each sweep deletes in bounded batches and
records counts in `retention_runs`, never content.

The sweep's clock is now plus `PA_RETENTION_CLOCK_SKEW_SECONDS` (tests move time with it instead of waiting)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from personal_agent.chats import policy_store
from personal_agent.chats.policy_store import DataPolicy
from personal_agent.db import org_transaction, system_transaction
from personal_agent.identity.principal import Principal
from personal_agent.settings import get_settings

BATCH = 500
MAX_BATCHES = 20
MAX_ORGS = 1000

__all__ = ["DataPolicy", "clock", "get_policy", "put_policy", "sweep_all", "sweep_org"]


def clock() -> datetime:
    return datetime.now(UTC) + timedelta(seconds=get_settings().retention_clock_skew_seconds)


async def get_policy(principal: Principal) -> dict[str, Any]:
    async with org_transaction(principal.org_id) as conn:
        return asdict(await policy_store.policy(conn, principal.org_id))


async def put_policy(principal: Principal, value: DataPolicy) -> dict[str, Any]:
    async with org_transaction(principal.org_id) as conn:
        return asdict(await policy_store.put_policy(conn, principal.org_id, value))


async def sweep_org(org_id: UUID, now: datetime) -> dict[str, int]:
    """Delete the org's due temporary chats and expired chats, in bounded batches; the counts (also recorded)."""
    temporary = expired = 0
    for _ in range(MAX_BATCHES):
        async with org_transaction(org_id) as conn:
            deleted = await policy_store.delete_temporary(conn, now, BATCH)
        temporary += deleted
        if deleted < BATCH:
            break
    async with org_transaction(org_id) as conn:
        policy = await policy_store.policy(conn, org_id)
    periods = {
        "standard": policy.standard_days,
        "confidential": policy.confidential_days,
        "restricted": policy.restricted_days,
    }
    for classification, days in periods.items():
        if days is None:
            continue
        for _ in range(MAX_BATCHES):
            async with org_transaction(org_id) as conn:
                deleted = await policy_store.delete_expired(conn, classification, now - timedelta(days=days), BATCH)
            expired += deleted
            if deleted < BATCH:
                break
    if temporary or expired:
        async with org_transaction(org_id) as conn:
            await policy_store.record_run(conn, org_id, temporary, expired)
    return {"temporary_chats": temporary, "expired_chats": expired}


async def sweep_all() -> dict[str, int]:
    """One sweep over every org with something due (the dev server's loop; the daily job on AWS)."""
    now = clock()
    async with system_transaction() as conn:
        orgs = await policy_store.due_orgs(conn, now, MAX_ORGS)
    totals = {"temporary_chats": 0, "expired_chats": 0}
    for org_id in orgs:
        for key, count in (await sweep_org(org_id, now)).items():
            totals[key] += count
    return totals
