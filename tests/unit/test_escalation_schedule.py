"""The approval escalation schedule's shape (issue 33 item 5): a one-time `at()` expression in UTC that never fires
before the escalation time, the event the run recovery function dispatches on, and no AWS call at all where
escalation is not scheduled (`pa dev`, whose loop sweeps instead)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from personal_agent.approvals import escalation_schedule
from personal_agent.settings import get_settings


def test_the_at_expression_is_utc_and_rounds_up_to_the_next_second() -> None:
    exact = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert escalation_schedule.at_expression(exact) == "at(2030-01-02T03:04:05)"
    assert escalation_schedule.at_expression(exact + timedelta(microseconds=1)) == "at(2030-01-02T03:04:06)"
    berlin = datetime(2030, 1, 2, 4, 4, 5, tzinfo=timezone(timedelta(hours=1)))
    assert escalation_schedule.at_expression(berlin) == "at(2030-01-02T03:04:05)"


def test_the_schedule_input_is_what_run_recovery_dispatches_on() -> None:
    org, approval = uuid.uuid4(), uuid.uuid4()
    assert json.loads(escalation_schedule.target_input(org, approval)) == {
        "source": "pa.escalation",
        "org_id": str(org),
        "approval_id": str(approval),
    }
    assert escalation_schedule.schedule_name(approval) == f"pa-esc-{approval}"
    assert len(escalation_schedule.schedule_name(approval)) <= 64  # Scheduler's name limit


def test_nothing_is_scheduled_or_deleted_without_a_target_and_role(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    monkeypatch.setattr(escalation_schedule, "aws_client", lambda service: calls.append(service))
    monkeypatch.setattr(get_settings(), "escalation_target_arn", None)
    monkeypatch.setattr(get_settings(), "escalation_role_arn", "arn:aws:iam::123456789012:role/r")
    assert escalation_schedule.put_schedule(uuid.uuid4(), uuid.uuid4(), datetime.now(UTC)) is False
    escalation_schedule.delete_schedule(uuid.uuid4())
    assert calls == []
