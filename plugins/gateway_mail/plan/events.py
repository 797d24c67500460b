"""Events on a vdir of VEVENT files as khal keeps them: the occurrences in a span, in the person's zone; new events.

A repeating event is expanded by recurring-ical-events from its own file (its exceptions and moved occurrences
included); the expansion is kept in memory by the file's state and the span, so that a warm agenda reads no file.

A stranger's rule can ask for a billion occurrences (FREQ=SECONDLY). khal bounds its expansion by time: a rule
with no end is expanded up to 2037 and no further. Here the bound is by count, so that it holds whatever the rule:
an event gives at most MAX_PER_BLOCK occurrences in a block of BLOCK days (an event every half hour fills one), and
a rule that dateutil would have to step through more than MAX_WALK times from its DTSTART to the end of the block
(it counts every occurrence from the first, whatever the span asked) is not expanded at all. Either way the event's
repeats are said to be cut. The walk is reckoned from the rule itself (frequency, interval, BY lists, COUNT,
UNTIL) before dateutil sees it, since dateutil cannot be stopped once asked for a span. The call's deadline is
looked at before each event and block is expanded, once one is done in the call: a walk started is finished
(bounded as said), kept, and the next call goes on from there rather than from the start.
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
from typing import Any
from zoneinfo import ZoneInfo

import structlog
from attrs import frozen

from gateway import Context, Gate, GateMemo
from gateway_mail import zone
from gateway_mail.plan import vdir
from gateway_mail.plan.vdir import EVENT, Collection, Item

log = structlog.get_logger("gateway_mail.plan")

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
MAX_PER_BLOCK = 1_000
MAX_WALK = 100_000
_expanded: dict[tuple[str, str], Spans] = {}
_expanded_lock = threading.Lock()
_PER_DAY = {"SECONDLY": 86_400.0, "MINUTELY": 1_440.0, "HOURLY": 24.0}


@frozen
class Spans:
    """A repeating event's (start, end) pairs in one block, and whether some were cut (or none could be made)."""

    pairs: list[tuple[date, date | None]]
    cut: bool = False


def _first(values: Any, default: Any = None) -> Any:
    if isinstance(values, list | tuple):
        return values[0] if values else default
    return default if values is None else values


def _walk(rule: Any, start: datetime, stop: datetime) -> float:
    """At most how many times dateutil steps through a rule from `start` to `stop` (its upper bound: the BY lists
    that only limit are taken as if they expanded)."""
    freq = str(_first(rule.get("FREQ"), "")).upper()
    try:
        interval = max(int(_first(rule.get("INTERVAL"), 1)), 1)
    except (TypeError, ValueError):
        interval = 1

    def size(key: str) -> int:
        values = rule.get(key)
        return max(len(values) if isinstance(values, list | tuple) else 1, 1)

    if freq == "SECONDLY":
        per_day = _PER_DAY[freq] / interval
    elif freq == "MINUTELY":
        per_day = _PER_DAY[freq] / interval * size("BYSECOND")
    elif freq == "HOURLY":
        per_day = _PER_DAY[freq] / interval * size("BYMINUTE") * size("BYSECOND")
    else:  # DAILY and coarser: at most one day a day, each at the times its BY lists give
        per_day = size("BYHOUR") * size("BYMINUTE") * size("BYSECOND") / (interval if freq == "DAILY" else 1)
    until = _first(rule.get("UNTIL"))
    if isinstance(until, date):
        stop = min(stop, zone.as_moment(vdir.clamped(until), start.tzinfo))
    steps = max((stop - start).total_seconds(), 0.0) / 86_400 * per_day + 1
    count = _first(rule.get("COUNT"))
    if count is not None:
        with contextlib.suppress(TypeError, ValueError):
            steps = min(steps, int(count))
    return steps


def _steps(component: Any, stop: datetime, begin: datetime | None = None) -> float:
    """At most how many steps dateutil takes expanding the component from its start (or from `begin`, for the
    occurrences of a span) up to `stop`."""
    start = component.get("DTSTART")
    moment = getattr(start, "dt", None)
    if not isinstance(moment, date):
        return 0.0
    first = zone.as_moment(vdir.clamped(moment), stop.tzinfo)
    rules = component.get("RRULE")
    rules = rules if isinstance(rules, list) else [rules] if rules is not None else []
    return sum(_walk(rule, max(first, begin) if begin is not None else first, stop) for rule in rules)


