"""Tasks on a vdir of VTODO files as todoman keeps them: the plan (what comes next, and why), new tasks, done.

The plan ranks every open task the same way whatever the gate says, then leaves out what it keeps: a task that
waits on a closed project's keeps its place, and the closed one is in no answer. A new task is a new file; marking
one done edits only STATUS, COMPLETED, PERCENT-COMPLETE, LAST-MODIFIED and SEQUENCE, every other line byte for byte.
A repeating task is done as todoman does it: the one done also loses its RRULE, and its next occurrence (DUE and
DTSTART moved to the rule's next dates) is a new task in a new file, open.
"""

from __future__ import annotations

import os
import re
import threading
import uuid
from collections.abc import Callable, Mapping
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from attrs import frozen

from gateway import Context, Gate, GateMemo, Person, ToolError, Traits
from gateway_mail import zone
from gateway_mail.plan import vdir
from gateway_mail.plan.vdir import TODO, Collection, Item
from gateway_mail.projects import projects
from gateway_mail.projects.placing import placer

DEFAULT_TASKS = "~/.local/share/vdirsyncer/tasks"
PRODID = "-//gateway//mail plugin//EN"
SOON_DAYS = 7
UTC = ZoneInfo("UTC")


def root_of(ctx: Context) -> Path:
    return ctx.path_setting("tasks") or Path(DEFAULT_TASKS).expanduser()


READING_SHARE = 0.4  # of a call's deadline, for a long first reading: the rest is kept for the answer


def reading_stop(ctx: Context) -> Callable[[], bool]:
    """When a first reading must stop: once it has used its share of the call's time (a loaded machine is slow)."""
    deadline = ctx.deadline
    return lambda: deadline.left() < deadline.seconds * (1 - READING_SHARE)


def collection(ctx: Context) -> Collection:
    return vdir.read(named_root(ctx, "tasks", "task lists folder", root_of(ctx)), Path(ctx.folders.cache),
                     reading_stop(ctx))


def named_root(ctx: Context, key: str, what: str, root: Path) -> Path:
    """The root, unless the person named one that is not there: that is said, never answered as "nothing"."""
    if str(ctx.settings.get(key) or "").strip() and not root.is_dir():
        from gateway_mail.shown import shown_path

        raise ToolError(f"the {what} {shown_path(root)} does not exist ([plugins.mail] {key} in the gateway's config names "
                        "it): the person fixes the path there, or mounts the disk it is on")
    return root


# -- who owns what ---------------------------------------------------------------------------------------------


@frozen
class Owners:
    """The projects of every task (its own, its ties', its bigger tasks'), for one collection and tie store."""

    of: Callable[[str], frozenset[str]]

    def __call__(self, item: Item) -> frozenset[str]:
        return self.of(item.uid)


def item_traits(item: Item, ties: Mapping[str, frozenset[str]] | None = None) -> Traits:
    """A task's or an event's traits: its file and its list's (calendar's) folder, the list's (calendar's) name, its
    organizer and attendees (unproven), its title and masked description, the projects it names (REFID and
    `project:<id>` categories, compared without case by the gate) and those it is tied to."""
    named = projects.tagged(item.refids, item.categories) | (ties or {}).get(item.address, frozenset())
    place = {"list": item.collection} if item.kind == "VTODO" else {"calendar": item.collection}
    return Traits(paths=(item.path, os.path.dirname(item.path)), people=item.people,
                  words=(item.summary, item.description), projects=tuple(sorted(named)), **place)


def own_owners(gate: Gate, item: Item, ties: Mapping[str, frozenset[str]] | None = None) -> frozenset[str]:
    """The projects whose routes take the item by its own traits (`item_traits`), asked of the gate in parts
    (`projects.placing`: each distinct place, file, people, words and named projects once per gate)."""
    task = item.kind == "VTODO"
    parts = placer(gate, "task" if task else "event")
    folder = item.path.rpartition("/")[0]
    found = (parts.place(paths=(folder,), list=item.collection) if task
             else parts.place(paths=(folder,), calendar=item.collection))
    if parts.path_routes:
        found = found | parts.file(item.path, folder)
    if item.people:
        found = found | parts.people(Person(p) for p in item.people)
    found = found | parts.words((item.summary, item.description))
    named = projects.tagged(item.refids, item.categories) if item.refids or item.categories else frozenset()
    if ties:
        named = named | ties.get(item.address, frozenset())
    return found | parts.named(named) if named else found


