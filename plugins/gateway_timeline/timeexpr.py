"""Time expressions the tools take (`now`, `today`, `2h`, ISO-8601...) turned into UTC instants.

The person's day (`today`, `yesterday`, ISO times without a zone) is taken in their local zone: the
system's, unless the plugin's `timezone` setting names another.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from gateway import ToolError

FORMS = (
    "ISO-8601 with or without a zone (2026-08-16T08:00, 2026-08-16T08:00:00Z, 2026-08-16; local time "
    "when no zone is given), now, today, yesterday, or a span ago: a number followed by m, h or d "
    "(15m, 2h, 3d)"
)

_SPAN = re.compile(r"^(\d{1,6})\s*(m|min|h|d)$")
_UNITS = {"m": 60, "min": 60, "h": 3600, "d": 86400}


def local_zone(name: str | None = None) -> tzinfo | None:
    """The zone named in the settings, or None for the system's own (Python's local time)."""
    if not name:
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ToolError(
            f"the timeline's timezone setting {name!r} is not a known IANA zone (such as Europe/Paris); "
            "the person can fix it in the [plugins.timeline] table of the gateway's config"
        ) from error


def as_local(naive: datetime, zone: tzinfo | None) -> datetime:
    """A wall-clock time in the person's zone, made aware."""
    return naive.replace(tzinfo=zone) if zone is not None else naive.astimezone()


def to_local(instant: datetime, zone: tzinfo | None) -> datetime:
    return instant.astimezone(zone) if zone is not None else instant.astimezone()


def _midnight(day: date, zone: tzinfo | None) -> datetime:
    return as_local(datetime.combine(day, time()), zone)


def parse(expression: str, now: datetime, zone: tzinfo | None = None, argument: str = "since") -> datetime:
    """One expression as an aware UTC datetime; a ToolError naming the forms taken when it is not one."""
    text = expression.strip().lower() if isinstance(expression, str) else ""
    if not text:
        raise ToolError(f"{argument} is empty; give one of: {FORMS}.")
    today = to_local(now, zone).date()
    if text == "now":
        return now.astimezone(UTC)
    if text == "today":
        return _midnight(today, zone).astimezone(UTC)
    if text == "yesterday":
        return _midnight(today - timedelta(days=1), zone).astimezone(UTC)
    span = _SPAN.match(text)
    if span:
        return (now - timedelta(seconds=int(span.group(1)) * _UNITS[span.group(2)])).astimezone(UTC)
    try:
        if len(text) == 10:
            return _midnight(date.fromisoformat(text), zone).astimezone(UTC)
        moment = datetime.fromisoformat(expression.strip())
    except ValueError:
        raise ToolError(f"{argument} {expression!r} is not a time expression; use {FORMS}.") from None
    if moment.tzinfo is None:
        moment = as_local(moment, zone)
    return moment.astimezone(UTC)


def resolve_range(
    since: str, until: str, now: datetime, zone: tzinfo | None = None
) -> tuple[datetime, datetime]:
    """The (since, until) pair, both UTC and whole seconds; since must come before until."""
    start = parse(since, now, zone, "since").replace(microsecond=0)
    end = parse(until, now, zone, "until").replace(microsecond=0)
    if start >= end:
        raise ToolError(
            f"since ({iso(start)}) must come before until ({iso(end)}); for a whole day use since: yesterday, "
            "until: today."
        )
    return start, end


def iso(instant: datetime) -> str:
    """ISO-8601 UTC with a Z, to the second."""
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_DAY_MS = 86_400_000
_day_prefix: dict[int, str] = {}


def iso_ms(ms: int) -> str:
    """Milliseconds since the epoch as ISO-8601 UTC with milliseconds and a Z (the envelope's `ts`)."""
    # Importers call this a million times: the date part is made once per day, the rest by arithmetic.
    day, rest = divmod(ms, _DAY_MS)
    prefix = _day_prefix.get(day)
    if prefix is None:
        prefix = _day_prefix[day] = datetime.fromtimestamp(day * 86_400, UTC).strftime("%Y-%m-%dT")
    seconds, millis = divmod(rest, 1000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return f"{prefix}{hour:02d}:{minute:02d}:{second:02d}.{millis:03d}Z"


def to_ms(instant: datetime) -> int:
    return int(instant.timestamp() * 1000)
