"""The retention sweep over all of an org's data (issue 38): the chats' sweep (`chats.retention`: temporary and
expired chats) and the data exports past their time (`data_exports.expire`: object and row). The daily schedule on
AWS (the data jobs function), `pa dev`'s loop and an org admin's `POST /api/v1/admin/retention/run` call this."""

from __future__ import annotations

import logging
from datetime import datetime
from uuid import UUID

from personal_agent.chats import policy_store, retention
from personal_agent.db import org_transaction, system_transaction
from personal_agent.lifecycle import data_export_store, data_exports

log = logging.getLogger("personal_agent.lifecycle.data_retention")

# The daily schedule's event (template.yaml `RetentionSchedule`).
RETENTION_SOURCE = "pa.retention"


async def _expire_exports(org_id: UUID, now: datetime) -> int:
    expired = await data_exports.expire(org_id, now)
    if expired:
        async with org_transaction(org_id) as conn:
            await policy_store.record_run(conn, org_id, 0, 0, expired_exports=expired)
    return expired


async def sweep_org(org_id: UUID, now: datetime) -> dict[str, int]:
    """One org's sweep now: what it deleted, as counts (also recorded in `retention_runs`)."""
    counts = await retention.sweep_org(org_id, now)
    return {**counts, "expired_exports": await _expire_exports(org_id, now)}


async def sweep_all() -> dict[str, int]:
    """One sweep over every org with something due; the totals."""
    now = retention.clock()
    totals = {**await retention.sweep_all(), "expired_exports": 0}
    async with system_transaction() as conn:
        orgs = await data_export_store.expired_orgs(conn, now, retention.MAX_ORGS)
    for org_id in orgs:
        totals["expired_exports"] += await _expire_exports(org_id, now)
    log.info("retention sweep: %s", totals)
    return totals