def owners_of(items: tuple[Item, ...], ties: Mapping[str, frozenset[str]], gate: Gate) -> Owners:
    """Every task's owners: its own (`own_owners`) and every bigger task's."""
    own = {item.uid: own_owners(gate, item, ties) for item in items}
    parents = {item.uid: item.parent for item in items if item.parent}
    return Owners(projects.owners_with_parents(own, parents.get))


# -- the plan --------------------------------------------------------------------------------------------------


_FAR = datetime.max.replace(tzinfo=UTC)


@frozen
class Prepared:
    """What ranking needs of one open task, worked out once per collection generation and zone."""

    item: Item
    due: datetime | None  # its own due, else its nearest dated bigger task's (a date: the end of that day)
    due_timed: bool
    due_of_bigger: bool
    own_due: datetime | None
    start: datetime | None
    created: datetime
    waiting: bool  # on an open task (RELATED-TO;RELTYPE=DEPENDS-ON)
    has_open_steps: bool
    is_step: bool


@frozen
class Ranked:
    item: Item
    ready: bool  # not waiting on an open task, no open steps, not starting later
    prepared: Prepared
    now: datetime

    @property
    def why(self) -> str:
        """Why it comes where it does, in words (made only for the tasks shown)."""
        p, now = self.prepared, self.now
        reasons = []
        urgency, words = _due_words(p.due, p.due_timed, now)
        if words:
            reasons.append(f"a step of a bigger task {words}" if p.due_of_bigger else words)
        if self.item.priority and self.item.priority <= 4:
            reasons.append(f"priority {self.item.priority}")
        if p.is_step and not p.due_of_bigger:
            reasons.append("a step of a bigger task")
        if p.has_open_steps:
            reasons.append("its steps come first")
        if p.start is not None and p.start > now:
            reasons.append(f"starts {_day(p.start)}")
        if p.waiting:
            reasons.append("waits on another task")
        return "; ".join(reasons) or "no date: in the order the tasks were made"


def _moment(value: date | None, tz: tzinfo, end_of_day: bool = False) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return zone.as_moment(value, tz)
    moment = zone.day_start(value, tz)
    return moment + timedelta(days=1) - timedelta(seconds=1) if end_of_day else moment


# The C locale's names, which strftime's %a and %b give (the gateway never sets LC_TIME), written out: a plan's
# reasons are made for every task shown, and strftime costs several microseconds a call.
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _day(moment: datetime) -> str:
    return f"{_WEEKDAYS[moment.weekday()]} {moment.day} {_MONTHS[moment.month - 1]}"


def _urgency(due: datetime | None, now: datetime) -> int:
    """How urgent a due time makes a task: 0 overdue, 1 today, 2 within a week, 3 later, 4 none."""
    if due is None:
        return 4
    if due < now:
        return 0
    days = (due.date() - now.date()).days
    return 1 if days == 0 else 2 if days <= SOON_DAYS else 3


def _due_words(due: datetime | None, timed: bool, now: datetime) -> tuple[int, str]:
    urgency = _urgency(due, now)
    if due is None:
        return urgency, ""
    at = f" at {due.hour:02d}:{due.minute:02d}" if timed else ""
    if urgency == 0:
        return urgency, f"overdue since {_day(due)}{at}"
    if urgency == 1:
        return urgency, f"due today{at}"
    if urgency == 2:
        return urgency, f"due {_day(due)}{at}"
    # strftime's %Y (glibc's) does not pad a year before 1000 as this would: such a year keeps strftime
    return urgency, f"due {due.year}-{due.month:02d}-{due.day:02d}" if due.year >= 1000 else f"due {due:%Y-%m-%d}"