def _too_long_a_walk(component: Any, stop: datetime) -> bool:
    """Whether expanding the component up to `stop` would take dateutil more than MAX_WALK steps."""
    return _steps(component, stop) > MAX_WALK


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


# dateutil looks at UNTIL only on a date its filters let through: a rule whose day filters never match (the 30th
# of February) walks day by day to the year 9999, 15 to 45 s here, whatever the deadline. A rule with such filters
# is expanded under a bound on the lines run (`steps.bounded`) and the call's deadline: a few times what its
# reckoned walk and occurrences take (measured here: some 30 lines a step of dateutil's walk, 1,200 to 5,000 an
# occurrence made), so a rule that matches is never stopped and one that never does is, in well under a second;
# past it, its repeats are cut in that block and in the blocks after it in that call. Rules without such filters
# (every week on Monday) always match and are not traced.
FILTERS = ("BYMONTH", "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYSETPOS")
LINES_PER_STEP, LINES_PER_OCCURRENCE, LINES_BASE = 100, 10_000, 200_000


def _budget(masters: list[Any], block: datetime, stop: datetime) -> int:
    walk = sum(_steps(master, stop) for master in masters)
    made = min(sum(_steps(master, stop, block) for master in masters), MAX_PER_BLOCK + 1)
    return int(LINES_BASE + LINES_PER_STEP * walk + LINES_PER_OCCURRENCE * made)


def _may_never_match(masters: list[Any]) -> bool:
    for master in masters:
        rules = master.get("RRULE")
        for rule in rules if isinstance(rules, list) else [rules] if rules is not None else []:
            if any(rule.get(name) for name in FILTERS):
                return True
            if any(any(ch.isdigit() for ch in str(day)) for day in rule.get("BYDAY") or []):
                return True  # an ordinal weekday (the fifth Monday) may never come in the months asked
    return False


def _expand(item: Item, blocks: list[datetime], deadline: Any = None) -> dict[datetime, Spans]:
    """The (start, end) of each occurrence of a repeating event's file overlapping each block, at most
    MAX_PER_BLOCK of them a block. Once the deadline (a `Deadline`) has passed no further block is begun: the
    blocks done so far are given."""
    import recurring_ical_events

    from gateway_mail.plan.steps import TooManySteps, bounded

    found: dict[datetime, Spans] = {}
    try:
        calendar = vdir.calendar_of(item.path)
        masters = [c for c in calendar.walk(EVENT) if str(c.get("UID", "")) == item.uid
                   and c.get("RECURRENCE-ID") is None]
        query = recurring_ical_events.of(calendar)
        series = [s for s in query.series if str(s.uid) == item.uid]
        traced, hopeless = _may_never_match(masters), False
        for block in blocks:
            if deadline is not None and found and deadline.passed():
                break
            stop = block + BLOCK
            if hopeless or any(_too_long_a_walk(master, stop) for master in masters):
                found[block] = Spans([], cut=True)
                continue

            def occurrences(block: datetime = block, stop: datetime = stop) -> Spans:
                pairs: list[tuple[date, date | None]] = []
                for one in series:
                    for occurrence in one.between(block, stop):
                        if len(pairs) >= MAX_PER_BLOCK:
                            return Spans(pairs, cut=True)
                        pairs.append((vdir.clamped(occurrence.start), _end_of(occurrence.end)))
                return Spans(pairs)

            if not traced:
                found[block] = occurrences()
                continue
            try:
                found[block] = bounded(occurrences, _budget(masters, block, stop),
                                       deadline.passed if deadline is not None else None)
            except TooManySteps:
                if deadline is not None and deadline.passed():
                    break  # the call's time, not the rule: this block is left for the next call, not kept as cut
                log.warning("repeating event's expansion stopped by its bound", path=item.path)
                found[block], hopeless = Spans([], cut=True), True
    except Exception as error:  # noqa: BLE001
        # A rule, a date or a zone that recurring-ical-events or dateutil cannot follow: no occurrence is made
        # up, and the event's repeats are said to be cut.
        log.warning("repeating event not expanded", path=item.path, error=type(error).__name__)
        return {block: found.get(block, Spans([], cut=True)) for block in blocks}
    return found


def _end_of(value: Any) -> date | None:
    return vdir.clamped(value) if isinstance(value, date) else None


