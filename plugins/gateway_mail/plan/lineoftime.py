"""A project's line of time, for its page: its dated things newest first (tasks done or due, events, notes by
their date, mail by day), a few lines.

Each piece comes from what the page already gives, so the gate has looked at every one of them: tasks through
the same owners and verdicts as the plan, events through the agenda's span (gated there), notes as the notes
section shows them, mail as counts of the messages the page may count. A thing also in a closed project is in
no line; what the line alone would have shown of it (a task done, a past event) is counted as left out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import date, datetime, timedelta, tzinfo
from typing import Any

from gateway import Context
from gateway_mail import zone
from gateway_mail.plan import vdir
from gateway_mail.plan.vdir import Collection, Item

PAST_DAYS = 90  # how far back a task done or an event is in the line
AHEAD_DAYS = 14  # how far ahead a due task or an event is
ENTRIES = 12
FIELD_LIMIT = 200


def _shown(value: date, tz: tzinfo) -> str:
    if isinstance(value, datetime):
        return zone.as_moment(value, tz).strftime("%Y-%m-%d %H:%M")
    return value.isoformat()


def tasks_of(ctx: Context, tasks: Collection, project_id: str, owners: Callable[[Item], frozenset[str]],
             allows: Callable[[frozenset[str]], bool], now: datetime, tz: tzinfo) -> tuple[list[dict[str, Any]], int]:
    """The project's tasks done in the last PAST_DAYS and open ones due up to AHEAD_DAYS ahead; kept done ones
    counted (kept open ones are counted by the page's task list already)."""
    since, until = (now - timedelta(days=PAST_DAYS)).date(), (now + timedelta(days=AHEAD_DAYS)).date()
    found, kept = [], 0
    for item in vdir.walk(tasks.items, vdir.TODO):
        when, what = (item.completed, "task done") if item.done else (item.due, "task due")
        if when is None or project_id not in owners(item):  # owners: remembered per collection, cheap
            continue
        day = zone.as_moment(when, tz).date() if isinstance(when, datetime) else when
        if not since <= day <= until:
            continue
        if not allows(owners(item)):
            kept += 1 if item.done else 0
            continue
        found.append({"when": _shown(when, tz), "what": what, "title": ctx.one_line(item.summary, FIELD_LIMIT),
                      "address": item.address})
    return found, kept


def events_of(events: Iterable[Mapping[str, Any]], now: datetime) -> list[dict[str, Any]]:
    """Occurrences already gated (past ones, and the page's next ones up to AHEAD_DAYS ahead)."""
    until = (now + timedelta(days=AHEAD_DAYS)).strftime("%Y-%m-%d %H:%M")
    found = {(e["address"], e["start"]): {"when": e["start"], "what": "event", "title": e["title"],
                                          "address": e["address"]}
             for e in events if e["start"] <= until}  # one going on now is in both spans: once here
    return list(found.values())


def notes_of(notes: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The notes the page shows (gated there), by the date their file last changed."""
    return [{"when": n["date"], "what": "note", "title": n["title"], "address": n["address"]}
            for n in notes if n.get("date")]


def mail_of(per_day: Mapping[str, int]) -> list[dict[str, Any]]:
    return [{"when": day, "what": "mail", "count": count} for day, count in per_day.items() if count]


def line(*parts: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every part's entries, newest first (the furthest ahead at the top), at most ENTRIES."""
    entries = [entry for part in parts for entry in part]
    entries.sort(key=lambda e: (e["when"], e["what"], e.get("address", "")), reverse=True)
    return entries[:ENTRIES]


def lines_of(entries: list[dict[str, Any]]) -> list[str]:
    lines = ["Line of time, newest first:" if entries else "Line of time: nothing dated."]
    for entry in entries:
        if entry["what"] == "mail":
            lines.append(f"  {entry['when']}  mail: {entry['count']} message{'s' if entry['count'] != 1 else ''}")
        else:
            lines.append(f"  {entry['when']}  {entry['what']}: {entry['title']}  ({entry['address']})")
    return lines
