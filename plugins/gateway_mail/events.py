"""Events on a vdir of VEVENT files as khal keeps them: the occurrences in a span, in the person's zone; new events.

A repeating event is expanded by recurring-ical-events from its own file (its exceptions and moved occurrences
included); the expansion is kept in memory by the file's state and the span, so that a warm agenda reads no file.
"""

from __future__ import annotations

import threading
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path

from attrs import frozen

from gateway import Context
from gateway_mail import projects, vdir, zone
from gateway_mail.vdir import EVENT, Collection, Item

DEFAULT_CALENDARS = "~/.local/share/vdirsyncer/calendars"
PRODID = "-//gateway//mail plugin//EN"
DEFAULT_LENGTH = timedelta(hours=1)


def root_of(ctx: Context) -> Path:
    return ctx.path_setting("calendars") or Path(DEFAULT_CALENDARS).expanduser()


def collection(ctx: Context) -> Collection:
    return vdir.read(root_of(ctx), Path(ctx.folders.cache))


def owners(item: Item, ties: dict[str, frozenset[str]] | None = None) -> frozenset[str]:
    return projects.tagged(item.refids, item.categories) | (ties or {}).get(item.address, frozenset())


@frozen
class Occurrence:
    item: Item
    start: datetime  # in the person's zone
    end: datetime
    all_day: bool


def _span(start: date | None, end: date | None, tz: tzinfo) -> tuple[datetime, datetime, bool] | None:
    if start is None:
        return None
    all_day = not isinstance(start, datetime)
    begin = zone.as_moment(start, tz)
    if end is None:
        finish = begin + (timedelta(days=1) if all_day else timedelta(0))
    else:
        finish = zone.as_moment(end, tz)
    return begin, max(finish, begin), all_day


_expanded: dict[tuple[str, str, datetime, datetime], list[tuple[date, date | None]]] = {}
_expanded_lock = threading.Lock()


def _repeats(item: Item, begin: datetime, finish: datetime) -> list[tuple[date, date | None]]:
    """The (start, end) of each occurrence of a repeating event's file in the span."""
    import icalendar
    import recurring_ical_events

    try:
        stat = Path(item.path).stat()
    except OSError:
        return []
    key = (item.path, f"{stat.st_mtime_ns}:{stat.st_size}:{item.uid}", begin, finish)
    with _expanded_lock:
        if key in _expanded:
            return _expanded[key]
    try:
        calendar = icalendar.Calendar.from_ical(Path(item.path).read_bytes())
        found = []
        for component in recurring_ical_events.of(calendar).between(begin, finish):
            if component.name != EVENT or str(component.get("UID", "")) != item.uid:
                continue
            start = component.get("DTSTART").dt if component.get("DTSTART") else None
            end = component.get("DTEND").dt if component.get("DTEND") else None
            found.append((start, end))
    except (OSError, ValueError):
        found = []
    with _expanded_lock:
        if len(_expanded) > 4096:
            _expanded.clear()
        _expanded[key] = found
    return found


def occurrences(events: Collection, begin: datetime, finish: datetime, tz: tzinfo) -> list[Occurrence]:
    """Every occurrence overlapping [begin, finish), in start order, in the person's zone."""
    found = []
    for item in events.items:
        if item.kind != EVENT or item.status == "CANCELLED":
            continue
        spans = _repeats(item, begin, finish) if item.recurring else [(item.start, item.end)]
        for start, end in spans:
            span = _span(start, end, tz)
            if span is None:
                continue
            first, last, all_day = span
            if first < finish and (last > begin or (last == first and first >= begin)):
                found.append(Occurrence(item, first, last, all_day))
    found.sort(key=lambda o: (o.start, not o.all_day, o.item.uid))
    return found


def new_event(uid: str, title: str, *, now: datetime, start: date, end: date | None, location: str = "") -> bytes:
    """A VCALENDAR holding one VEVENT as khal writes its own: DTSTART/DTEND with the zone's TZID and VTIMEZONE."""
    import icalendar

    calendar = icalendar.Calendar()
    calendar.add("VERSION", "2.0")
    calendar.add("PRODID", PRODID)
    event = icalendar.Event()
    stamp = now.astimezone(zone.ZoneInfo("UTC")).replace(microsecond=0)
    event.add("UID", uid)
    event.add("SUMMARY", title)
    event.add("DTSTART", start)
    if end is None:
        end = start + (DEFAULT_LENGTH if isinstance(start, datetime) else timedelta(days=1))
    event.add("DTEND", end)
    event.add("DTSTAMP", stamp)
    event.add("CREATED", stamp)
    event.add("LAST-MODIFIED", stamp)
    if location:
        event.add("LOCATION", location)
    calendar.add_component(event)
    if isinstance(start, datetime):
        calendar.add_missing_timezones()
    return calendar.to_ical()
