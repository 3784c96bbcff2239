"""Metering periods: UTC hours and months, which are closed at a given time, and the platform cost estimate."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from personal_agent.metering.periods import closed_periods, month_period, period_of
from personal_agent.metering.platform_cost import PlatformRates

GRACE = timedelta(minutes=10)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_an_hour_counts_as_closed_only_after_the_grace() -> None:
    assert closed_periods("hour", at("2026-11-30T20:00"), at("2026-11-30T21:09"), GRACE) == []
    [hour] = closed_periods("hour", at("2026-11-30T20:00"), at("2026-11-30T21:10"), GRACE)
    assert (hour.label, hour.start, hour.end) == ("2026-11-30T20", at("2026-11-30T20:00"), at("2026-11-30T21:00"))


def test_a_late_export_covers_every_missed_hour_separately() -> None:
    labels = [p.label for p in closed_periods("hour", at("2026-11-30T21:00"), at("2026-12-01T02:30"), GRACE)]
    assert labels == ["2026-11-30T21", "2026-11-30T22", "2026-11-30T23", "2026-12-01T00", "2026-12-01T01"]


def test_months_roll_over_the_year_and_label_as_yyyy_mm() -> None:
    december = period_of("month", at("2026-12-31T23:59"))
    assert (december.label, december.end) == ("2026-12", at("2027-01-01T00:00"))
    assert [p.label for p in closed_periods("month", at("2026-11-15T00:00"), at("2027-01-01T00:10"), GRACE)] == [
        "2026-11",
        "2026-12",
    ]
    assert month_period("2026-02").end == at("2026-03-01T00:00")
    with pytest.raises(ValueError, match="YYYY-MM"):
        month_period("2026-13")


def test_platform_rates_add_up_and_take_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    rates = PlatformRates()
    one_turn = rates.estimate(runs=1, durable_runs=0, model_requests=2, output_tokens=200)
    assert one_turn == round(rates.per_run_usd + 2 * rates.per_model_request_usd + 200 * rates.per_output_token_usd, 8)
    assert rates.estimate(runs=1, durable_runs=1, model_requests=2, output_tokens=200) > one_turn
    monkeypatch.setenv("PA_METERING_RATES", '{"per_run_usd": 0.5}')
    assert PlatformRates.from_environment().estimate(runs=2, durable_runs=0, model_requests=0, output_tokens=0) == 1.0
    monkeypatch.setenv("PA_METERING_RATES", '{"per_banana": 1}')
    with pytest.raises(ValueError, match="unknown rates per_banana"):
        PlatformRates.from_environment()
