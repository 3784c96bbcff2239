"""Billing periods (UTC hours and months) and which of them are closed and due for export."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

PeriodKind = Literal["hour", "month"]
KINDS: tuple[PeriodKind, ...] = ("hour", "month")


@dataclass(frozen=True, order=True)
class Period:
    """[start, end) of one hour or one month, in UTC."""

    kind: PeriodKind
    start: datetime
    end: datetime

    @property
    def label(self) -> str:
        """`2026-11-30T21` for an hour, `2026-11` for a month: the object's name."""
        return self.start.strftime("%Y-%m-%dT%H" if self.kind == "hour" else "%Y-%m")


def period_of(kind: PeriodKind, at: datetime) -> Period:
    """The period of `kind` that contains `at`."""
    at = at.astimezone(UTC)
    if kind == "hour":
        start = at.replace(minute=0, second=0, microsecond=0)
        return Period(kind, start, start + timedelta(hours=1))
    start = at.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    end = start.replace(year=start.year + 1, month=1) if start.month == 12 else start.replace(month=start.month + 1)
    return Period(kind, start, end)


def month_period(label: str) -> Period:
    """The month named `YYYY-MM`."""
    try:
        return period_of("month", datetime.strptime(label, "%Y-%m").replace(tzinfo=UTC))
    except ValueError:
        raise ValueError(f"a month is YYYY-MM, not {label!r}") from None


def closed_periods(kind: PeriodKind, since: datetime, now: datetime, grace: timedelta) -> list[Period]:
    """Every period of `kind` from the one containing `since` that ended at least `grace` before `now`.

    The grace lets usage written by a transaction that began before the period ended commit first.
    """
    found: list[Period] = []
    period = period_of(kind, since)
    while period.end + grace <= now:
        found.append(period)
        period = period_of(kind, period.end)
    return found
