"""EventBridge Scheduler expressions: `rate(N unit)` and `cron(min hour dom month dow year)`, validated the way
AWS validates them and evaluated locally (the dev server's scheduler computes the next fire time).

Numbers are ASCII digits only, and a rate is at most `MAX_RATE_DAYS` days (ten years): a longer one could not
be computed as a date, so it is refused like any other invalid expression (422 `invalid_schedule_expression`).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from personal_agent.errors import InvalidInput

_RATE = re.compile(r"^rate\(([0-9]{1,12}) (minute|minutes|hour|hours|day|days)\)$")
_CRON = re.compile(r"^cron\(([^()]+)\)$")
_UNITS = {"minute": 60, "hour": 3600, "day": 86400}
_MONTHS = {
    "JAN": 1,
    "FEB": 2,
    "MAR": 3,
    "APR": 4,
    "MAY": 5,
    "JUN": 6,
    "JUL": 7,
    "AUG": 8,
    "SEP": 9,
    "OCT": 10,
    "NOV": 11,
    "DEC": 12,
}
_DAYS = {"SUN": 1, "MON": 2, "TUE": 3, "WED": 4, "THU": 5, "FRI": 6, "SAT": 7}
_LAST_YEAR = 2199
MAX_RATE_DAYS = 3650


def _invalid(expression: str, why: str) -> InvalidInput:
    return InvalidInput(f"invalid schedule expression {expression!r}: {why}", code="invalid_schedule_expression")


def _aws_weekday(day: date) -> int:
    """1 = Sunday ... 7 = Saturday, as cron day-of-week counts."""
    return (day.weekday() + 1) % 7 + 1


@dataclass(frozen=True)
class _Field:
    values: frozenset[int]
    any: bool = False  # `*` or `?`
    last: bool = False  # L (day of month: last day; day of week: alone = Saturday)
    last_weekday: bool = False  # LW
    nearest_weekday: int | None = None  # 15W
    last_of: int | None = None  # 5L: the last Thursday
    nth: tuple[int, int] | None = None  # 3#2: the second Tuesday


def _digits(text: str) -> bool:
    """ASCII digits only (`str.isdigit` also takes `²` and other digits `int` cannot read), at most 4 of them."""
    return 0 < len(text) <= 4 and text.isascii() and text.isdigit()


def _number(token: str, names: dict[str, int], lo: int, hi: int, expression: str) -> int:
    value = int(token) if _digits(token) else names.get(token.upper())
    if value is None or not lo <= value <= hi:
        raise _invalid(expression, f"{token!r} is not in {lo}-{hi}")
    return value


def _parse_field(text: str, lo: int, hi: int, expression: str, names: dict[str, int] | None = None) -> _Field:
    names = names or {}
    if text in ("*", "?"):
        return _Field(frozenset(range(lo, hi + 1)), any=True)
    values: set[int] = set()
    for part in text.split(","):
        body, _, step_text = part.partition("/")
        step = int(step_text) if _digits(step_text) and int(step_text) > 0 else None
        if step_text and step is None:
            raise _invalid(expression, f"bad step in {part!r}")
        if body == "*":
            start, end = lo, hi
        elif "-" in body:
            a, _, b = body.partition("-")
            start, end = _number(a, names, lo, hi, expression), _number(b, names, lo, hi, expression)
        else:
            start = _number(body, names, lo, hi, expression)
            end = hi if step else start
        if start > end:
            raise _invalid(expression, f"range {part!r} runs backwards")
        values.update(range(start, end + 1, step or 1))
    return _Field(frozenset(values))


def _day_of_month(text: str, expression: str) -> _Field:
    if text == "L":
        return _Field(frozenset(), last=True)
    if text == "LW":
        return _Field(frozenset(), last_weekday=True)
    if text.endswith("W") and _digits(text[:-1]):
        return _Field(frozenset(), nearest_weekday=_number(text[:-1], {}, 1, 31, expression))
    return _parse_field(text, 1, 31, expression)


def _day_of_week(text: str, expression: str) -> _Field:
    if text == "L":
        return _Field(frozenset({7}))
    if text.endswith("L"):
        return _Field(frozenset(), last_of=_number(text[:-1], _DAYS, 1, 7, expression))
    if "#" in text:
        day, _, nth = text.partition("#")
        if not _digits(nth) or not 1 <= int(nth) <= 5:
            raise _invalid(expression, f"bad {text!r}: use DAY#1 to DAY#5")
        return _Field(frozenset(), nth=(_number(day, _DAYS, 1, 7, expression), int(nth)))
    return _parse_field(text, 1, 7, expression, _DAYS)


def _matches_day(dom: _Field, dow: _Field, day: date) -> bool:
    last = calendar.monthrange(day.year, day.month)[1]
    if not dom.any:
        if dom.last:
            return day.day == last
        if dom.last_weekday or dom.nearest_weekday is not None:
            target = last if dom.last_weekday else min(dom.nearest_weekday or 1, last)
            anchor = day.replace(day=target)
            if anchor.weekday() == 5:  # Saturday: the Friday before, or the Monday after on the 1st
                anchor = anchor - timedelta(days=1) if target > 1 else anchor + timedelta(days=2)
            elif anchor.weekday() == 6:  # Sunday: the Monday after, or the Friday before on the last day
                anchor = anchor + timedelta(days=1) if target < last else anchor - timedelta(days=2)
            return day == anchor
        return day.day in dom.values
    weekday = _aws_weekday(day)
    if dow.last_of is not None:
        return weekday == dow.last_of and day.day + 7 > last
    if dow.nth is not None:
        return weekday == dow.nth[0] and (day.day - 1) // 7 + 1 == dow.nth[1]
    return weekday in dow.values


@dataclass(frozen=True)
class Schedule:
    """A parsed expression in a time zone; `next_after` gives the first fire time strictly after a moment."""

    expression: str
    timezone: str
    rate_seconds: int | None = None
    fields: tuple[_Field, ...] = ()

    def next_after(self, moment: datetime, anchor: datetime | None = None) -> datetime:
        if self.rate_seconds is not None:
            start = anchor or moment
            steps = max(0, int((moment - start).total_seconds() // self.rate_seconds) + 1)
            return start + timedelta(seconds=steps * self.rate_seconds)
        return self._next_cron(moment)

    def _next_cron(self, moment: datetime) -> datetime:
        minutes, hours, dom, months, dow, years = self.fields
        zone = ZoneInfo(self.timezone)
        local = moment.astimezone(zone).replace(second=0, microsecond=0) + timedelta(minutes=1)
        day = local.date()
        while day.year <= _LAST_YEAR:
            if day.year not in years.values:
                day = date(day.year + 1, 1, 1)
                continue
            if day.month not in months.values:
                day = (day.replace(day=1) + timedelta(days=32)).replace(day=1)
                continue
            if _matches_day(dom, dow, day):
                for hour in sorted(hours.values):
                    for minute in sorted(minutes.values):
                        candidate = datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone)
                        if candidate >= local:
                            return candidate.astimezone(UTC)
            day += timedelta(days=1)
        raise _invalid(self.expression, "it never fires again")


def parse_schedule(expression: str, timezone: str = "UTC") -> Schedule:
    """Validate `expression` (422 `invalid_schedule_expression`) and the IANA `timezone`."""
    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise InvalidInput(f"unknown time zone {timezone!r}", code="invalid_timezone") from None
    expression = expression.strip()
    rate = _RATE.match(expression)
    if rate:
        value, unit = int(rate.group(1)), rate.group(2)
        if value < 1 or (value == 1) != (not unit.endswith("s")):
            raise _invalid(expression, "use `rate(1 unit)` for one and `rate(N units)` for more")
        seconds = value * _UNITS[unit.rstrip("s")]
        if seconds > MAX_RATE_DAYS * _UNITS["day"]:
            raise _invalid(expression, f"a rate can be at most {MAX_RATE_DAYS} days")
        return Schedule(expression, timezone, rate_seconds=seconds)
    cron = _CRON.match(expression)
    if not cron:
        raise _invalid(
            expression, "use rate(N minutes|hours|days) or cron(min hour day-of-month month day-of-week year)"
        )
    parts = cron.group(1).split()
    if len(parts) != 6:
        raise _invalid(expression, "cron takes six fields: minutes hours day-of-month month day-of-week year")
    if (parts[2] == "?") == (parts[4] == "?"):
        raise _invalid(expression, "exactly one of day-of-month and day-of-week must be `?`")
    fields = (
        _parse_field(parts[0], 0, 59, expression),
        _parse_field(parts[1], 0, 23, expression),
        _day_of_month(parts[2], expression),
        _parse_field(parts[3], 1, 12, expression, _MONTHS),
        _day_of_week(parts[4], expression),
        _parse_field(parts[5], 1970, _LAST_YEAR, expression),
    )
    return Schedule(expression, timezone, fields=fields)
