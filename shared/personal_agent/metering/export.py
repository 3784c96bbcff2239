"""Export every closed, not yet exported period: hourly and monthly, each once, each with its own usage.

A period is exported in one transaction that holds the period's advisory lock: it reads the ledger's sums,
publishes the object and the event, and records the export in `metering_exports`. A repeated or concurrent
export of the same period finds the record and does nothing. A run the function gets to late (an outage, a
slow schedule) is still counted in its own period: usage belongs to the period of its ledger row's time, not
to the period of the export. If publishing succeeds and the record does not commit, the next export writes
the same object again and sends an event with the same `export_id` (consumers de-duplicate by it).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol

from personal_agent.db import system_transaction
from personal_agent.metering import store
from personal_agent.metering.config import MeteringConfig, object_key
from personal_agent.metering.document import ExportDocument, build_document
from personal_agent.metering.periods import KINDS, Period, PeriodKind, closed_periods
from personal_agent.metering.platform_cost import PlatformRates


class Publisher(Protocol):
    def publish(self, key: str, document: ExportDocument) -> None: ...


@dataclass(frozen=True)
class ExportResult:
    period: Period
    outcome: Literal["exported", "already_exported"]
    key: str = ""
    totals: dict[str, Any] = field(default_factory=dict)


async def export_period(
    period: Period, config: MeteringConfig, publisher: Publisher, rates: PlatformRates
) -> ExportResult:
    """Export one period unless it already was."""
    async with system_transaction() as conn:
        await store.lock_period(conn, period)
        if await store.is_exported(conn, period):
            return ExportResult(period, "already_exported")
        usage = await store.usage_by_org_and_model(conn, period)
        runs = await store.runs_by_org(conn, period)
        sandbox = await store.sandbox_by_org(conn, period)
        document = build_document(config.tenant, config.stage, period, usage, runs, rates, sandbox)
        key = object_key(config.prefix, config.tenant, config.stage, period.kind, period.label)
        await asyncio.to_thread(publisher.publish, key, document)
        await store.record_export(conn, period, key, document.export_id, document.totals)
    return ExportResult(period, "exported", key, document.totals)


async def due_periods(config: MeteringConfig, now: datetime) -> list[Period]:
    """The closed periods after the last export of each kind (at most the backfill window back)."""
    due: list[Period] = []
    for kind in KINDS:
        async with system_transaction() as conn:
            last = await store.last_exported_end(conn, kind)
        since = last or now - _backfill(config, kind)
        due.extend(closed_periods(kind, since, now, config.grace))
    return due


def _backfill(config: MeteringConfig, kind: PeriodKind) -> timedelta:
    return timedelta(hours=config.backfill_hours) if kind == "hour" else timedelta(days=31 * config.backfill_months)


async def export_due(
    config: MeteringConfig, now: datetime | None = None, publisher: Publisher | None = None
) -> list[ExportResult]:
    """Export what is due at `now` (the schedule's time); return what happened to each period."""
    from personal_agent.metering.publish import OperatorPublisher

    now = now or datetime.now(UTC)
    sender = publisher or OperatorPublisher(config)
    rates = PlatformRates.from_environment()
    return [await export_period(p, config, sender, rates) for p in await due_periods(config, now)]
