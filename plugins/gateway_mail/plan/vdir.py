"""Reading vdir collections of .ics (one folder per list or calendar, one file per item) with icalendar.

Parsing a file with icalendar costs milliseconds, so what each file says is kept twice: in memory by (path,
mtime, size), and on disk in the plugin's cache folder (`plan-cache.sqlite`, 0600, masked text only, the masks'
version recorded), so that the first call after a start reads the cache, not 40,000 files. A folder whose time
has not changed since it was last listed (and not within the last two seconds, its time's granularity) is not
listed again: vdirsyncer, todoman and khal write by renaming a new file into place, which changes the folder.
Every FULL_CHECK seconds every file is looked at anyway, for an editor that rewrites a file in place.

A call with POOL_FROM files or more to read (a first reading) has them parsed by a pool of processes, one per core
(POOL_LIMIT at most), made by multiprocessing's fork server (a process started once, which has imported this module
and icalendar; as with any such server, the program's main module is imported there too, so a script that reads
calendars keeps its work under `if __name__ == "__main__"`). Each pool process sends back what the disk cache keeps
of each file (JSON: the same items a new process loads from the cache), one file at a time; every pool process is
ended before the call returns, at its deadline or when all is read (`_Pool`).

Files come from strangers (a calendar server adds invitations on its own): a file over MAX_FILE bytes or MAX_LINES
lines is read by its summary only (the lines of SUMMARY_PROPERTIES of its first SUMMARY_ITEMS tasks or events,
MAX_LINES lines at most, within its first SCAN_LIMIT bytes: contentlines.py), never loaded whole; a file that fails to be read in any way is counted
unreadable; both are remembered by the file's time and size (in memory and on disk), said by `gateway doctor`, and
not read again until the file changes. Times beyond EARLIEST and LATEST are clamped there, so that no sum of a time
and a span (a DURATION of a million days) can overflow.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import itertools
import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import structlog
from attrs import evolve, field, frozen

from gateway import MASKS_VERSION, mask, usable_cores
from gateway_mail import contentlines

log = structlog.get_logger("gateway_mail.plan")

TODO, EVENT = "VTODO", "VEVENT"
FULL_CHECK = 60.0
SETTLE_NS = 2_000_000_000
DESCRIPTION_LIMIT = 2_000
CACHE_FILE = "plan-cache.sqlite"  # plan-cache-<hash of the root>.sqlite, one per root
BATCH = 500
PUT_BATCH = 100  # files' readings written to the disk cache at once
_CACHE_VERSION = 6  # 4: files read by summary only or unreadable recorded, so that a new process knows them;
# 5: each item's people (ORGANIZER, ATTENDEE) kept too; 6: its alarms (VALARM) too
# A stranger's file: read whole up to MAX_FILE bytes; bigger, by its summary only (see the module's docstring).
MAX_FILE = 1 << 20
MAX_LINES = 4_000  # icalendar takes a few hundred microseconds a line: a file's parsing stays within a second or so
SCAN_LIMIT = 8 << 20
SUMMARY_ITEMS = 1_000
LINE_LIMIT = 16 << 10  # an unfolded line longer than this is left out of a summary
UNIT_LIMIT = 256 << 10  # of one task or event in a summary: its further lines are left out
SUMMARY_PROPERTIES = frozenset((
    b"UID", b"SUMMARY", b"DESCRIPTION", b"LOCATION", b"STATUS", b"DTSTART", b"DTEND", b"DUE", b"DURATION",
    b"COMPLETED", b"CREATED", b"DTSTAMP", b"LAST-MODIFIED", b"SEQUENCE", b"PRIORITY", b"PERCENT-COMPLETE",
    b"CATEGORIES", b"RELATED-TO", b"REFID", b"RRULE", b"RDATE", b"EXDATE", b"RECURRENCE-ID", b"TRANSP", b"CLASS"))
_SUMMARY_COMPONENTS = frozenset((b"VEVENT", b"VTODO", b"VTIMEZONE", b"STANDARD", b"DAYLIGHT"))
_SKIPPED = frozenset((b"ATTACH", b"IMAGE"))  # binary values, passed over unread
_CALENDAR_PROPERTIES = frozenset((b"VERSION", b"PRODID", b"CALSCALE", b"X-WR-TIMEZONE"))
# Every time read is clamped between these: a year of margin on each side of what datetime can hold, so that a
# time plus or minus any span the plan makes (a day, a block of weeks, a zone's offset) stays a time.
EARLIEST = date(2, 1, 1)
LATEST = date(9998, 12, 31)
SUMMARY_ONLY = "summary"
UNREADABLE = "unreadable"


@frozen
class Item:
    """What one VTODO or VEVENT says, its words masked. Times: date, aware datetime, or naive (floating)."""

    kind: str
    uid: str
    collection: str  # the list's or calendar's folder name
    path: str
    summary: str = ""
    description: str = ""
    location: str = ""
    status: str = ""
    start: date | None = None
    end: date | None = None
    due: date | None = None
    completed: date | None = None
    created: date | None = None
    priority: int = 0
    percent: int = 0
    categories: tuple[str, ...] = field(default=(), converter=tuple)
    refids: tuple[str, ...] = field(default=(), converter=tuple)
    parent: str | None = None
    depends: tuple[str, ...] = field(default=(), converter=tuple)
    recurring: bool = False
    people: tuple[str, ...] = field(default=(), converter=tuple)  # ORGANIZER and ATTENDEE values, as written
    # Its VALARMs, each an `Alarm` tuple (see `alarms_of`): kept as plain values for the disk cache's JSON.
    alarms: tuple[tuple[Any, ...], ...] = field(default=(), converter=lambda found: tuple(map(tuple, found)))

    @property
    def address(self) -> str:
        return _address(self.kind, self.uid)

    @property
    def done(self) -> bool:
        return self.status in ("COMPLETED", "CANCELLED") or (self.kind == TODO and self.completed is not None)


@functools.lru_cache(maxsize=65_536)
def _address(kind: str, uid: str) -> str:
    from gateway_mail.projects.ties import address

    return address("task" if kind == TODO else "event", uid)


def _when(value: date | None) -> str | None:
    return None if value is None else value.isoformat()


def _from_when(text: str | None) -> date | None:
    if not text:
        return None
    return date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)


_STORED = [a.name for a in attrs.fields(Item) if a.name not in ("collection", "path")]
_TIMES = frozenset(("start", "end", "due", "completed", "created"))
_TIME_AT = [i for i, name in enumerate(_STORED) if name in _TIMES]


def to_row(item: Item) -> list[Any]:
    """An item as a positional list (the disk cache's form: one JSON decode per file, no keys)."""
    row = [getattr(item, name) for name in _STORED]
    for i in _TIME_AT:
        row[i] = _when(row[i])
    return row


def from_row(row: list[Any], collection: str, path: str) -> Item:
    for i in _TIME_AT:
        if row[i]:
            row[i] = _from_when(row[i])
    return Item(row[0], row[1], collection, path, *row[2:])


_paused = 0
_was_enabled = True
_paused_lock = threading.Lock()


@contextlib.contextmanager
def bulk(lasting: bool = False) -> Iterator[None]:
    """The cyclic garbage collector held off while tens of thousands of lasting objects are made at once.

    Those objects hold no cycles and all survive; left on, the collector walks the growing heap again and again
    and doubles a cold call's time. Counted, so that two threads' bulk work overlapping ends with it back on.
    """
    global _paused, _was_enabled
    with _paused_lock:
        _paused += 1
        if _paused == 1:
            _was_enabled = gc.isenabled()
            gc.disable()
    try:
        yield
    finally:
        with _paused_lock:
            _paused -= 1
            if _paused == 0 and _was_enabled:
                if lasting:
                    # A process's one load of the disk cache: moved out of the collector's sight rather than walked
                    # once more by the next collection (freed as usual when dropped: no cycles in it). Only then:
                    # freezing often would keep whatever cyclic garbage is about at that moment for good.
                    gc.freeze()
                gc.enable()


# -- parsing one file ------------------------------------------------------------------------------------------


def _text(component: Any, name: str) -> str:
    value = component.get(name)
    if value is None:
        return ""
    if isinstance(value, list):
        value = value[0]
    return str(value)


def clamped(moment: date) -> date:
    """A date or time moved within EARLIEST and LATEST (its kind and zone kept)."""
    day = moment.date() if isinstance(moment, datetime) else moment
    if EARLIEST <= day <= LATEST:
        return moment
    bound = EARLIEST if day < EARLIEST else LATEST
    if isinstance(moment, datetime):
        return datetime.combine(bound, moment.time(), moment.tzinfo)
    return bound


def plus(moment: date, span: timedelta) -> date:
    """`moment + span`, clamped: a DURATION of P999999999D ends at LATEST, not in an OverflowError."""
    try:
        return clamped(moment + span)
    except OverflowError:
        return clamped(date.max if span > timedelta(0) else date.min) if not isinstance(moment, datetime) else \
            clamped(datetime.combine(date.max if span > timedelta(0) else date.min, moment.time(), moment.tzinfo))


def _time(component: Any, name: str) -> date | None:
    value = component.get(name)
    if value is None:
        return None
    try:
        moment = value.dt
    except AttributeError:
        return None
    return clamped(moment) if isinstance(moment, date) else None


def _list_of(component: Any, name: str) -> list[Any]:
    value = component.get(name)
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _categories(component: Any) -> list[str]:
    found = []
    for value in _list_of(component, "CATEGORIES"):
        found.extend(str(c) for c in getattr(value, "cats", [value]))
    return [c for c in found if c]


MAX_ALARMS = 20  # of one task or event: the rest are not read
MAX_ALARM_REPEAT = 100  # an alarm's REPEAT kept up to this (the reminders give at most a few of them)


def alarms_of(component: Any) -> list[tuple[Any, ...]]:
    """A task's or an event's VALARMs, each as (related, offset in seconds, absolute time in ISO or None, repeat,
    seconds between repeats, action, masked description): `related` is START or END for a trigger relative to the
    item's start or its end (a task's due), "" for an absolute one. A trigger that cannot be read leaves its alarm
    out; what a stranger wrote is bounded (MAX_ALARMS, MAX_ALARM_REPEAT)."""
    found: list[tuple[Any, ...]] = []
    for alarm in component.subcomponents:
        if getattr(alarm, "name", "") != "VALARM" or len(found) >= MAX_ALARMS:
            continue
        trigger = alarm.get("TRIGGER")
        value = getattr(trigger, "dt", None)
        if isinstance(value, timedelta):
            related = str(trigger.params.get("RELATED", "START")).upper()
            when = (related if related in ("START", "END") else "START", int(value.total_seconds()), None)
        elif isinstance(value, date):
            moment = clamped(value)
            when = ("", None, moment.isoformat())
        else:
            continue
        try:
            repeat = min(max(int(str(alarm.get("REPEAT", 0)) or 0), 0), MAX_ALARM_REPEAT)
            every = alarm.get("DURATION")
            every = int(every.dt.total_seconds()) if every is not None and isinstance(every.dt, timedelta) else 0
        except (ValueError, TypeError, AttributeError, OverflowError):
            repeat, every = 0, 0
        if every <= 0:
            repeat = 0  # RFC 5545: REPEAT and DURATION go together
        found.append((*when, repeat, every, _text(alarm, "ACTION").upper()[:20],
                      mask(_text(alarm, "DESCRIPTION")[:DESCRIPTION_LIMIT])))
    return found


def items_of(raw: bytes, collection: str, path: str) -> list[Item]:
    """The tasks and events a file holds (the master of each, not its overrides), words masked: read by `simple`'s
    scan when the file is one plain task or event, else parsed whole by icalendar."""
    found = simple(raw, collection, path)
    if found is not None:
        return found
    import icalendar

    calendar = icalendar.Calendar.from_ical(raw)
    items = (_item(c, collection, path) for c in calendar.walk() if c.name in (TODO, EVENT))
    return [item for item in items if item is not None]


def _item(component: Any, collection: str, path: str) -> Item | None:
    """One VTODO's or VEVENT's item (None for an override or one without a UID), from icalendar's component or
    from `simple`'s stand-in for one."""
    if component.get("RECURRENCE-ID") is not None:
        return None
    uid = _text(component, "UID")
    if not uid:
        return None
    parent, depends = None, []
    for related in _list_of(component, "RELATED-TO"):
        reltype = str(related.params.get("RELTYPE", "PARENT")).upper()
        if reltype == "PARENT" and parent is None:
            parent = str(related)
        elif reltype == "DEPENDS-ON":
            depends.append(str(related))
    try:
        priority = int(str(component.get("PRIORITY", 0)) or 0)
        percent = int(str(component.get("PERCENT-COMPLETE", 0)) or 0)
    except ValueError:
        priority, percent = 0, 0
    end = _time(component, "DTEND")
    start = _time(component, "DTSTART")
    if end is None and start is not None and component.get("DURATION") is not None:
        try:
            end = plus(start, component.get("DURATION").dt)
        except (AttributeError, TypeError):
            end = None
    return Item(
        kind=component.name, uid=uid, collection=collection, path=path,
        summary=mask(_text(component, "SUMMARY")),
        description=mask(_text(component, "DESCRIPTION")[:DESCRIPTION_LIMIT]),
        location=mask(_text(component, "LOCATION")),
        status=_text(component, "STATUS").upper(),
        start=start, end=end, due=_time(component, "DUE"), completed=_time(component, "COMPLETED"),
        created=_time(component, "CREATED") or _time(component, "DTSTAMP"),
        priority=priority if 0 <= priority <= 9 else 0, percent=percent,
        categories=[mask(c) for c in _categories(component)],
        refids=[str(v) for v in _list_of(component, "REFID")],
        parent=parent, depends=depends,
        recurring=component.get("RRULE") is not None or component.get("RDATE") is not None,
        people=[str(v) for name in ("ORGANIZER", "ATTENDEE") for v in _list_of(component, name) if str(v)],
        alarms=alarms_of(component),
    )


# -- the scan of a plain file ------------------------------------------------------------------------------------

# A plain file: one task or event (and its alarms) in a VCALENDAR, every line `NAME[;KEY=VALUE...]:VALUE` with no
# escape, quote, fold, time zone or component of another kind, each property once. Most files todoman, khal and
# vdirsyncer write are so; for them the scan below stands in for icalendar's reading of the lines (its parameters'
# grammar, its component machinery: most of a small file's cost), while each value is still parsed by icalendar's
# own types, as its parser would. Anything else returns None and icalendar reads the whole file.
_PLAIN_LINE = re.compile(r"([A-Za-z0-9-]+)((?:;[A-Za-z0-9-]+=[^;:,\"]*)*):(.*)")
_UNUSUAL = re.compile(r'[\\"]|\r(?!\n)|\n[ \t]')
_PLAIN_LIMIT = 200  # lines of a file the scan takes on (a bigger one is icalendar's)


class _Text(str):
    """A TEXT value of a plain file as icalendar's `vText` gives it to `_item` (its string, unescaped: it has no
    escape; and its parameters), without the rest of what a `vText` is made with."""

    __slots__ = ("params",)


_factories: dict[tuple[str, str | None], Any] = {}
_NO_PARAMETERS: Mapping[str, Any] = {}  # read only: what `_item` asks of a value written without parameters


class _Plain:
    """What `_item` and `alarms_of` ask of an icalendar component, for a plain file's scan."""

    __slots__ = ("name", "properties", "subcomponents")

    def __init__(self, name: str) -> None:
        self.name = name
        self.properties: dict[str, Any] = {}
        self.subcomponents: list[_Plain] = []

    def get(self, name: str, default: Any = None) -> Any:
        return self.properties.get(name, default)


def simple(raw: bytes, collection: str, path: str) -> list[Item] | None:
    """The items of a plain file (see above) or None: not plain, or a value icalendar would refuse."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    if _UNUSUAL.search(text):
        return None
    lines = [line for line in text.replace("\r\n", "\n").split("\n") if line]
    if len(lines) > _PLAIN_LIMIT or not lines or lines[0].upper() != "BEGIN:VCALENDAR" \
            or lines[-1].upper() != "END:VCALENDAR":
        return None
    from icalendar import Component, Parameters, vText

    factories = Component.types_factory
    stack: list[_Plain] = []
    item: _Plain | None = None
    for line in lines:
        matched = _PLAIN_LINE.fullmatch(line)
        if matched is None:
            return None
        name, params, value = matched.group(1).upper(), matched.group(2), matched.group(3)
        if name in ("BEGIN", "END"):
            if params:
                return None
            kind = value.upper()
            if name == "BEGIN":
                depth = len(stack)
                if (depth, kind) not in ((0, "VCALENDAR"), (1, TODO), (1, EVENT), (2, "VALARM")) or \
                        (depth == 1 and item is not None):
                    return None
                component = _Plain(kind)
                if depth:
                    stack[-1].subcomponents.append(component)
                if depth == 1:
                    item = component
                stack.append(component)
            elif not stack or stack.pop().name != kind:
                return None
            continue
        if not stack or name in stack[-1].properties:
            return None
        parameters = None
        if params:
            parameters = Parameters({key.upper(): val for key, _, val in
                                     (part.partition("=") for part in params[1:].split(";"))})
            if "TZID" in parameters:
                return None
        key = (name, parameters.value if parameters is not None else None)
        factory = _factories.get(key)
        if factory is None:
            factory = _factories[key] = factories.for_property(*key)
        if getattr(factory, "get_value_from_content_line", None) is not None:
            return None
        if factory is vText:  # vText.from_ical of a value with no escape is that value
            made = _Text(value)
            made.params = parameters if parameters is not None else _NO_PARAMETERS
            stack[-1].properties[name] = made
            continue
        try:
            if name == "CATEGORIES":
                from icalendar.parser.property import split_on_unescaped_comma

                made = factory(split_on_unescaped_comma(value))
            else:
                made = factory(factory.from_ical(value))
        except Exception:  # noqa: BLE001 (whatever icalendar's types make of a value: icalendar's whole reading decides)
            return None
        if parameters is not None:
            made.params = parameters
        stack[-1].properties[name] = made
    if stack or item is None:
        return None
    found = _item(item, collection, path)
    return [] if found is None else [found]


def _wanted(component: bytes, name: bytes) -> bool:
    if component in (b"VEVENT", b"VTODO"):
        return name in SUMMARY_PROPERTIES
    if component:  # VTIMEZONE and its parts: kept whole (their lines are few and short)
        return True
    return name in _CALENDAR_PROPERTIES


def summary_of(path: Path) -> bytes:
    """A big file's summary: an iCalendar text of the SUMMARY_PROPERTIES of its first tasks and events."""
    found = contentlines.reduced(path, limit=SCAN_LIMIT, line_limit=LINE_LIMIT, unit_limit=UNIT_LIMIT,
                                 units=SUMMARY_ITEMS, container=b"VCALENDAR", wanted=_wanted,
                                 kept_components=_SUMMARY_COMPONENTS, skip=_SKIPPED.__contains__,
                                 max_lines=MAX_LINES)
    return found.text(b"VCALENDAR")


def bounded_bytes(path: Path | str) -> tuple[bytes, bool]:
    """What is parsed of a file: its bytes when it holds at most MAX_FILE of them in at most MAX_LINES lines, else
    its summary (and True).

    The size is looked at on the open file, so a file swapped for a bigger one between two looks is still bound.
    """
    with contentlines.open_regular(path) as handle:
        if os.fstat(handle.fileno()).st_size <= MAX_FILE:
            raw = handle.read(MAX_FILE + 1)
            if len(raw) <= MAX_FILE and raw.count(b"\n") <= MAX_LINES:
                return raw, False
    return summary_of(Path(path)), True


def calendar_of(path: Path | str) -> Any:
    """The file parsed by icalendar, bounded as `bounded_bytes` says (for what expands an event's repeats)."""
    import icalendar

    return icalendar.Calendar.from_ical(bounded_bytes(path)[0])


# -- the collection, cached ------------------------------------------------------------------------------------


@frozen
class Entry:
    mtime_ns: int
    size: int
    items: tuple[Item, ...]
    problem: str = ""  # SUMMARY_ONLY (too big: read by its summary), UNREADABLE, or "" for a file read whole


@frozen
class Collection:
    """Every item of a vdir root at one moment; `generation` changes whenever any file did."""

    root: Path
    items: tuple[Item, ...]
    generation: int
    unreadable: int = 0  # files that are not iCalendar icalendar can read
    pending: int = 0  # files not read yet: the first reading of a big folder goes on over several calls
    cache: Path | None = None  # the folder of the disk cache, for what callers keep beside it (expansions)
    summarized: int = 0  # files over MAX_FILE, read by their summary only

    def by_uid(self) -> dict[str, Item]:
        return {item.uid: item for item in self.items}

    def folders(self) -> list[str]:
        return sorted({item.collection for item in self.items} | set(folders_of(self.root)))


def folders_of(root: Path) -> list[str]:
    """The lists (or calendars) of a vdir root: its sub-folders, dot-folders left out, links not followed."""
    try:
        with os.scandir(root) as entries:
            return sorted(e.name for e in entries if e.is_dir(follow_symlinks=False) and not e.name.startswith("."))
    except OSError:
        return []


class _Root:
    """What is known of one root: per folder its listing time, per file its entry."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.folders: dict[str, tuple[int, float]] = {}  # folder -> (its mtime_ns when listed, when listed)
        self.files: dict[str, dict[str, Entry]] = {}  # folder -> file name -> entry
        self.last_full = 0.0
        self.generation = 0
        self.snapshot: Collection | None = None
        self.loaded = False


_roots: dict[str, _Root] = {}
_generations = itertools.count(1)
_roots_lock = threading.Lock()


def _root_state(root: Path) -> _Root:
    with _roots_lock:
        return _roots.setdefault(str(root), _Root())


def forget() -> None:
    """Drop what memory holds (tests, and the bench's cold calls)."""
    with _roots_lock:
        _roots.clear()


def read(root: Path, cache_folder: Path | None = None, stop: Callable[[], bool] | None = None) -> Collection:
    """Every item under `root` (one folder per list), files read again only when their time or size changed.

    `stop()` true ends the reading of new files there (a call's deadline near): what was read stays, in memory
    and on disk, the next call goes on, and the collection says how many files are `pending`.
    """
    state = _root_state(root)
    with state.lock:
        disk = _LazyDisk(cache_folder, root)
        try:
            if not state.loaded and cache_folder is not None:
                with bulk(lasting=True):
                    disk.get().load_into(state)
            state.loaded = True
            changed, pending = _refresh(root, state, disk, stop or (lambda: False))
        finally:
            disk.close()
        if changed or state.snapshot is None or pending != state.snapshot.pending:
            # Unique across roots and forgotten states: what callers derive is memoised by it.
            state.generation = next(_generations)
            items = tuple(item for files in state.files.values() for entry in files.values() for item in entry.items)
            problems = [entry.problem for files in state.files.values() for entry in files.values() if entry.problem]
            state.snapshot = Collection(root, items, state.generation, problems.count(UNREADABLE), pending,
                                        cache_folder, problems.count(SUMMARY_ONLY))
        return state.snapshot


def _refresh(root: Path, state: _Root, disk: _LazyDisk, stop: Callable[[], bool]) -> tuple[bool, int]:
    now = time.time()
    full = now - state.last_full > FULL_CHECK
    if full:
        state.last_full = now
    changed = False
    present = folders_of(root)
    for gone in set(state.files) - set(present):
        del state.files[gone]
        state.folders.pop(gone, None)
        disk.drop_folder(gone)
        changed = True
    listings: list[tuple[str, int, bool, bool]] = []  # folder, its time, settled, files gone from it
    wanted: list[_Wanted] = []
    root_text = os.fspath(root)  # a warm call stats each folder: os.path, not pathlib (a third of its time)
    for folder in present:
        try:
            folder_mtime = os.stat(os.path.join(root_text, folder)).st_mtime_ns
        except OSError:
            continue
        known = state.folders.get(folder)
        settled = known is not None and known[0] == folder_mtime and known[1] * 1e9 - folder_mtime > SETTLE_NS
        if settled and not full and folder in state.files:
            continue
        gone, new = _list_folder(root / folder, folder, state, disk)
        changed |= gone
        wanted.extend(new)
        listings.append((folder, folder_mtime, settled, gone))
    done: set[_Wanted] = set()
    readings: list[tuple[str, str, Entry, str | None]] = []
    if wanted:
        with bulk(), contextlib.closing(_read_all(wanted, stop)) as reading:
            for job, entry, text in reading:
                state.files[job.folder][job.name] = entry
                readings.append((job.folder, job.name, entry, text))
                done.add(job)
                if len(readings) >= PUT_BATCH:
                    disk.put_many(readings)
                    readings = []
        disk.put_many(readings)
    left = dict.fromkeys((folder for folder, *_rest in listings), 0)
    read_in = dict.fromkeys(left, False)
    for job in wanted:
        if job in done:
            read_in[job.folder] = True
        else:
            left[job.folder] += 1  # left for the next call; an old reading of it, if any, stands meanwhile
    changed |= bool(done)
    for folder, folder_mtime, settled, gone in listings:
        if not left[folder]:  # a folder read only in part is listed again next time
            state.folders[folder] = (folder_mtime, now)
            disk.listed(folder, folder_mtime, now, gone or read_in[folder] or not settled)
    return changed, sum(left.values())


@frozen
class _Wanted:
    """A file to read: new, or changed since it was read."""

    path: str
    folder: str
    name: str
    mtime_ns: int
    size: int


def _list_folder(path: Path, folder: str, state: _Root, disk: _LazyDisk) -> tuple[bool, list[_Wanted]]:
    """Files gone from a list forgotten (True when there were any), and the files to read in it."""
    files = state.files.setdefault(folder, {})
    seen, gone, wanted = set(), False, []
    try:
        with os.scandir(path) as entries:
            listing = [e for e in entries if e.name.endswith(".ics") and not e.name.startswith(".")]
    except OSError:
        listing = []
    for entry in listing:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not entry.is_file(follow_symlinks=False):
            continue  # a link inside a list could point anywhere: not the person's list
        seen.add(entry.name)
        old = files.get(entry.name)
        if old is not None and old.mtime_ns == info.st_mtime_ns and old.size == info.st_size:
            continue
        wanted.append(_Wanted(entry.path, folder, entry.name, info.st_mtime_ns, info.st_size))
    for name in set(files) - seen:
        del files[name]
        disk.drop(folder, name)
        gone = True
    return gone, wanted


def _read_all(wanted: list[_Wanted], stop: Callable[[], bool]) -> Iterator[tuple[_Wanted, Entry, str | None]]:
    """Each file's entry (and its items as the disk cache keeps them, when at hand), as they are read.

    Many files are parsed by a pool of processes (`_Pool`), a few here; either way at least one file is read per
    call, then none once `stop()` is true (the rest are left for the next call).
    """
    if len(wanted) >= POOL_FROM and _workers() > 1 and not stop():
        started = 0
        for found in _Pool(wanted, stop).results():
            started += 1
            yield found
        if started:
            return
    for number, job in enumerate(wanted):
        if number and stop():
            return
        yield job, _read_file(job.path, job.folder, job.mtime_ns, job.size), None


def _read_file(path: str, folder: str, mtime_ns: int, size: int) -> Entry:
    """One file's entry: whatever goes wrong while reading it makes it unreadable, and nothing else."""
    try:
        raw, summary = bounded_bytes(path)
        items = tuple(items_of(raw, folder, path))
    except Exception as error:  # noqa: BLE001 (a stranger's file can make a parser fail in any way: one file, one count)
        log.warning("calendar file unreadable", path=path, error=type(error).__name__)
        return Entry(mtime_ns, size, (), UNREADABLE)
    return Entry(mtime_ns, size, items, SUMMARY_ONLY if summary else "")


# -- the pool that reads many files at once --------------------------------------------------------------------

POOL_FROM = 64  # files to read in one call before a pool is worth its start (a tenth of a second or so)
POOL_CHUNK = 48  # files sent to a pool process at once (two such batches in hand at most: a tenth of a second)
POOL_LIMIT = 8  # processes at most, whatever the machine's count of cores
_POOL_STARTS = 2  # pool processes that may fail to start before the pool is given up for this call
_context_made: Any = None


def _workers() -> int:
    """The pool's size: a process per core this process may run on, POOL_LIMIT at most."""
    return usable_cores(POOL_LIMIT)


def _context() -> Any:
    """Processes made by a fork server: a fresh process that has imported this module and icalendar once, forked
    for each pool process (never a fork of the server itself, whose threads may hold locks)."""
    global _context_made
    if _context_made is None:
        import multiprocessing

        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["__main__", __name__, "icalendar"])
        _context_made = context
    return _context_made


def _parsed(path: str, folder: str) -> tuple[str, str]:
    """(problem, what the disk cache keeps of the file's items, as JSON) or (UNREADABLE, the error's name)."""
    try:
        raw, summary = bounded_bytes(path)
        rows = [to_row(item) for item in items_of(raw, folder, path)]
    except Exception as error:  # noqa: BLE001 (a stranger's file can make a parser fail in any way: one file, one count)
        return UNREADABLE, type(error).__name__
    return (SUMMARY_ONLY if summary else ""), json.dumps(rows, ensure_ascii=False)


def _reader(connection: Any) -> None:
    """A pool process: says it is ready, then parses the files it is sent, one answer per file in their order,
    until it is sent None or the reading process has gone."""
    connection.send(None)
    while True:
        try:
            batch = connection.recv()
        except (EOFError, OSError):
            return
        if batch is None:
            return
        for path, folder in batch:
            connection.send(_parsed(path, folder))


class _Pool:
    """Up to `_workers()` processes parsing `wanted`, each file's answer taken as it comes.

    Bounded: at most POOL_LIMIT processes, each with two batches of POOL_CHUNK files in hand at most. Each file's
    failure is its own: a parser's error comes back as that file's answer (unreadable), and a process that dies
    (a crash in a C extension, the kernel's out-of-memory killer) takes only the file it was parsing with it: that
    file is counted unreadable, the rest of its batch goes back in the queue, a new process takes its place.
    `stop()` true ends it at once: every process is killed before `results` returns, the files it had in hand are
    left unread (pending, as the ones never sent), so that the pool never outlives the call that started it.
    """

    def __init__(self, wanted: list[_Wanted], stop: Callable[[], bool]) -> None:
        import collections

        self.queue = collections.deque(wanted)
        self.stop = stop
        self.size = min(_workers(), -(-len(wanted) // POOL_CHUNK))
        self.workers: dict[Any, tuple[Any, collections.deque[_Wanted], list[bool]]] = {}
        self.failed_starts = 0

    def _start(self) -> None:
        import collections

        context = _context()
        mine, theirs = context.Pipe(duplex=True)
        process = context.Process(target=_reader, args=(theirs,), name="gateway-plan-reader", daemon=True)
        process.start()
        theirs.close()
        self.workers[mine] = (process, collections.deque(), [False])

    def _feed(self, connection: Any) -> None:
        _process, outstanding, _ready = self.workers[connection]
        while self.queue and len(outstanding) <= POOL_CHUNK:
            batch = [self.queue.popleft() for _ in range(min(POOL_CHUNK, len(self.queue)))]
            outstanding.extend(batch)
            connection.send([(job.path, job.folder) for job in batch])

    def results(self) -> Iterator[tuple[_Wanted, Entry, str | None]]:
        from multiprocessing.connection import wait

        try:
            for _ in range(self.size):
                self._start()
        except (OSError, ValueError, RuntimeError) as error:  # no fork server here (a sandbox): read in process
            log.warning("calendar files read in one process", error=type(error).__name__)
            self.close()
            return
        try:
            while self.workers and not self.stop():
                found: list[tuple[_Wanted, Entry, str | None]] = []
                sentinels = {process.sentinel: connection for connection, (process, _o, _r) in self.workers.items()}
                for ready in wait([*self.workers, *sentinels], timeout=0.05):
                    connection = sentinels.get(ready, ready)
                    if connection in self.workers:
                        self._take(connection, found)
                        if connection in self.workers and ready in sentinels:
                            self._lost(connection, found)
                yield from found
                if not self.queue and not any(outstanding for _p, outstanding, _r in self.workers.values()):
                    return
        finally:
            self.close()

    def _take(self, connection: Any, found: list) -> None:
        """The answers a process has sent so far."""
        _process, outstanding, ready = self.workers[connection]
        try:
            while connection.poll():
                answer = connection.recv()
                if answer is None:
                    ready[0] = True
                else:
                    job = outstanding.popleft()
                    found.append((job, *_entry(job, *answer)))
        except (EOFError, OSError):
            return
        if ready[0]:
            self._feed(connection)

    def _lost(self, connection: Any, found: list) -> None:
        """A process that died: the file it was parsing is unreadable, the rest of its batch goes back."""
        process, outstanding, ready = self.workers.pop(connection)
        connection.close()
        process.join(0)
        if ready[0] and outstanding:
            job = outstanding.popleft()
            log.warning("calendar file unreadable", path=job.path, error=f"its reader died ({process.exitcode})")
            found.append((job, Entry(job.mtime_ns, job.size, (), UNREADABLE), None))
        else:
            self.failed_starts += 1
        self.queue.extendleft(reversed(outstanding))
        if self.queue and self.failed_starts < _POOL_STARTS:
            self._start()

    def close(self) -> None:
        """Every process ended now (killed if it does not end at once), its pipe closed."""
        for connection, (process, _outstanding, _ready) in self.workers.items():
            with contextlib.suppress(OSError):
                connection.close()
            if process.is_alive():
                process.kill()
        for process, _outstanding, _ready in self.workers.values():
            process.join(5)
        self.workers.clear()


def _entry(job: _Wanted, problem: str, text: str) -> tuple[Entry, str | None]:
    """A pool's answer for one file as its entry (and the JSON the disk cache keeps)."""
    if problem == UNREADABLE:
        log.warning("calendar file unreadable", path=job.path, error=text)
        return Entry(job.mtime_ns, job.size, (), UNREADABLE), None
    items = tuple(from_row(row, job.folder, job.path) for row in json.loads(text))
    return Entry(job.mtime_ns, job.size, items, problem), text


def problems_of(cache_folder: Path, root: Path) -> list[tuple[str, str]]:
    """The files of a root read by summary only or unreadable, as the last reading recorded them: (path, what),
    for `gateway doctor` (which reads no calendar file itself)."""
    path = _cache_path(cache_folder, root)
    if not path.exists():
        return []
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        return [(f"{root}/{folder}/{name}", problem) for folder, name, problem in connection.execute(
            "SELECT folder, name, problem FROM problems WHERE root = ? ORDER BY folder, name", (str(root),))]
    except sqlite3.Error:
        return []
    finally:
        connection.close()


def _cache_path(folder: Path, root: Path) -> Path:
    # One file per root: the tasks' and the calendars' readings never wait for each other.
    return folder / f"{CACHE_FILE.removesuffix('.sqlite')}-{hashlib.sha256(str(root).encode()).hexdigest()[:12]}.sqlite"


class _Disk:
    """The on-disk copy of what files said (masked), so that a new process need not parse them all again."""

    def __init__(self, connection: sqlite3.Connection, root: str) -> None:
        self.connection = connection
        self.root = root
        self.written = 0

    @classmethod
    def open(cls, folder: Path, root: Path) -> _Disk:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = _cache_path(folder, root)
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW, 0o600))
        connection = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.executescript(
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);"
            "CREATE TABLE IF NOT EXISTS files (root TEXT, folder TEXT, name TEXT, mtime_ns INTEGER, size INTEGER,"
            " items TEXT, PRIMARY KEY (root, folder, name)) WITHOUT ROWID;"
            "CREATE TABLE IF NOT EXISTS folders (root TEXT, folder TEXT, mtime_ns INTEGER, listed REAL,"
            " PRIMARY KEY (root, folder)) WITHOUT ROWID;"
            "CREATE TABLE IF NOT EXISTS kept (root TEXT, path TEXT, key TEXT, value TEXT,"
            " PRIMARY KEY (root, path, key)) WITHOUT ROWID;"
            "CREATE TABLE IF NOT EXISTS problems (root TEXT, folder TEXT, name TEXT, problem TEXT,"
            " PRIMARY KEY (root, folder, name)) WITHOUT ROWID;")
        version = f"{_CACHE_VERSION}.{MASKS_VERSION}"
        row = connection.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        if row is None or row[0] != version:  # other masks or another shape: read every file again
            connection.execute("DELETE FROM files")
            connection.execute("DELETE FROM folders")
            connection.execute("DELETE FROM kept")
            connection.execute("DELETE FROM problems")
            connection.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (version,))
        connection.execute("BEGIN")
        return cls(connection, str(root))

    def load_into(self, state: _Root) -> None:
        """What the disk knows of this root, into memory: one query per table, one JSON decode for every file.

        Each folder's listing comes back too (its time when listed, and when), so a new process lists again only
        the folders that changed since; the look at every file (for an editor writing in place) comes FULL_CHECK
        after the start, as it does for a file edited in place while the server runs.
        """
        rows = self.connection.execute(
            "SELECT folder, name, mtime_ns, size, items FROM files WHERE root = ?", (self.root,)).fetchall()
        decoded = json.loads("[" + ",".join(row[4] for row in rows) + "]") if rows else []
        problems = {(folder, name): problem for folder, name, problem in self.connection.execute(
            "SELECT folder, name, problem FROM problems WHERE root = ?", (self.root,))}
        for (folder, name, mtime_ns, size, _items), items in zip(rows, decoded, strict=True):
            path = f"{self.root}/{folder}/{name}"
            files = state.files.get(folder)
            if files is None:
                files = state.files[folder] = {}
            files[name] = Entry(mtime_ns, size, tuple(from_row(row, folder, path) for row in items),
                                problems.get((folder, name), ""))
        for folder, mtime_ns, listed in self.connection.execute(
                "SELECT folder, mtime_ns, listed FROM folders WHERE root = ?", (self.root,)):
            if folder in state.files:
                state.folders[folder] = (mtime_ns, listed)
        state.last_full = time.time()

    def listed(self, folder: str, mtime_ns: int, when: float) -> None:
        self.connection.execute("INSERT OR REPLACE INTO folders VALUES (?, ?, ?, ?)",
                                (self.root, folder, mtime_ns, when))

    def put(self, folder: str, name: str, entry: Entry, text: str | None = None) -> None:
        """One file's reading; `text`, when given, is its items as `to_row` makes them, in JSON already."""
        self.put_many([(folder, name, entry, text)])

    def put_many(self, readings: list[tuple[str, str, Entry, str | None]]) -> None:
        """Files' readings, each as `put` takes it, in a few statements."""
        if not readings:
            return
        root = self.root
        self.connection.executemany("DELETE FROM kept WHERE root = ? AND path = ?",
                                    [(root, f"{root}/{folder}/{name}") for folder, name, _e, _t in readings])
        self.connection.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?)", [
            (root, folder, name, entry.mtime_ns, entry.size,
             text if text is not None else json.dumps([to_row(item) for item in entry.items], ensure_ascii=False))
            for folder, name, entry, text in readings])
        self.connection.executemany("INSERT OR REPLACE INTO problems VALUES (?, ?, ?, ?)",
                                    [(root, folder, name, entry.problem) for folder, name, entry, _t in readings
                                     if entry.problem])
        self.connection.executemany("DELETE FROM problems WHERE root = ? AND folder = ? AND name = ?",
                                    [(root, folder, name) for folder, name, entry, _t in readings
                                     if not entry.problem])
        before, self.written = self.written, self.written + len(readings)
        if before // BATCH != self.written // BATCH:  # short transactions: another process's writer waits briefly
            self.connection.execute("COMMIT")
            self.connection.execute("BEGIN")

    def drop(self, folder: str, name: str) -> None:
        self.connection.execute("DELETE FROM files WHERE root = ? AND folder = ? AND name = ?",
                                (self.root, folder, name))
        self.connection.execute("DELETE FROM problems WHERE root = ? AND folder = ? AND name = ?",
                                (self.root, folder, name))
        self.forget_kept(folder, name)

    def forget_kept(self, folder: str, name: str) -> None:
        self.connection.execute("DELETE FROM kept WHERE root = ? AND path = ?", (self.root, f"{self.root}/{folder}/{name}"))

    def drop_folder(self, folder: str) -> None:
        self.connection.execute("DELETE FROM files WHERE root = ? AND folder = ?", (self.root, folder))
        self.connection.execute("DELETE FROM problems WHERE root = ? AND folder = ?", (self.root, folder))
        self.connection.execute("DELETE FROM kept WHERE root = ? AND path LIKE ? ESCAPE '\\'",
                                (self.root, _like_prefix(f"{self.root}/{folder}/")))
        self.connection.execute("DELETE FROM folders WHERE root = ? AND folder = ?", (self.root, folder))

    def close(self) -> None:
        try:
            self.connection.execute("COMMIT")
        finally:
            self.connection.close()


