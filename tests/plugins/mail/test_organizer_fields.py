"""add_task's description, start and repeat, add_event's repeat, location and description: written as todoman and
khal write them, read back by the real todoman and khal (from PyPI, as the other real-component tests), and what an
agent may not write refused before anything is written."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import icalendar
import pytest

from tests.plugins.mail.test_plan_real_components import _gateway, _khal, _run, _todoman


@pytest.fixture
def home(gateway_home: Path):
    tasks, calendars = gateway_home / "tasks", gateway_home / "calendars"
    (tasks / "home").mkdir(parents=True)
    (calendars / "personal").mkdir(parents=True)
    return gateway_home, tasks, calendars


def _files(*roots: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for root in roots for p in root.rglob("*") if p.is_file()}


def test_a_task_with_notes_a_start_and_a_repeat_is_read_by_todoman_which_follows_its_rule(home) -> None:
    gateway_home, tasks, calendars = home
    served = _gateway(gateway_home, tasks, calendars)
    added = served.call("add_task", {"title": "Water the lemon tree", "start": "2026-12-07 08:00",
                                     "due": "2026-12-07 20:00", "repeat": "RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=10",
                                     "description": "Half a can.\nNot on frost days."})
    assert not added.is_error, added.text
    assert added.data["repeat"] == "FREQ=WEEKLY;COUNT=10;BYDAY=MO" and added.data["start"] == "2026-12-07 08:00"
    assert "Repeats" not in added.text or "FREQ=WEEKLY" in added.text
    written = (tasks / added.data["file"]).read_bytes()
    for line in (b"DTSTART;TZID=Europe/Paris:20261207T080000", b"DUE;TZID=Europe/Paris:20261207T200000",
                 b"RRULE:FREQ=WEEKLY;COUNT=10;BYDAY=MO", b"DESCRIPTION:Half a can.\\nNot on frost days."):
        assert line in written  # each on its one property line, the line break escaped as iCalendar does

    config = _todoman(gateway_home, tasks)
    rows = json.loads(_run(gateway_home, "todo", "--config", str(config), "--porcelain", "list"))
    [row] = [r for r in rows if r["summary"] == "Water the lemon tree"]
    assert row["recurring"] is True and row["description"] == "Half a can.\nNot on frost days."
    assert row["start"] == datetime.fromisoformat("2026-12-07T08:00+01:00").timestamp()

    # todoman marks it done itself: it reads our RRULE and makes the next one a week later.
    _run(gateway_home, "todo", "--config", str(config), "done", str(row["id"]))
    rows = json.loads(_run(gateway_home, "todo", "--config", str(config), "--porcelain", "list"))
    [following] = [r for r in rows if r["summary"] == "Water the lemon tree"]
    assert following["start"] == datetime.fromisoformat("2026-12-14T08:00+01:00").timestamp()
    assert following["due"] == datetime.fromisoformat("2026-12-14T20:00+01:00").timestamp()


def test_a_repeating_event_with_a_place_and_notes_is_read_by_khal(home) -> None:
    gateway_home, tasks, calendars = home
    served = _gateway(gateway_home, tasks, calendars)
    added = served.call("add_event", {"title": "Choir", "start": "2026-12-03 19:00", "end": "2026-12-03 21:00",
                                      "location": "Salle des fêtes, 3 place du Marché", "repeat": "FREQ=WEEKLY",
                                      "description": "Bring the Rutter score."})
    assert not added.is_error, added.text
    event = icalendar.Calendar.from_ical((calendars / added.data["file"]).read_bytes()).walk("VEVENT")[0]
    assert event["RRULE"].to_ical() == b"FREQ=WEEKLY" and str(event["DESCRIPTION"]) == "Bring the Rutter score."
    config = _khal(gateway_home, calendars)
    shown = _run(gateway_home, "khal", "-c", str(config), "list", "--format",
                 "{start} {title} [{location}] {description}", "2026-12-03", "21d")
    for day in ("2026-12-03", "2026-12-10", "2026-12-17"):
        assert f"{day} 19:00 Choir [Salle des fêtes, 3 place du Marché] Bring the Rutter score." in shown
    agenda = served.call("agenda", {"start": "2026-12-03", "days": 21})
    assert [e["start"] for e in agenda.data["events"] if e["title"] == "Choir"] == [
        "2026-12-03 19:00", "2026-12-10 19:00", "2026-12-17 19:00"]

    # A whole-day event's UNTIL is a date, a timed one's a time in UTC (the end of the day given, in Paris).
    yearly = served.call("add_event", {"title": "Ada's birthday", "start": "2026-12-10", "repeat":
                                       "FREQ=YEARLY;UNTIL=20301210"})
    timed = served.call("add_event", {"title": "Stand-up", "start": "2026-12-07 09:00", "repeat":
                                      "FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR;UNTIL=20261211"})
    assert yearly.data["repeat"] == "FREQ=YEARLY;UNTIL=20301210"
    assert timed.data["repeat"] == "FREQ=DAILY;UNTIL=20261211T225959Z;BYDAY=MO,TU,WE,TH,FR"
    shown = _run(gateway_home, "khal", "-c", str(config), "list", "--format", "{start} {title}", "2026-12-07", "7d")
    assert [line for line in shown.splitlines() if "Stand-up" in line] == [
        f"2026-12-{day:02d} 09:00 Stand-up" for day in range(7, 12)]


@pytest.mark.parametrize(("tool", "arguments", "said"), [
    ("add_task", {"title": "t", "due": "2026-12-03", "repeat": "FREQ=HOURLY"}, "at most once a day"),
    ("add_task", {"title": "t", "due": "2026-12-03", "repeat": "FREQ=SECONDLY;COUNT=1000000000"}, "FREQ must be"),
    ("add_task", {"title": "t", "due": "2026-12-03", "repeat": "FREQ=DAILY;BYHOUR=1,2,3"}, "BYHOUR"),
    ("add_task", {"title": "t", "due": "2026-12-03", "repeat": "FREQ=DAILY;COUNT=5000"}, "COUNT must be"),
    ("add_task", {"title": "t", "due": "2026-12-03", "repeat": "FREQ=DAILY;INTERVAL=0"}, "INTERVAL must be"),
    ("add_task", {"title": "t", "due": "2026-12-03", "repeat": "FREQ=DAILY;COUNT=3;UNTIL=20261231"}, "not both"),
    ("add_task", {"title": "t", "due": "2026-12-03", "repeat": "FREQ=DAILY;UNTIL=20261130"}, "before the start"),
    ("add_task", {"title": "t", "due": "2026-12-03", "repeat": "FREQ=DAILY;UNTIL=29991231"}, "on or before"),
    ("add_task", {"title": "t", "due": "2026-12-03", "repeat": "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"},
     "gives no date"),
    ("add_task", {"title": "t", "due": "2026-12-03", "repeat": "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30"},
     "gives no date"),
    ("add_task", {"title": "t", "due": "2026-12-03", "repeat": "FREQ=WEEKLY\nATTENDEE:mailto:x@example.com"},
     "one line"),
    ("add_task", {"title": "t", "due": "2026-12-03", "repeat": "every monday"}, "FREQ must be"),
    ("add_task", {"title": "t", "due": "2026-12-03", "repeat": "FREQ=WEEKLY;COUNT=x"}, "cannot be read"),
    ("add_task", {"title": "t", "repeat": "FREQ=WEEKLY"}, "needs a start or a due date"),
    ("add_task", {"title": "t", "start": "2026-12-05", "due": "2026-12-03"}, "after the due date"),
    ("add_task", {"title": "t", "start": "2099-12-05 25:00"}, ""),
    ("add_task", {"title": "t", "description": "line\r\nSTATUS:COMPLETED"}, "control character"),
    ("add_task", {"title": "t", "description": "a\u2028b"}, "control character"),
    ("add_task", {"title": "t", "description": "a\x00b"}, "control character"),
    ("add_event", {"title": "e", "start": "2026-12-03 09:00", "repeat": "FREQ=MINUTELY"}, "FREQ must be"),
    ("add_event", {"title": "e", "start": "2026-12-03 09:00", "location": "a\nb"}, "one line"),
    ("add_event", {"title": "e", "start": "2026-12-03 09:00", "description": "x\x1bEND:VEVENT"}, "control character"),
    ("add_event", {"title": "e\x85f", "start": "2026-12-03 09:00"}, "one line"),
])
def test_what_may_not_be_written_is_refused_before_anything_is(home, tool, arguments, said) -> None:
    gateway_home, tasks, calendars = home
    before = _files(tasks, calendars)
    answer = _gateway(gateway_home, tasks, calendars).call(tool, arguments)
    assert answer.is_error and said in answer.text, answer.text
    assert _files(tasks, calendars) == before
