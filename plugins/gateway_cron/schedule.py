"""When a job runs: cron expressions checked and stepped by croniter, in the job's own time zone."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from gateway import computer_zone

try:
    from croniter import croniter
    from croniter.croniter import CroniterError
except ImportError as error:  # pragma: no cover - depends on what is installed
    raise ImportError("the cron plugin needs croniter: pip install 'mcp-gateway[cron]'") from error


def problem_with(expression: str) -> str | None:
    """Why a cron expression cannot be used, or None when it can."""
    if not expression.strip():
        return "the schedule is empty"
    try:
        croniter(expression, dt.datetime.now(dt.UTC))
    except (CroniterError, ValueError, KeyError) as error:
        return str(error) or type(error).__name__
    return None


def zone(name: str) -> dt.tzinfo:
    """The named IANA time zone; an empty name is this computer's own, found by its name (`gateway.computer_zone`),
    so that a next run past a change to or from summer time keeps its hour."""
    if not name:
        return computer_zone()
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ValueError(
            f"unknown time zone {name!r}: use an IANA name such as Europe/Paris or UTC"
        ) from error


def next_run(expression: str, timezone: str, now: dt.datetime | None = None) -> str | None:
    """The next time the job is due after `now`, as ISO 8601 with the zone's offset; None if it never is."""
    try:
        tz = zone(timezone)
        start = (now or dt.datetime.now(dt.UTC)).astimezone(tz)
        return croniter(expression, start).get_next(dt.datetime).isoformat()
    except (CroniterError, ValueError, KeyError):
        return None
