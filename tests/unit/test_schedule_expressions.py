"""Schedule expressions as EventBridge Scheduler reads them, and prompt templates."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from personal_agent.errors import InvalidInput
from personal_agent.workflows.prompts import TriggerValues, render, validate_template
from personal_agent.workflows.schedule_expressions import next_fires, parse_schedule

FRIDAY = datetime(2025, 3, 14, 10, 7, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("expression", "timezone", "expected"),
    [
        ("cron(0 9 * * ? *)", "UTC", datetime(2025, 3, 15, 9, 0, tzinfo=UTC)),
        ("cron(0/15 * * * ? *)", "UTC", datetime(2025, 3, 14, 10, 15, tzinfo=UTC)),
        ("cron(0 9 ? * MON-FRI *)", "UTC", datetime(2025, 3, 17, 9, 0, tzinfo=UTC)),
        ("cron(30 8 ? * 2,4 *)", "UTC", datetime(2025, 3, 17, 8, 30, tzinfo=UTC)),
        ("cron(0 18 L * ? *)", "UTC", datetime(2025, 3, 31, 18, 0, tzinfo=UTC)),
        ("cron(0 9 ? * 2#1 *)", "UTC", datetime(2025, 4, 7, 9, 0, tzinfo=UTC)),
        ("cron(0 9 ? * 6L *)", "UTC", datetime(2025, 3, 28, 9, 0, tzinfo=UTC)),
        ("cron(0 9 15W * ? *)", "UTC", datetime(2025, 4, 15, 9, 0, tzinfo=UTC)),  # 15 March is a Saturday
        ("cron(0 0 1 JAN ? 2030)", "UTC", datetime(2030, 1, 1, 0, 0, tzinfo=UTC)),
        ("cron(0 0 1 1 ? 2027/2)", "UTC", datetime(2027, 1, 1, 0, 0, tzinfo=UTC)),
        ("cron(0 9 ? * 1 *)", "UTC", datetime(2025, 3, 16, 9, 0, tzinfo=UTC)),  # AWS: 1 is Sunday
        ("cron(0 9 ? * 2/3 *)", "UTC", datetime(2025, 3, 17, 9, 0, tzinfo=UTC)),  # Monday, Thursday; not Sunday
        ("cron(0 9 ? * L *)", "UTC", datetime(2025, 3, 15, 9, 0, tzinfo=UTC)),  # alone, L is Saturday
        ("cron(0 9 * * ? *)", "Europe/Berlin", datetime(2025, 3, 15, 8, 0, tzinfo=UTC)),
        ("cron(0 9 * * ? *)", "America/New_York", datetime(2025, 3, 14, 13, 0, tzinfo=UTC)),  # after the DST change
    ],
)
def test_cron_expressions_fire_when_eventbridge_would(expression: str, timezone: str, expected: datetime) -> None:
    assert parse_schedule(expression, timezone).next_after(FRIDAY) == expected


@pytest.mark.parametrize(
    ("expression", "after", "fires"),
    [
        # Spring forward (9 March 2025, 02:00 EST -> 03:00 EDT): 02:30 does not exist that day, so it is skipped.
        ("cron(30 2 * * ? *)", datetime(2025, 3, 8, 12, tzinfo=UTC), [datetime(2025, 3, 10, 6, 30, tzinfo=UTC)]),
        # Fall back (2 November 2025, 02:00 EDT -> 01:00 EST): 01:30 happens twice and fires once, the first time;
        # 02:30 happens once, in EST.
        (
            "cron(30 1 * * ? *)",
            datetime(2025, 11, 1, 12, tzinfo=UTC),
            [datetime(2025, 11, 2, 5, 30, tzinfo=UTC), datetime(2025, 11, 3, 6, 30, tzinfo=UTC)],
        ),
        ("cron(30 2 * * ? *)", datetime(2025, 11, 1, 12, tzinfo=UTC), [datetime(2025, 11, 2, 7, 30, tzinfo=UTC)]),
        # Every half hour: the repeated hour's wall times are not fired again.
        (
            "cron(0/30 * * * ? *)",
            datetime(2025, 11, 2, 4, 50, tzinfo=UTC),
            [datetime(2025, 11, 2, 5, 0, tzinfo=UTC), datetime(2025, 11, 2, 5, 30, tzinfo=UTC)]
            + [datetime(2025, 11, 2, 7, 0, tzinfo=UTC)],
        ),
    ],
)
def test_cron_follows_eventbridge_across_daylight_saving_changes(
    expression: str, after: datetime, fires: list[datetime]
) -> None:
    """EventBridge Scheduler skips a time that does not exist and fires a repeated time once."""
    schedule = parse_schedule(expression, "America/New_York")
    for expected in fires:
        after = schedule.next_after(after)
        assert after == expected


def test_a_missing_midnight_is_skipped_and_the_next_hour_still_fires() -> None:
    # Santiago moves its clocks from 00:00 to 01:00 on 7 September 2025.
    hourly, daily = (
        parse_schedule("cron(0 * * * ? *)", "America/Santiago"),
        parse_schedule("cron(0 0 * * ? *)", "America/Santiago"),
    )
    assert hourly.next_after(datetime(2025, 9, 7, 3, 0, tzinfo=UTC)) == datetime(2025, 9, 7, 4, 0, tzinfo=UTC)
    assert daily.next_after(datetime(2025, 9, 6, 12, tzinfo=UTC)) == datetime(2025, 9, 8, 3, 0, tzinfo=UTC)


def test_rate_expressions_count_from_their_anchor() -> None:
    anchor = datetime(2025, 3, 14, 10, 0, tzinfo=UTC)
    schedule = parse_schedule("rate(5 minutes)")
    assert schedule.next_after(FRIDAY, anchor=anchor) == datetime(2025, 3, 14, 10, 10, tzinfo=UTC)
    assert schedule.next_after(anchor, anchor=anchor) == datetime(2025, 3, 14, 10, 5, tzinfo=UTC)
    assert parse_schedule("rate(1 day)").next_after(FRIDAY, anchor=anchor) == datetime(2025, 3, 15, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "expression",
    [
        "rate(1 minutes)",
        "rate(2 minute)",
        "rate(0 minutes)",
        "rate(5 weeks)",
        "cron(0 9 * * * *)",
        "cron(0 9 ? * ? *)",
        "cron(61 9 * * ? *)",
        "cron(0 9 * *)",
        "cron(0 9 ? * FUNDAY *)",
        "cron(0 9 ? * 0 *)",  # AWS counts 1-7
        "cron(? 9 * * ? *)",
        "cron(0 9 * * ? 2200)",
        "cron(00009 9 * * ? *)",
        "cron(0 0 1 1 ? 2020)",
        "every day at nine",
        "rate(99999999999 days)",  # past the last date there is
        "rate(3651 days)",  # over the ten-year cap
        "rate(٣ minutes)",  # a non-ASCII digit
        "cron(² 9 * * ? *)",
        "cron(0 9 ? * 2#³ *)",
        "cron(0 9 ¹W * ? *)",
    ],
)
def test_bad_expressions_are_refused(expression: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        parse_schedule(expression).next_after(FRIDAY)
    assert refused.value.code == "invalid_schedule_expression"


def test_the_longest_rate_still_has_a_next_fire_time() -> None:
    assert parse_schedule("rate(3650 days)").next_after(FRIDAY).year == 2035


def test_an_unknown_time_zone_is_refused() -> None:
    with pytest.raises(InvalidInput) as refused:
        parse_schedule("rate(1 hour)", "Mars/Olympus")
    assert refused.value.code == "invalid_timezone"


def test_templates_fill_in_the_body_its_fields_and_the_time() -> None:
    values = TriggerValues(
        trigger="webhook",
        time="2025-03-14T10:07:30Z",
        workflow_name="ci",
        body='{"build": {"id": 42, "tags": ["a", "b"]}, "text": "{{time}}"}',
    )
    template = validate_template("{{ trigger }} {{body.build.id}} {{body.build.tags.1}} {{body.missing}}|{{body.text}}")
    assert render(template, values) == "webhook 42 b |{{time}}"  # a placeholder inside the body stays as sent
    with pytest.raises(InvalidInput) as refused:
        validate_template("{{secret}}")
    assert refused.value.code == "unknown_placeholder"


def test_a_preview_lists_the_next_fires_and_stops_where_the_schedule_stops() -> None:
    start = datetime(2030, 3, 1, 12, tzinfo=UTC)
    hourly = next_fires(parse_schedule("rate(90 minutes)"), start, 3, anchor=start)
    assert [t.isoformat() for t in hourly] == [
        "2030-03-01T13:30:00+00:00",
        "2030-03-01T15:00:00+00:00",
        "2030-03-01T16:30:00+00:00",
    ]
    once = next_fires(parse_schedule("cron(0 9 1 1 ? 2031)"), start, 5)  # its year field ends: one fire left
    assert once == [datetime(2031, 1, 1, 9, tzinfo=UTC)]
    with pytest.raises(InvalidInput) as refused:
        next_fires(parse_schedule("cron(0 9 1 1 ? 2029)"), start, 5)  # all behind us
    assert refused.value.code == "invalid_schedule_expression"
