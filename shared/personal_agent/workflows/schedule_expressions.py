"""EventBridge Scheduler expressions, `rate(N unit)` and `cron(min hour dom month dow year)`, validated the way AWS
validates them and evaluated (by the dev server's scheduler) with `cronsim`, adapted to AWS's dialect: `?`, days of
the week counted 1 = SUN ... 7 = SAT, `15W`, and the year field.

Daylight saving time as EventBridge Scheduler documents it: a time that does not exist (spring forward) is skipped,
a time that happens twice (fall back) fires once, the first time; a rate counts fixed durations from its anchor.
Numbers are ASCII digits, at most 4 of them, and a rate is at most `MAX_RATE_DAYS` days (ten years): anything else
is refused with 422 `invalid_schedule_expression`.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from personal_agent.errors import InvalidInput

_RATE = re.compile(r"^rate\(([0-9]{1,12}) (minute|minutes|hour|hours|day|days)\)$")
_CRON = re.compile(r"^cron\(([^()]+)\)$")
_UNITS = {"minute": 60, "hour": 3600, "day": 86400}
_LAST_OR_NTH = re.compile(r"^(\w+?)(L|#\w+)$")
_DAYS = {"SUN": 1, "MON": 2, "TUE": 3, "WED": 4, "THU": 5, "FRI": 6, "SAT": 7}
_FIRST_YEAR, _LAST_YEAR = 1970, 2199  # the years AWS accepts
_SECOND = timedelta(seconds=1)
MAX_RATE_DAYS = 3650


def _invalid(expression: str, why: str) -> InvalidInput:
    return InvalidInput(f"invalid schedule expression {expression!r}: {why}", code="invalid_schedule_expression")


def _digits(text: str) -> bool:
    """ASCII digits only (`str.isdigit` also takes `²` and other digits `int` cannot read), at most 4 of them."""
    return 0 < len(text) <= 4 and text.isascii() and text.isdigit()


def _number(token: str, lo: int, hi: int, expression: str, names: dict[str, int] | None = None) -> int:
    value = int(token) if _digits(token) else (names or {}).get(token.upper())
    if value is None or not lo <= value <= hi:
        raise _invalid(expression, f"{token!r} is not in {lo}-{hi}")
    return value


def _values(text: str, lo: int, hi: int, expression: str, names: dict[str, int] | None = None) -> list[int]:
    """A field's `,` list of values, `a-b` ranges and `/step`s, as numbers."""
    values: set[int] = set()
    for part in text.split(","):
        body, slash, step = part.partition("/")
        first, dash, last = (str(lo), "-", str(hi)) if body == "*" else body.partition("-")
        start = _number(first, lo, hi, expression, names)
        end = _number(last, lo, hi, expression, names) if dash else (hi if slash else start)
        if start > end or (slash and not (_digits(step) and int(step) > 0)):
            raise _invalid(expression, f"bad range or step {part!r}")
        values.update(range(start, end + 1, int(step) if slash else 1))
    return sorted(values)


def _cron_day_of_week(text: str, expression: str) -> str:
    """AWS counts 1 = SUN ... 7 = SAT, cronsim 0 = SUN ... 6 = SAT; alone, `L` is Saturday."""
    if text in ("?", "*", "L"):
        return "6" if text == "L" else "*"
    special = _LAST_OR_NTH.match(text)
    if special:  # 6L: the last Friday of the month; 2#1: the first Monday (cronsim checks the 1-5)
        return f"{_number(special[1], 1, 7, expression, _DAYS) - 1}{special[2]}"
    return ",".join(str(day - 1) for day in _values(text, 1, 7, expression, _DAYS))


def _nearest_weekday(day: date, wanted: int) -> int:
    """The weekday nearest to the `wanted` day of `day`'s month (`15W`), never leaving the month."""
    last = calendar.monthrange(day.year, day.month)[1]
    target = min(wanted, last)
    weekday = day.replace(day=target).weekday()
    if weekday == 5:  # Saturday: the Friday before, or the Monday after on the 1st
        return target - 1 if target > 1 else target + 2
    if weekday == 6:  # Sunday: the Monday after, or the Friday before on the last day
        return target + 1 if target < last else target - 2
    return target