def prepare(items: tuple[Item, ...], tz: tzinfo) -> list[Prepared]:
    """Every open task's moments in the person's zone and its links to others (no `now` in it)."""
    open_tasks = [item for item in items if item.kind == TODO and not item.done]
    open_uids = {item.uid for item in open_tasks}
    with_open_steps = {item.parent for item in open_tasks if item.parent}
    by_uid = {item.uid: item for item in items}
    prepared = []
    for item in open_tasks:
        bigger = _dated_ancestor(item, by_uid) if item.due is None else None
        dated = item if bigger is None else bigger
        own_due = _moment(item.due, tz, end_of_day=True)
        prepared.append(Prepared(
            item, own_due if bigger is None else _moment(bigger.due, tz, end_of_day=True),
            isinstance(dated.due, datetime), bigger is not None, own_due, _moment(item.start, tz),
            _moment(item.created, tz) or _FAR, any(uid in open_uids for uid in item.depends),
            item.uid in with_open_steps, bool(item.parent and item.parent in by_uid)))
    return prepared


def rank(prepared: list[Prepared], now: datetime) -> list[Ranked]:
    """Every open task, the next step first. The order depends on the tasks alone, never on the gate."""
    ranked = []
    for p in prepared:
        ready = not (p.start is not None and p.start > now) and not p.waiting and not p.has_open_steps
        urgency = _urgency(p.due, now)
        if p.item.priority and p.item.priority <= 4:
            urgency = min(urgency, 3)
        key = (not ready, urgency, p.due or _FAR, p.item.priority or 10, p.created, p.item.uid)
        ranked.append((key, Ranked(p.item, ready, p, now)))
    ranked.sort(key=lambda pair: pair[0])
    return [entry for _, entry in ranked]


def _dated_ancestor(item: Item, by_uid: Mapping[str, Item]) -> Item | None:
    seen = {item.uid}
    current = by_uid.get(item.parent) if item.parent else None
    while current is not None and current.uid not in seen:
        if current.due is not None:
            return current
        seen.add(current.uid)
        current = by_uid.get(current.parent) if current.parent else None
    return None


@frozen
class Ranking:
    """The plan as ranked at `since`, which holds until `until`: no task's rank, view or reasons changes before."""

    entries: list[Ranked]
    since: datetime
    until: datetime

    def holds(self, now: datetime) -> bool:
        return self.since <= now < self.until


def holds_until(prepared: list[Prepared], now: datetime, tz: tzinfo) -> datetime:
    """The first moment after `now` at which `rank`, `in_view` or a reason could say something else: the next start
    or due time to come (a start passed makes a task ready, a due time passed makes it overdue), or the next
    midnight in the person's zone (how many days away each date is, what is today). Compared as `rank` compares."""
    try:
        soonest = zone.day_start(now.date() + timedelta(days=1), tz)
    except OverflowError:  # the last day a date can hold: no midnight after it
        return _FAR
    for p in prepared:
        if p.start is not None and now < p.start < soonest:
            soonest = p.start
        if p.due is not None and now <= p.due < soonest:
            soonest = p.due
    return soonest


_prepared: GateMemo[list[Prepared]] = GateMemo(gates=4)
_rankings: dict[tuple[str, int, str], Ranking] = {}
_rankings_lock = threading.Lock()


def ranking(ctx: Context, tasks: Collection, now: datetime, tz: tzinfo) -> Ranking:
    """The plan, worked out once per collection generation and zone and kept for as long as it holds (`Ranking`):
    ranked again at the next due or start time or midnight, not every minute (the gate does not change it)."""
    generation = (str(tasks.root), tasks.generation, zone.zone_name(tz))
    with _rankings_lock:
        kept = _rankings.get(generation)
    if kept is not None and kept.holds(now):
        return kept
    with vdir.bulk():
        prepared = _prepared.get(None, lambda: prepare(tasks.items, tz), generation)
        made = Ranking(rank(prepared, now), now, holds_until(prepared, now, tz))
    with _rankings_lock:
        if generation not in _rankings and len(_rankings) >= 4:
            _rankings.pop(next(iter(_rankings)))
        _rankings[generation] = made
    return made


