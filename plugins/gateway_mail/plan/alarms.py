"""Reminders from the VALARMs of the person's tasks and events: when each alarm rings in a span, in their zone.

A trigger is relative to the item's start or end (RFC 5545's RELATED; a task's end is its due time, and a task with
no start rings from its due time, as most task programs read it) or absolute. An alarm that repeats (REPEAT with a
DURATION) rings again that many times, at most MAX_REPEATS of them given. A repeating event rings for each
occurrence, found through the agenda's bounded expansion (`events.expand`) over the span widened by the alarm's
reach, at most REACH on each side: an alarm set further than that from its occurrence is not looked for. A task's
alarms ring for its current occurrence only (marking it done makes the next one, with its alarms). Tasks done and
events cancelled ring no more.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date, datetime, timedelta, tzinfo
from typing import Any

from attrs import frozen

from gateway_mail import zone
from gateway_mail.plan import events as events_store
from gateway_mail.plan.vdir import EVENT, TODO, Collection, Item

MAX_REPEATS = 10
REACH = timedelta(days=31)


@frozen
class Reminder:
    """One ring of an alarm: when (in the person's zone), for which task or event, and what it says."""

    at: datetime
    item: Item
    when: str  # how the alarm is set: "15 minutes before the start", "at 2026-12-03 08:00"
    action: str
    description: str
    occurrence: datetime | None = None  # the occurrence it rings for (a repeating event's), in the person's zone


def _duration(seconds: int) -> str:
    seconds = abs(seconds)
    for unit, size in (("week", 604_800), ("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    minutes, rest = divmod(seconds, 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}" + (f" {rest} s" if rest else "") if minutes else f"{rest} s"


def how(alarm: tuple[Any, ...], kind: str) -> str:
    """The alarm's setting in words."""
    related, offset, absolute = alarm[0], alarm[1], alarm[2]
    if not related:
        return f"set for {absolute[:16].replace('T', ' ')}"
    edge = ("the start" if related == "START" else "the due time" if kind == TODO else "the end")
    if offset == 0:
        return f"at {edge}"
    return f"{_duration(offset)} {'before' if offset < 0 else 'after'} {edge}"


def _rings(first: datetime, alarm: tuple[Any, ...]) -> Iterator[datetime]:
    repeat, every = alarm[3], alarm[4]
    for number in range(min(repeat, MAX_REPEATS) + 1):
        yield first + timedelta(seconds=every * number)


def _moment(value: date | None, tz: tzinfo) -> datetime | None:
    if value is None:
        return None
    return zone.as_moment(value, tz) if isinstance(value, datetime) else zone.day_start(value, tz)


def _absolute(alarm: tuple[Any, ...], tz: tzinfo) -> datetime | None:
    try:
        return zone.as_moment(datetime.fromisoformat(alarm[2]), tz) if len(alarm[2]) > 10 else \
            zone.day_start(date.fromisoformat(alarm[2]), tz)
    except (TypeError, ValueError):
        return None


def _ring(item: Item, alarm: tuple[Any, ...], start: datetime | None, end: datetime | None, tz: tzinfo,
          occurrence: datetime | None = None) -> Iterator[Reminder]:
    related, offset = alarm[0], alarm[1]
    if not related:
        first = _absolute(alarm, tz)
    else:
        anchor = start if related == "START" else end
        anchor = anchor if anchor is not None else (end if related == "START" else start)
        first = None if anchor is None else anchor + timedelta(seconds=offset)
    if first is None:
        return
    words = how(alarm, item.kind)
    for at in _rings(first, alarm):
        yield Reminder(at, item, words, alarm[5] or "DISPLAY", alarm[6], occurrence)


def of_tasks(items: Iterable[Item], begin: datetime, finish: datetime, tz: tzinfo) -> list[Reminder]:
    """The rings of every open task's alarms within [begin, finish)."""
    found = []
    for item in items:
        if item.kind != TODO or item.done or not item.alarms:
            continue
        start, due = _moment(item.start, tz), _moment(item.due, tz)
        for alarm in item.alarms:
            found += [r for r in _ring(item, alarm, start, due, tz) if begin <= r.at < finish]
    return found


def of_events(events: Collection, begin: datetime, finish: datetime, tz: tzinfo,
              deadline: Any = None) -> tuple[list[Reminder], list[Item]]:
    """The rings of every event's alarms within [begin, finish), each occurrence of a repeating one; and the
    repeating events whose repeats were cut in that search (as the agenda says them)."""
    found: list[Reminder] = []
    repeating = []
    for item in events.items:
        if item.kind != EVENT or item.status == "CANCELLED" or not item.alarms:
            continue
        relative = [a for a in item.alarms if a[0]]
        for alarm in (a for a in item.alarms if not a[0]):  # an absolute trigger rings once, whatever the repeats
            found += [r for r in _ring(item, alarm, None, None, tz) if begin <= r.at < finish]
        if not relative:
            continue
        if item.recurring:
            repeating.append(item)
            continue
        start, end = _moment(item.start, tz), _moment(item.end, tz)
        for alarm in relative:
            found += [r for r in _ring(item, alarm, start, end, tz) if begin <= r.at < finish]
    cut: list[Item] = []
    if repeating:
        wanted = {item.uid for item in repeating}
        occurrences, cut_items = events_store.expand(events, begin - REACH, finish + REACH, tz, deadline)
        cut = [item for item in cut_items if item.uid in wanted]
        for occurrence in occurrences:
            if occurrence.item.uid not in wanted:
                continue
            for alarm in (a for a in occurrence.item.alarms if a[0]):
                found += [r for r in _ring(occurrence.item, alarm, occurrence.start, occurrence.end, tz,
                                           occurrence.start) if begin <= r.at < finish]
    return found, cut