@dataclass(frozen=True)
class Schedule:
    """A parsed expression in a time zone; `next_after` gives the first fire time strictly after a moment."""

    expression: str
    timezone: str
    rate_seconds: int | None = None
    # For cronsim, with a seconds field: then it steps in real time (its Debian-cron DST rule is for 5 fields only).
    cron: str = ""
    years: tuple[int, ...] = ()
    nearest_weekday: int | None = None

    def next_after(self, moment: datetime, anchor: datetime | None = None) -> datetime:
        if self.rate_seconds is not None:
            start = anchor or moment
            steps = max(0, int((moment - start).total_seconds() // self.rate_seconds) + 1)
            return start + timedelta(seconds=steps * self.rate_seconds)
        from cronsim import CronSim  # ~20 ms to import: only when a cron schedule is computed (API cold start)

        zone = ZoneInfo(self.timezone)
        search_from = moment.astimezone(zone)
        while True:
            try:
                fire = next(CronSim(self.cron, search_from))
            except StopIteration:  # cronsim looks 50 years ahead
                raise _invalid(self.expression, "it never fires again") from None
            again = self._search_again_from(fire, zone)
            if again is None:
                return fire.astimezone(UTC)
            search_from = again

    def _search_again_from(self, fire: datetime, zone: ZoneInfo) -> datetime | None:
        """None when cronsim's `fire` really fires, else the moment to search on from (cronsim ticks in real time,
        so the second pass of a fall-back hour repeats a wall time, and it steps onto a midnight that may not exist)."""
        year = next((year for year in self.years if year >= fire.year), None)
        if year is None:
            raise _invalid(self.expression, "it never fires again")
        if year > fire.year:
            return datetime(year, 1, 1, tzinfo=zone) - _SECOND
        real = fire.astimezone(UTC)
        if real.astimezone(zone).replace(tzinfo=None) != fire.replace(tzinfo=None):  # in a spring-forward gap
            return (real - _SECOND).astimezone(zone)
        if fire.fold and fire.utcoffset() != fire.replace(fold=0).utcoffset():  # a wall time's second pass
            return fire
        if self.nearest_weekday is not None and fire.day != _nearest_weekday(fire.date(), self.nearest_weekday):
            return datetime.combine(fire.date() + timedelta(days=1), time(), zone) - _SECOND
        return None


def _parse_cron(expression: str, timezone: str) -> Schedule:
    body = _CRON.match(expression)
    if not body:
        raise _invalid(
            expression, "use rate(N minutes|hours|days) or cron(min hour day-of-month month day-of-week year)"
        )
    parts = body.group(1).split()
    if len(parts) != 6:
        raise _invalid(expression, "cron takes six fields: minutes hours day-of-month month day-of-week year")
    minutes, hours, day_of_month, month, day_of_week, year = parts
    if (day_of_month == "?") == (day_of_week == "?"):
        raise _invalid(expression, "exactly one of day-of-month and day-of-week must be `?`")
    if re.search("[0-9]{5}", body.group(1)):
        raise _invalid(expression, "a number has at most 4 digits")
    if "L" in day_of_month and day_of_month not in ("L", "LW"):
        raise _invalid(expression, "`L` and `LW` stand alone in day-of-month")
    nearest = None
    if day_of_month.endswith("W") and day_of_month != "LW":  # cronsim has no `15W`: `next_after` filters the days
        nearest, day_of_month = _number(day_of_month[:-1], 1, 31, expression), "*"
    day_of_month = "*" if day_of_month == "?" else day_of_month
    cron = f"0 {minutes} {hours} {day_of_month} {month} {_cron_day_of_week(day_of_week, expression)}"
    from cronsim import CronSim, CronSimError

    try:
        CronSim(cron, datetime.now(UTC))  # validates the fields it reads
    except CronSimError as exc:
        raise _invalid(expression, str(exc)) from None
    return Schedule(
        expression,
        timezone,
        cron=cron,
        years=tuple(_values(year, _FIRST_YEAR, _LAST_YEAR, expression)),
        nearest_weekday=nearest,
    )


def parse_schedule(expression: str, timezone: str = "UTC") -> Schedule:
    """Validate `expression` (422 `invalid_schedule_expression`) and the IANA `timezone`."""
    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise InvalidInput(f"unknown time zone {timezone!r}", code="invalid_timezone") from None
    expression = expression.strip()
    rate = _RATE.match(expression)
    if not rate:
        return _parse_cron(expression, timezone)
    value, unit = int(rate.group(1)), rate.group(2)
    if value < 1 or (value == 1) != (not unit.endswith("s")):
        raise _invalid(expression, "use `rate(1 unit)` for one and `rate(N units)` for more")
    seconds = value * _UNITS[unit.rstrip("s")]
    if seconds > MAX_RATE_DAYS * _UNITS["day"]:
        raise _invalid(expression, f"a rate can be at most {MAX_RATE_DAYS} days")
    return Schedule(expression, timezone, rate_seconds=seconds)


def next_fires(schedule: Schedule, after: datetime, count: int, anchor: datetime | None = None) -> list[datetime]:
    """The next `count` fire times strictly after `after` (fewer when the schedule stops firing, e.g. its year
    field ends); 422 `invalid_schedule_expression` when it never fires again."""
    fires = [schedule.next_after(after, anchor=anchor)]
    while len(fires) < count:
        try:
            fires.append(schedule.next_after(fires[-1], anchor=anchor))
        except InvalidInput:  # its last fire is behind us
            break
    return fires