def ranked(ctx: Context, tasks: Collection, now: datetime, tz: tzinfo) -> list[Ranked]:
    """The plan at `now` (`ranking`)."""
    return ranking(ctx, tasks, now, tz).entries


def in_view(entry: Ranked, view: str, now: datetime, tz: tzinfo) -> bool:
    if view == "all":
        return True
    if view == "now":
        return entry.ready
    due, start = entry.prepared.own_due, entry.prepared.start
    return (due is not None and due.date() <= now.date()) or (start is not None and start.date() == now.date())


# -- writing ---------------------------------------------------------------------------------------------------

_LINE_BREAK = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")


def one_line_field(value: str, what: str, limit: int = 500) -> str:
    """A title, a place or a tag an agent wrote: one line, no control character, not empty, not too long."""
    if _LINE_BREAK.search(value):
        raise ToolError(f"the {what} must be one line, without line breaks or control characters")
    value = value.strip()
    if not value:
        raise ToolError(f"the {what} is empty")
    if len(value) > limit:
        raise ToolError(f"the {what} has at most {limit} characters")
    return value


# A description may hold line breaks (icalendar escapes them: the property stays one content line), never a
# carriage return, another control character or a Unicode line separator, which some readers take for a new line.
_TEXT_REFUSED = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029]")
DESCRIPTION_LIMIT = 10_000


def text_field(value: str, what: str, limit: int = DESCRIPTION_LIMIT) -> str:
    """A description an agent wrote: lines broken by LF only, no other control character, not too long."""
    if _TEXT_REFUSED.search(value):
        raise ToolError(f"the {what} holds a control character or a line separator other than a plain line break "
                        "(\\n): take it out")
    value = value.strip()
    if len(value) > limit:
        raise ToolError(f"the {what} has at most {limit:,} characters")
    return value


# What `repeat` takes: RFC 5545's RRULE parts, at most one date a day (FREQ daily or coarser, and the time of day is
# the start's: no BYHOUR, BYMINUTE, BYSECOND), so that no rule an agent writes can ask the agenda for more than a
# date a day; bounded in length (COUNT, UNTIL) and step (INTERVAL).
REPEAT_FREQUENCIES = ("DAILY", "WEEKLY", "MONTHLY", "YEARLY")
REPEAT_PARTS = frozenset(("FREQ", "UNTIL", "COUNT", "INTERVAL", "BYDAY", "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO",
                          "BYMONTH", "BYSETPOS", "WKST"))
MAX_COUNT = 1_000
MAX_INTERVAL = 1_000
LAST_REPEAT = date(2199, 12, 31)