class _LazyDisk:
    """The disk cache opened only when something must be read from it or written to it (not on a warm call)."""

    def __init__(self, folder: Path | None, root: Path) -> None:
        self.folder, self.root, self.disk = folder, root, None

    def get(self) -> _Disk:
        if self.disk is None:
            self.disk = _Disk.open(self.folder, self.root)
        return self.disk

    def put(self, folder: str, name: str, entry: Entry, text: str | None = None) -> None:
        if self.folder is not None:
            self.get().put(folder, name, entry, text)

    def put_many(self, readings: list[tuple[str, str, Entry, str | None]]) -> None:
        if self.folder is not None and readings:
            self.get().put_many(readings)

    def drop(self, folder: str, name: str) -> None:
        if self.folder is not None:
            self.get().drop(folder, name)

    def drop_folder(self, folder: str) -> None:
        if self.folder is not None:
            self.get().drop_folder(folder)

    def listed(self, folder: str, mtime_ns: int, when: float, changed: bool) -> None:
        # Written only when something else is written, or once for a folder the disk does not know: a warm call
        # that lists a folder again (every FULL_CHECK) and finds nothing new opens no cache.
        if self.folder is not None and (changed or self.disk is not None):
            self.get().listed(folder, mtime_ns, when)

    def close(self) -> None:
        if self.disk is not None:
            self.disk.close()


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def kept(collection: Collection, wanted: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """What callers kept beside the disk cache for (file path, key) pairs: derived work (a repeating event's
    occurrences) that a new process need not do again. Dropped with the file's reading when the file changes."""
    wanted = list(wanted)
    if collection.cache is None or not wanted:
        return {}
    path = _cache_path(collection.cache, collection.root)
    if not path.exists():
        return {}
    connection = sqlite3.connect(path, timeout=10)
    try:
        rows = connection.execute(
            "SELECT path, key, value FROM kept WHERE root = ? AND (path, key) IN "
            "(SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))",
            (str(collection.root), json.dumps(wanted)))
        return {(p, k): v for p, k, v in rows}
    except sqlite3.Error:
        return {}
    finally:
        connection.close()


def keep(collection: Collection, values: Mapping[tuple[str, str], str]) -> None:
    """Keep derived work beside the disk cache (see `kept`)."""
    if collection.cache is None or not values:
        return
    disk = _Disk.open(collection.cache, collection.root)
    try:
        disk.connection.executemany("INSERT OR REPLACE INTO kept VALUES (?, ?, ?, ?)",
                                    [(str(collection.root), p, k, v) for (p, k), v in values.items()])
    finally:
        disk.close()


def changed_item(item: Item, **changes: Any) -> Item:
    return evolve(item, **changes)


def walk(items: Iterable[Item], kind: str) -> Iterator[Item]:
    return (item for item in items if item.kind == kind)


def replace(path: Path, data: bytes, expected: tuple[int, int]) -> None:
    """Put new contents in an existing file (whole, by rename), unless it changed since it was read."""
    info = os.stat(path, follow_symlinks=False)
    if (info.st_mtime_ns, info.st_size) != expected:
        raise FileExistsError(f"{path} changed while it was being edited")
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    descriptor = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, info.st_mode & 0o777)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.rename(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    try:
        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
