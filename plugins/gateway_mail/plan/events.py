"""Events on a vdir of VEVENT files as khal keeps them: the occurrences in a span, in the person's zone; new events.

A repeating event is expanded by recurring-ical-events from its own file (its exceptions and moved occurrences
included); the expansion is kept in memory by the file's state and the span, so that a warm agenda reads no file.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import sqlite3
import threading
from collections.abc import Mapping
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

from attrs import frozen

from gateway import Context, Gate, GateMemo
from gateway_mail import zone
from gateway_mail.plan import vdir
from gateway_mail.plan.vdir import EVENT, Collection, Item

DEFAULT_CALENDARS = "~/.local/share/vdirsyncer/calendars"
PRODID = "-//gateway//mail plugin//EN"
DEFAULT_LENGTH = timedelta(hours=1)


def root_of(ctx: Context) -> Path:
    return ctx.path_setting("calendars") or Path(DEFAULT_CALENDARS).expanduser()


def collection(ctx: Context) -> Collection:
    from gateway_mail.plan.tasks import named_root, reading_stop

    return vdir.read(named_root(ctx, "calendars", "calendars folder", root_of(ctx)), Path(ctx.folders.cache),
                     reading_stop(ctx))


def owners(item: Item, ties: Mapping[str, frozenset[str]] | None, gate: Gate) -> frozenset[str]:
    """The projects whose routes take the event (its file, calendar, organizer and attendees, words, REFID,
    categories and ties: `tasks.item_traits`), as the gate decides them."""
    from gateway_mail.plan.tasks import own_owners

    return own_owners(gate, item, ties)


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


# A repeating event is expanded by fixed blocks of BLOCK days (aligned on one day for everyone), so that the
# expansions stay valid from one day's agenda to the next; they are kept in memory, and on disk beside the vdir's
# cache (a new process parses no repeating file for a block already expanded), both by the file's state.
BLOCK = timedelta(days=28)
_ORIGIN = datetime(2000, 1, 3, tzinfo=ZoneInfo("UTC"))
_expanded: dict[tuple[str, str], list[tuple[date, date | None]]] = {}
_expanded_lock = threading.Lock()


def _blocks(begin: datetime, finish: datetime) -> list[datetime]:
    first = _ORIGIN + BLOCK * ((begin - _ORIGIN) // BLOCK)
    found = [first]
    while found[-1] + BLOCK < finish:
        found.append(found[-1] + BLOCK)
    return found


def _state_of(item: Item) -> str | None:
    try:
        stat = Path(item.path).stat()
    except OSError:
        return None
    return f"{stat.st_mtime_ns}:{stat.st_size}:{item.uid}"


def _expand(item: Item, blocks: list[datetime]) -> dict[datetime, list[tuple[date, date | None]]]:
    """The (start, end) of each occurrence of a repeating event's file overlapping each block."""
    import icalendar
    import recurring_ical_events

    found: dict[datetime, list[tuple[date, date | None]]] = {block: [] for block in blocks}
    try:
        query = recurring_ical_events.of(icalendar.Calendar.from_ical(Path(item.path).read_bytes()))
        for block in blocks:
            for component in query.between(block, block + BLOCK):
                if component.name != EVENT or str(component.get("UID", "")) != item.uid:
                    continue
                start = component.get("DTSTART").dt if component.get("DTSTART") else None
                end = component.get("DTEND").dt if component.get("DTEND") else None
                found[block].append((start, end))
    except (OSError, ValueError):
        pass
    return found


def _encode(spans: list[tuple[date, date | None]]) -> str:
    return json.dumps([[s.isoformat() if s is not None else None, e.isoformat() if e is not None else None]
                       for s, e in spans])


def _decode(text: str) -> list[tuple[date, date | None]]:
    def when(value: str | None) -> date | None:
        if not value:
            return None
        return date.fromisoformat(value) if len(value) == 10 else datetime.fromisoformat(value)

    return [(when(s), when(e)) for s, e in json.loads(text)]


def _repeats_of(events: Collection, items: list[Item], begin: datetime,
                finish: datetime) -> dict[str, list[tuple[date, date | None]]]:
    """Each repeating event's (start, end) pairs overlapping [begin, finish) and maybe a little more, by uid."""
    blocks = _blocks(begin, finish)
    keys = {}
    for item in items:
        state = _state_of(item)
        if state is not None:
            keys[item.uid] = (item, [(item.path, f"{state}|{block.isoformat()}") for block in blocks])
    with _expanded_lock:
        known = {key: _expanded[key] for _, wanted in keys.values() for key in wanted if key in _expanded}
    missing = [key for _, wanted in keys.values() for key in wanted if key not in known]
    if missing:
        from_disk = {key: _decode(value) for key, value in vdir.kept(events, missing).items()}
        known.update(from_disk)
        made: dict[tuple[str, str], str] = {}
        for item, wanted in keys.values():
            absent = [block for block, key in zip(blocks, wanted, strict=True) if key not in known]
            if absent:
                for block, spans in _expand(item, absent).items():
                    key = (item.path, wanted[blocks.index(block)][1])
                    known[key] = spans
                    made[key] = _encode(spans)
        with contextlib.suppress(sqlite3.Error, OSError):  # a cache not written is work done again, no more
            vdir.keep(events, made)
        with _expanded_lock:
            if len(_expanded) > 16_384:
                _expanded.clear()
            _expanded.update({key: known[key] for key in missing})
    result = {}
    for uid, (_item, wanted) in keys.items():
        spans = [span for key in wanted for span in known[key]]
        result[uid] = list(dict.fromkeys(spans)) if len(wanted) > 1 else spans  # one occurrence over two blocks
    return result


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
    repeats = _repeats_of(events, index.repeating, begin, finish) if index.repeating else {}
    for item in index.repeating:
        for start, end in repeats.get(item.uid, ()):
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