def repeat_rule(value: str, anchor: date, tz: tzinfo) -> Any:
    """The agent's `repeat` (an RRULE, with or without `RRULE:`) checked and settled as an icalendar vRecur, for an
    item starting (or due) at `anchor`: ToolError with what to change otherwise.

    UNTIL is written as RFC 5545 wants it beside the anchor: a date for a whole-day item, a time in UTC for a timed
    one (a date given for a timed item is the end of that day in the person's zone). The rule must give a date
    within dateutil's bounded walk (`steps.bounded`), so that a rule that never matches (30 February) is refused
    here rather than found later.
    """
    import icalendar
    from dateutil.rrule import rrulestr

    from gateway_mail.plan.steps import TooManySteps, bounded

    text = one_line_field(value, "repeat rule", 500)
    if text.upper().startswith("RRULE:"):
        text = text[len("RRULE:"):]
    try:
        recur = icalendar.vRecur.from_ical(text)
    except (ValueError, TypeError) as error:
        raise ToolError(f"the repeat rule cannot be read ({error}); write it as iCalendar's RRULE does, such as "
                        "FREQ=WEEKLY;BYDAY=MO,TH or FREQ=MONTHLY;BYMONTHDAY=1;COUNT=12") from None
    unknown = sorted(set(recur) - REPEAT_PARTS)
    if unknown:
        raise ToolError(f"the repeat rule's part {unknown[0]} is not taken (the time of day is the start's; the parts "
                        f"taken: {', '.join(sorted(REPEAT_PARTS))})")
    frequency = str((recur.get("FREQ") or [""])[0]).upper()
    if frequency not in REPEAT_FREQUENCIES:
        raise ToolError(f"the repeat rule's FREQ must be one of {', '.join(REPEAT_FREQUENCIES)}: a task or an "
                        "event an agent writes repeats at most once a day")
    if "COUNT" in recur and "UNTIL" in recur:
        raise ToolError("the repeat rule gives COUNT or UNTIL, not both (RFC 5545)")
    for part, most in (("COUNT", MAX_COUNT), ("INTERVAL", MAX_INTERVAL)):
        if part in recur:
            number = recur[part][0]
            if not isinstance(number, int) or not 1 <= number <= most:
                raise ToolError(f"the repeat rule's {part} must be a whole number from 1 to {most:,}")
    if "UNTIL" in recur:
        recur["UNTIL"] = [_until(recur["UNTIL"][0], anchor, tz)]
    start = anchor if isinstance(anchor, datetime) else datetime.combine(anchor, datetime.min.time())
    try:
        rule = rrulestr(recur.to_ical().decode(), dtstart=start)
        first = bounded(lambda: rule.after(start, inc=True))
    except TooManySteps:
        first = None
    except (ValueError, TypeError) as error:
        raise ToolError(f"the repeat rule cannot be followed ({error})") from None
    if first is None:
        raise ToolError("the repeat rule gives no date from the start on (within the bound the gateway sets on that "
                        "search): check its BYMONTH, BYMONTHDAY and UNTIL")
    return recur


def _until(value: Any, anchor: date, tz: tzinfo) -> date:
    timed = isinstance(anchor, datetime)
    if isinstance(value, datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=tz)
        day = moment.astimezone(tz).date()
    else:
        day = value
        moment = datetime.combine(value, datetime.max.time().replace(microsecond=0), tz)
    first = anchor.date() if timed else anchor
    if day < first:
        raise ToolError(f"the repeat rule's UNTIL ({day.isoformat()}) comes before the start")
    if day > LAST_REPEAT:
        raise ToolError(f"the repeat rule's UNTIL must be on or before {LAST_REPEAT.isoformat()}")
    return moment.astimezone(UTC) if timed else day


def new_uid() -> str:
    return f"{uuid.uuid4().hex}@gateway"


def new_task(uid: str, title: str, *, now: datetime, due: date | None = None, priority: int | None = None,
             tags: list[str] | None = None, description: str = "", parent: str | None = None,
             project: str | None = None, start: date | None = None, repeat: Any = None) -> bytes:
    """A VCALENDAR holding one VTODO, written as todoman writes its own (icalendar does the escaping)."""
    import icalendar

    calendar = icalendar.Calendar()
    calendar.add("VERSION", "2.0")
    calendar.add("PRODID", PRODID)
    todo = icalendar.Todo()
    stamp = now.astimezone(UTC).replace(microsecond=0)
    todo.add("UID", uid)
    todo.add("DTSTAMP", stamp)
    todo.add("CREATED", stamp)
    todo.add("LAST-MODIFIED", stamp)
    todo.add("SUMMARY", title)
    if description:
        todo.add("DESCRIPTION", description)
    todo.add("STATUS", "NEEDS-ACTION")
    if start is not None:
        todo.add("DTSTART", start)
    if due is not None:
        todo.add("DUE", due)
    if repeat is not None:
        todo.add("RRULE", repeat)
    if priority:
        todo.add("PRIORITY", priority)
    categories = list(tags or [])
    if project:
        categories.append(f"{projects.CATEGORY}{project}")
        todo.add("REFID", project)
    if categories:
        todo.add("CATEGORIES", categories)
    if parent:
        todo.add("RELATED-TO", parent, parameters={"RELTYPE": "PARENT"})
    calendar.add_component(todo)
    if isinstance(due, datetime) or isinstance(start, datetime):
        calendar.add_missing_timezones()
    return calendar.to_ical()