def _encode(spans: Spans) -> str:
    return json.dumps({"cut": spans.cut, "pairs": [[s.isoformat() if s is not None else None,
                                                    e.isoformat() if e is not None else None]
                                                   for s, e in spans.pairs]})


def _decode(text: str) -> Spans:
    def when(value: str | None) -> date | None:
        if not value:
            return None
        return date.fromisoformat(value) if len(value) == 10 else datetime.fromisoformat(value)

    data = json.loads(text)
    return Spans([(when(s), when(e)) for s, e in data["pairs"]], bool(data.get("cut")))


def _repeats_of(events: Collection, items: list[Item], begin: datetime, finish: datetime,
                deadline: Any = None) -> dict[str, Spans]:
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
        try:
            for item, wanted in keys.values():
                absent = [block for block, key in zip(blocks, wanted, strict=True) if key not in known]
                if absent:
                    if deadline is not None and made:
                        # DeadlinePassed: the gateway answers that the call took too long. Not before one event is
                        # done, so that each call, however late it began this work, leaves the next one less to do.
                        deadline.check()
                    for block, spans in _expand(item, absent, deadline).items():
                        key = (item.path, wanted[blocks.index(block)][1])
                        known[key] = spans
                        made[key] = _encode(spans)
        finally:
            # Kept even when the deadline stopped the work: the next call goes on from there, not from the start.
            with contextlib.suppress(sqlite3.Error, OSError):  # a cache not written is work done again, no more
                vdir.keep(events, made)
            with _expanded_lock:
                if len(_expanded) > 16_384:
                    _expanded.clear()
                _expanded.update({key: known[key] for key in missing if key in known})
        if deadline is not None and any(key not in known for key in missing):
            deadline.check()  # an event's blocks left undone because the deadline passed
    result = {}
    for uid, (_item, wanted) in keys.items():
        found = [known.get(key, Spans([], cut=True)) for key in wanted]
        spans = [span for block in found for span in block.pairs]
        cut = any(block.cut for block in found)
        result[uid] = Spans(list(dict.fromkeys(spans)) if len(wanted) > 1 else spans, cut)  # one over two blocks
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


def occurrences(events: Collection, begin: datetime, finish: datetime, tz: tzinfo,
                deadline: Any = None) -> list[Occurrence]:
    """Every occurrence overlapping [begin, finish), in start order, in the person's zone."""
    return expand(events, begin, finish, tz, deadline)[0]


def _before(moment: datetime, span: timedelta) -> datetime:
    try:
        return moment - span
    except OverflowError:
        return datetime.min.replace(tzinfo=moment.tzinfo)


def expand(events: Collection, begin: datetime, finish: datetime, tz: tzinfo,
           deadline: Any = None) -> tuple[list[Occurrence], list[Item]]:
    """Every occurrence overlapping [begin, finish), in start order, in the person's zone; and the repeating
    events whose repeats were cut there (too many, or a rule that could not be followed)."""
    index = _index_of(events, tz)
    found = []
    for position in range(bisect.bisect_left(index.starts, _before(begin, index.longest)), len(index.starts)):
        first, last, all_day, item = index.spans[position]
        if first >= finish:
            break
        if last > begin or (last == first and first >= begin):
            found.append(Occurrence(item, first, last, all_day))
    repeats = _repeats_of(events, index.repeating, begin, finish, deadline) if index.repeating else {}
    cut = []
    for item in index.repeating:
        spans = repeats.get(item.uid)
        if spans is None:
            continue
        if spans.cut:
            cut.append(item)
        for start, end in spans.pairs:
            span = _span(start, end, tz)
            if span is None:
                continue
            first, last, all_day = span
            if first < finish and (last > begin or (last == first and first >= begin)):
                found.append(Occurrence(item, first, last, all_day))
    found.sort(key=lambda o: (o.start, not o.all_day, o.item.uid))
    return found, cut


def new_event(uid: str, title: str, *, now: datetime, start: date, end: date | None, location: str = "",
              description: str = "", repeat: Any = None) -> bytes:
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
    if description:
        event.add("DESCRIPTION", description)
    if repeat is not None:
        event.add("RRULE", repeat)
    calendar.add_component(event)
    if isinstance(start, datetime):
        calendar.add_missing_timezones()
    return calendar.to_ical()
