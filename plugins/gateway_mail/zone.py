"""The person's time: their zone (`timezone`, default the computer's), their `hours`, and times an agent writes.

An agent's time is read as the person would mean it: "today" and "tomorrow", a date, a local "2026-12-03 09:00",
or an ISO time with an offset or `Z`, which is moved into the person's zone (so a time given in UTC lands there).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from attrs import frozen

from gateway import ToolError, computer_zone

DEFAULT_HOURS = "08:30-18:30"
_HOURS = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})\s*$")
_WORDS = {"today": 0, "tomorrow": 1, "yesterday": -1}
MAX_WHEN = 64


class ZoneError(ValueError):
    """The `timezone` or `hours` setting cannot be read (said to the agent, never taken for a default)."""


def zone_of(settings: Mapping[str, Any], fallback: str = "") -> tzinfo:
    """The person's zone from the plugin's `timezone` setting (an IANA name such as "Europe/Paris"), else the
    gateway's (`fallback`, `[gateway] timezone`), else the computer's."""
    name = settings.get("timezone") or fallback or ""
    if not name:
        return computer_zone()
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ZoneError(f'timezone = "{name}" is not a zone this computer knows (write one such as '
                        '"Europe/Paris")') from error


def zone_name(zone: tzinfo) -> str:
    return getattr(zone, "key", None) or str(zone)


@frozen
class Hours:
    """The person's working hours, local; an end before the start runs past midnight."""

    start: time
    end: time

    def within(self, moment: datetime) -> bool:
        now = moment.time().replace(tzinfo=None)
        if self.start <= self.end:
            return self.start <= now < self.end
        return now >= self.start or now < self.end

    def next_start(self, moment: datetime) -> datetime:
        """When the hours next begin, after `moment` (in its zone)."""
        day = moment.date()
        candidate = datetime.combine(day, self.start, moment.tzinfo)
        return candidate if candidate > moment else datetime.combine(day + timedelta(days=1), self.start,
                                                                     moment.tzinfo)

    def next_end(self, moment: datetime) -> datetime:
        day = moment.date()
        candidate = datetime.combine(day, self.end, moment.tzinfo)
        return candidate if candidate > moment else datetime.combine(day + timedelta(days=1), self.end,
                                                                     moment.tzinfo)

    def __str__(self) -> str:
        return f"{self.start:%H:%M}-{self.end:%H:%M}"


def hours_of(settings: Mapping[str, Any]) -> Hours:
    """The `hours` setting ("08:30-18:30"; "24:00" ends the day)."""
    text = str(settings.get("hours") or DEFAULT_HOURS)
    match = _HOURS.match(text)
    if not match:
        raise ZoneError(f'hours = "{text[:40]}" is not a span such as "08:30-18:30"')
    h1, m1, h2, m2 = (int(g) for g in match.groups())
    if h2 == 24 and m2 == 0:
        h2, m2 = 23, 59
    if not (h1 < 24 and h2 < 24 and m1 < 60 and m2 < 60):
        raise ZoneError(f'hours = "{text}" holds a time that is not on a clock')
    return Hours(time(h1, m1), time(h2, m2))


def now_in(zone: tzinfo, clock: datetime | None = None) -> datetime:
    """Now in the person's zone (`clock`, an aware time, for tests)."""
    return (clock or datetime.now(tz=ZoneInfo("UTC"))).astimezone(zone)


def to_zone(value: date | datetime, zone: tzinfo) -> date | datetime:
    """A date stays a date; a time with a zone moves into the person's; a floating time is taken as theirs."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            return value.replace(tzinfo=zone)
        return value.astimezone(zone)
    return value


def parse_when(text: str, zone: tzinfo, clock: datetime | None = None) -> date | datetime:
    """What an agent wrote as a day or a time: a date, or a time aware in the person's zone.

    "today", "tomorrow", "yesterday"; "2026-12-03"; "2026-12-03 09:00" or "2026-12-03T09:00" (the person's
    local time); "2026-12-03T08:00Z" or "…+01:00" (moved into the person's zone). Anything else is a ToolError
    saying what is taken.
    """
    raw = str(text)
    if len(raw) > MAX_WHEN or any(ord(c) < 32 or c in "\u2028\u2029\x85\x7f" for c in raw):
        raise ToolError(f"{raw[:MAX_WHEN]!r} is not a time: write a date (2026-12-03), a local time "
                        "(2026-12-03 09:00) or an ISO time with its offset (2026-12-03T08:00Z), on one line")
    word = raw.strip().lower()
    if word in _WORDS:
        return now_in(zone, clock).date() + timedelta(days=_WORDS[word])
    candidate = word.upper().replace(" ", "T", 1)
    if candidate.endswith("Z"):
        candidate = candidate[:-1] + "+00:00"
    try:
        if len(candidate) == 10:
            return date.fromisoformat(candidate)
        return to_zone(datetime.fromisoformat(candidate), zone)
    except ValueError:
        raise ToolError(f"{raw!r} is not a time: write today, tomorrow, a date (2026-12-03), a local time "
                        "(2026-12-03 09:00) or an ISO time with its offset (2026-12-03T08:00Z)") from None


def day_start(day: date, zone: tzinfo) -> datetime:
    return datetime.combine(day, time(0, 0), zone)


def as_moment(value: date | datetime, zone: tzinfo) -> datetime:
    """A date or time as an aware time in the person's zone (a date is its midnight), for sorting and spans."""
    if isinstance(value, datetime):
        return to_zone(value, zone)  # type: ignore[return-value]
    return day_start(value, zone)