_DONE_NAMES = ("STATUS", "COMPLETED", "PERCENT-COMPLETE", "LAST-MODIFIED", "SEQUENCE")


def _name_of(line: bytes) -> bytes:
    return re.split(rb"[;:]", line, maxsplit=1)[0].strip().upper()


def mark_done(raw: bytes, uid: str, now: datetime, end_repeat: bool = False) -> bytes:
    """The same file with the VTODO `uid` done: only the five properties change, every other line byte for byte
    (and its RRULE goes too when `end_repeat`: a repeating task's next occurrence is a task of its own).

    The file's lines are edited, never re-serialised: a property's folded continuation lines go with it, the
    new values take the place of the old ones (or come before END:VTODO), the file's own line ending is kept.
    """
    newline = b"\r\n" if b"\r\n" in raw else b"\n"
    lines = raw.split(newline)
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ").encode()
    out: list[bytes] = []
    depth, in_todo, block = 0, False, []
    for line in lines:
        upper = line.upper()
        if not in_todo:
            out.append(line)
            if upper.startswith(b"BEGIN:VTODO"):
                in_todo, depth, block = True, 0, []
            continue
        if upper.startswith(b"BEGIN:"):
            depth += 1
        if depth == 0 and upper.startswith(b"END:VTODO"):
            out.extend(_done_block(block, uid, stamp, end_repeat))
            out.append(line)
            in_todo = False
            continue
        if upper.startswith(b"END:"):
            depth -= 1
        block.append(line)
    return newline.join(out)


def _done_block(block: list[bytes], uid: str, stamp: bytes, end_repeat: bool = False) -> list[bytes]:
    """One VTODO's inner lines, done if it is the one asked (its UID, no RECURRENCE-ID), else as they were."""
    # Properties: a line and the continuation lines folded under it (starting with a space or a tab).
    properties: list[list[bytes]] = []
    for line in block:
        if line[:1] in (b" ", b"\t") and properties:
            properties[-1].append(line)
        else:
            properties.append([line])
    names = [_name_of(p[0]) for p in properties]
    own_uid = next((b"".join(x.lstrip(b" \t") if i else x for i, x in enumerate(p)).split(b":", 1)[1].strip()
                    for p, n in zip(properties, names, strict=True) if n == b"UID" and b":" in b"".join(p)), b"")
    if own_uid.decode("utf-8", "replace") != uid or b"RECURRENCE-ID" in names:
        return block
    sequence = 0
    for p, n in zip(properties, names, strict=True):
        if n == b"SEQUENCE":
            try:
                sequence = int(b"".join(p).split(b":", 1)[1].strip())
            except (IndexError, ValueError):
                sequence = 0
    values = {b"STATUS": b"STATUS:COMPLETED", b"COMPLETED": b"COMPLETED:" + stamp,
              b"PERCENT-COMPLETE": b"PERCENT-COMPLETE:100", b"LAST-MODIFIED": b"LAST-MODIFIED:" + stamp,
              b"SEQUENCE": b"SEQUENCE:" + str(sequence + 1).encode()}
    out, placed = [], set()
    for p, n in zip(properties, names, strict=True):
        if end_repeat and n == b"RRULE":
            continue
        if n in values:
            if n not in placed:
                out.append(values[n])
                placed.add(n)
            continue  # a second copy of one of the five is dropped (the new value stands once)
        out.extend(p)
    out.extend(values[n.encode()] for n in _DONE_NAMES if n.encode() not in placed)
    return out


@frozen
class Next:
    """A repeating task's next occurrence: its file (None when the rule has no later date), UID and due date."""

    data: bytes | None
    uid: str = ""
    due: date | None = None


