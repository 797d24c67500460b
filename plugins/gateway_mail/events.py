"""Events on a vdir of VEVENT files as khal keeps them: the occurrences in a span, in the person's zone; new events.

A repeating event is expanded by recurring-ical-events from its own file (its exceptions and moved occurrences
included); the expansion is kept in memory by the file's state and the span, so that a warm agenda reads no file.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Mapping
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

from attrs import frozen

from gateway import Context, GateMemo
from gateway_mail import projects, vdir, zone
from gateway_mail.vdir import EVENT, Collection, Item

DEFAULT_CALENDARS = "~/.local/share/vdirsyncer/calendars"
PRODID = "-//gateway//mail plugin//EN"
DEFAULT_LENGTH = timedelta(hours=1)


def root_of(ctx: Context) -> Path:
    return ctx.path_setting("calendars") or Path(DEFAULT_CALENDARS).expanduser()


def collection(ctx: Context) -> Collection:
    from gateway_mail.tasks import reading_stop

    return vdir.read(root_of(ctx), Path(ctx.folders.cache), reading_stop(ctx))


def owners(item: Item, ties: Mapping[str, frozenset[str]] | None = None) -> frozenset[str]:
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


@frozen
class _Index:
    """A collection's single events sorted by start, in one zone (made once per generation), and its repeating ones."""

    starts: list[datetime]
    spans: list[tuple[datetime, datetime, bool, Item]]
    longest: timedelta
    repeating: list[Item]


_indexes: GateMemo[_Index] = GateMemo(gates=4)


def _index_of(events: Collection, tz: tzinfo) -> _Index:
    def build() -> _Index:
        spans, repeating = [], []
        for item in events.items:
            if item.kind != EVENT or item.status == "CANCELLED":
                continue
            if item.recurring:
                repeating.append(item)
                continue
            span = _span(item.start, item.end, tz)
            if span is not None:
                spans.append((*span, item))
        spans.sort(key=lambda s: (s[0], not s[2], s[3].uid))
        longest = max((s[1] - s[0] for s in spans), default=timedelta(0))
        return _Index([s[0] for s in spans], spans, longest, repeating)

    with vdir.bulk():
        return _indexes.get(None, build, (str(events.root), events.generation, zone.zone_name(tz)))


def occurrences(events: Collection, begin: datetime, finish: datetime, tz: tzinfo) -> list[Occurrence]:
    """Every occurrence overlapping [begin, finish), in start order, in the person's zone."""
    index = _index_of(events, tz)
    found = []
    for position in range(bisect.bisect_left(index.starts, begin - index.longest), len(index.starts)):
        first, last, all_day, item = index.spans[position]
        if first >= finish:
            break
        if last > begin or (last == first and first >= begin):
            found.append(Occurrence(item, first, last, all_day))
    for item in index.repeating:
        for start, end in _repeats(item, begin, finish):
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
    stamp = now.astimezone(ZoneInfo("UTC")).replace(microsecond=0)
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
