"""The retention sweep over all of an org's data (issue 38): attachments, knowledge documents and memories past their
classification's period (`content_retention`: objects, then rows; first, so a chat's files are not left behind when
its row goes), the chats' sweep (`chats.retention`: temporary and expired chats) and the data exports past their
time (`data_exports.expire`: object and row). The daily schedule on AWS (the data jobs function), `pa dev`'s loop and
an org admin's `POST /api/v1/admin/retention/run` call this.

A run's event stream is not swept: every write to it resets its expiry to `PA_EVENT_RETENTION_SECONDS` (default a
day, as short as the shortest period), so at the default it is gone before any period ends; an operator who raises
it keeps streams (and their content) that much longer than the periods say."""

from __future__ import annotations

import logging
from datetime import datetime
from uuid import UUID

from personal_agent.chats import policy_store, retention
from personal_agent.db import org_transaction, system_transaction
from personal_agent.lifecycle import content_retention, data_export_store, data_exports

log = logging.getLogger("personal_agent.lifecycle.data_retention")

# The daily schedule's event (template.yaml `RetentionSchedule`).
RETENTION_SOURCE = "pa.retention"
# What a sweep's result counts.
KINDS = (
    "temporary_chats",
    "expired_chats",
    "expired_attachments",
    "expired_documents",
    "expired_memories",
    "expired_exports",
)


async def _expire_exports(org_id: UUID, now: datetime) -> int:
    expired = await data_exports.expire(org_id, now)
    if expired:
        async with org_transaction(org_id) as conn:
            await policy_store.record_run(conn, org_id, 0, 0, expired_exports=expired)
    return expired


async def sweep_org(org_id: UUID, now: datetime) -> dict[str, int]:
    """One org's sweep now: what it deleted, as counts (also recorded in `retention_runs`)."""
    content = await content_retention.sweep_org(org_id, now)
    counts = await retention.sweep_org(org_id, now)
    return {**counts, **content, "expired_exports": await _expire_exports(org_id, now)}


async def sweep_all() -> dict[str, int]:
    """One sweep over every org with something due; the totals."""
    now = retention.clock()
    totals = dict.fromkeys(KINDS, 0)
    async with system_transaction() as conn:
        due = await policy_store.due_orgs(conn, now, retention.MAX_ORGS)
        exporting = await data_export_store.expired_orgs(conn, now, retention.MAX_ORGS)
    for org_id in due:
        for key, count in (await sweep_org(org_id, now)).items():
            totals[key] += count
    for org_id in set(exporting) - set(due):
        totals["expired_exports"] += await _expire_exports(org_id, now)
    if any(totals.values()):  # a sweep with nothing due says nothing (pa dev runs one at start)
        log.info("retention sweep: %s", totals)
    return totals