def next_occurrence(raw: bytes, uid: str, now: datetime) -> Next | None:
    """What marking the VTODO `uid` done makes next, as todoman does: None when it does not repeat; else a copy under
    a new UID with DUE and DTSTART each moved to the rule's first date after it (a start with none left is dropped;
    a due date with none left ends the series: Next(None)), open again, stamped now, every
    other property (words, priority, categories, project, parent, alarms) as it was. ToolError when the rule cannot
    be read (nothing is written then)."""
    import icalendar
    from dateutil.rrule import rrulestr

    if b"RRULE" not in raw.upper():  # the common case: no repeat, nothing to parse
        return None
    try:
        calendar = icalendar.Calendar.from_ical(raw)
    except ValueError as error:
        raise ToolError(f"the task's file cannot be read as iCalendar ({error}); mark it done in the task program "
                        "that made it") from None
    todo = next((c for c in calendar.walk("VTODO") if str(c.get("UID", "")) == uid and "RECURRENCE-ID" not in c),
                None)
    if todo is None or "RRULE" not in todo:
        return None
    rules = todo["RRULE"] if isinstance(todo["RRULE"], list) else [todo["RRULE"]]
    rule = rules[0].to_ical().decode()

    def moved(value: date | datetime) -> date | datetime | None:
        start = value if isinstance(value, datetime) else datetime.combine(value, datetime.min.time())
        try:
            following = _after(rrulestr, rule, start)
        except (ValueError, TypeError) as error:
            raise ToolError(f"the task repeats by a rule that cannot be read ({error}); mark it done in the task "
                            "program that made it") from None
        if following is None:
            return None
        return following if isinstance(value, datetime) else following.date()

    anchors = {name: todo[name].dt for name in ("DUE", "DTSTART") if name in todo}
    moves = {name: moved(value) for name, value in anchors.items()}
    # The due date leads (the start, when there is none): past the rule's last date, the series ends with this one.
    if anchors and moves["DUE" if "DUE" in moves else "DTSTART"] is None:
        return Next(None)
    copy = icalendar.Todo()
    skipped = {"UID", "DUE", "DTSTART", "STATUS", "COMPLETED", "PERCENT-COMPLETE", "DTSTAMP", "CREATED",
               "LAST-MODIFIED", "SEQUENCE"}
    for name, value in todo.property_items(recursive=False):
        if name not in ("BEGIN", "END") and name not in skipped:
            copy.add(name, value, encode=False)
    for component in todo.subcomponents:  # alarms go with it
        copy.add_component(component)
    new = new_uid()
    stamp = now.astimezone(UTC)
    copy.add("UID", new)
    for name, value in moves.items():
        if value is not None:
            copy.add(name, value)
    copy.add("STATUS", "NEEDS-ACTION")
    for name in ("DTSTAMP", "CREATED", "LAST-MODIFIED"):
        copy.add(name, stamp)
    copy.add("SEQUENCE", 0)
    made = icalendar.Calendar()
    for name, value in calendar.property_items(recursive=False):
        if name not in ("BEGIN", "END"):
            made.add(name, value, encode=False)
    for component in calendar.subcomponents:
        if component.name == "VTIMEZONE":
            made.add_component(component)
    made.add_component(copy)
    due = moves.get("DUE")
    return Next(made.to_ical(), new, due.date() if isinstance(due, datetime) else due)


NOT_FOUND = ("the next date of the task's repeat rule could not be found within the bound the gateway sets on "
             "that search ({steps:,} steps of dateutil's walk: a rule whose dates are that far apart, or that never "
             "match, such as a 30 February); nothing was changed: the person marks it done in their own app")


def _after(rrulestr: Callable[..., Any], rule: str, start: datetime) -> datetime | None:
    """The rule's first date after `start`, the search bounded (`steps.bounded`: ToolError past the bound). A
    floating (or all-day) start with an UNTIL in UTC, which many clients write, is read as if in UTC (dateutil
    refuses to mix the two)."""
    from gateway_mail.plan.steps import BUDGET, TooManySteps, bounded

    def search(moment: datetime) -> datetime | None:
        try:
            return bounded(lambda: rrulestr(rule, dtstart=moment).after(moment))
        except TooManySteps:
            raise ToolError(NOT_FOUND.format(steps=BUDGET)) from None

    try:
        return search(start)
    except ValueError:
        if start.tzinfo is not None:
            raise
        following = search(start.replace(tzinfo=UTC))
        return None if following is None else following.replace(tzinfo=None)
