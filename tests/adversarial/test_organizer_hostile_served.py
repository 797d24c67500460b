"""Calendars, task lists and contact cards from strangers, played through a real `gateway serve` (HTTP).

A calendar server adds invitations on its own and a sync brings whatever a correspondent sent: an event repeating
every second for a billion times or every minute forever, thousands of EXDATE and RDATE, a DURATION of a million
days, calendars and task lists of 1 GB and 4 GB, a card with a 30 MB photo, a 64 MB card on one line, a 512 MB
card file, a card vobject cannot read. Each answer is checked, with the server's peak memory (at most 300 MB over
the idle server), a second client's ping (a tools/list) answered within two seconds throughout, and no work left
running once the answers are given. The big files are sparse: what the bounds read of them is real, the rest is a
hole.
"""

from __future__ import annotations

import base64
import os
import sqlite3
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gateway.api.context import home_environment
from gateway.testing import write_config
from tests.adversarial.organizer_attack import Server, assert_bounded, attack, settle_idle, sparse, text_of
from tests.forkserver import gateway_command

NOW = datetime.now(UTC)
TODAY = NOW.strftime("%Y%m%d")
DAY = NOW.date().isoformat()  # the day the calendars were written for, asked by its date: a run that crosses
# midnight still asks for that day, not the next


def _ics(kind: str, uid: str, *lines: str) -> bytes:
    body = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//example.org//attack//EN", f"BEGIN:{kind}", f"UID:{uid}",
            "DTSTAMP:20260101T000000Z", *lines, f"END:{kind}", "END:VCALENDAR"]
    return ("\r\n".join(body) + "\r\n").encode()


def _put(folder: Path, name: str, data: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)
    return folder / name


def _calendars(root: Path) -> None:
    home = root / "home"
    _put(home, "plain.ics", _ics("VEVENT", "plain", "SUMMARY:Dentist", f"DTSTART:{TODAY}T230000Z",
                                 f"DTEND:{TODAY}T233000Z"))
    _put(home, "secondly.ics", _ics("VEVENT", "secondly", "SUMMARY:Every second", "CATEGORIES:project:alpha",
                                    f"DTSTART:{TODAY}T000000Z", f"DTEND:{TODAY}T000001Z",
                                    "RRULE:FREQ=SECONDLY;COUNT=1000000000"))
    _put(home, "minutely.ics", _ics("VEVENT", "minutely", "SUMMARY:Every minute since 2020",
                                    "DTSTART:20200101T000000Z", "DTEND:20200101T000030Z", "RRULE:FREQ=MINUTELY"))
    first = NOW.replace(hour=8, minute=0, second=0, microsecond=0)
    exdates = [f"EXDATE:{(datetime(1990, 1, 1, 8, tzinfo=UTC) + timedelta(days=d)):%Y%m%dT%H%M%SZ}"
               for d in range(15_000)]
    rdates = [f"RDATE:{(first + timedelta(minutes=10 * n)):%Y%m%dT%H%M%SZ}" for n in range(15_000)]
    _put(home, "manydates.ics", _ics("VEVENT", "manydates", "SUMMARY:Many dates", f"DTSTART:{first:%Y%m%dT%H%M%SZ}",
                                     "DURATION:PT5M", "RRULE:FREQ=DAILY", *rdates, *exdates))
    _put(home, "forever.ics", _ics("VEVENT", "forever", "SUMMARY:Forever meeting", f"DTSTART:{TODAY}T090000Z",
                                   "DURATION:P999999999D"))
    _put(home, "ancient.ics", _ics("VEVENT", "ancient", "SUMMARY:Since year one", "DTSTART;VALUE=DATE:00010101",
                                   "DURATION:P999999999D", "RRULE:FREQ=YEARLY"))
    events = b"".join(
        b"BEGIN:VEVENT\r\nUID:big-%d\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:Big calendar event %d\r\n"
        b"DTSTART:%sT1%d0000Z\r\nDURATION:PT1H\r\nEND:VEVENT\r\n" % (n, n, TODAY.encode(), n) for n in range(3))
    head = b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//example.org//attack//EN\r\n" + events
    sparse(home / "big-1g.ics", head, 1 << 30, b"\r\nEND:VCALENDAR\r\n")
    sparse(home / "big-4g.ics", head.replace(b"Big calendar event", b"Huge calendar event").replace(
        b"UID:big-", b"UID:huge-"), 4 << 30)


def _tasks(root: Path) -> None:
    inbox = root / "inbox"
    _put(inbox, "plants.ics", _ics("VTODO", "plants", "SUMMARY:Water the plants", "STATUS:NEEDS-ACTION"))
    _put(inbox, "ages.ics", _ics("VTODO", "ages", "SUMMARY:Task of all ages", "DTSTART;VALUE=DATE:00010101",
                                 "DUE;VALUE=DATE:99991231", "DURATION:P999999999D"))
    sparse(inbox / "big-task.ics", _ics("VTODO", "big-task", "SUMMARY:Task in a big file", "STATUS:NEEDS-ACTION",
                                        "DESCRIPTION:padding follows").removesuffix(b"END:VCALENDAR\r\n"), 512 << 20)


def _cards(root: Path) -> None:
    book = root / "book"
    _put(book, "ada.vcf", b"BEGIN:VCARD\r\nVERSION:3.0\r\nUID:ada\r\nFN:Ada Example\r\nEMAIL:ada@example.com\r\n"
                          b"END:VCARD\r\n")
    photo = base64.b64encode(os.urandom(30_000_000 * 3 // 4))
    folded = b"\r\n ".join(photo[i:i + 74] for i in range(0, len(photo), 74))
    _put(book, "photo.vcf", b"BEGIN:VCARD\r\nVERSION:3.0\r\nUID:photo\r\nFN:Photo Person\r\n"
                            b"EMAIL:photo@example.org\r\nPHOTO;ENCODING=b;TYPE=JPEG:" + folded +
                            b"\r\nNOTE:written after the photo\r\nEND:VCARD\r\n")
    sparse(book / "oneline.vcf", b"BEGIN:VCARD VERSION:3.0 FN:One Line NOTE:", 64 << 20)
    sparse(book / "huge.vcf", b"BEGIN:VCARD\r\nVERSION:3.0\r\nUID:huge-card\r\nFN:Huge Card\r\n"
                              b"EMAIL:huge@example.net\r\nTEL:+1 555 0100\r\nORG:Example Org\r\nNOTE:", 512 << 20)
    _put(book, "broken.vcf", b"BEGIN:VCARD\r\nVERSION:3.0\r\nUID:broken\r\nFN:Broken Card\r\n"
                             b"NOTE;ENCODING=b:!!!this is no base64\r\nEND:VCARD\r\n")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    home = tmp_path_factory.mktemp("organizer") / "home"
    home.mkdir()
    _calendars(home / "vdir" / "calendars")
    _tasks(home / "vdir" / "tasks")
    _cards(home / "contacts")
    write_config(home, {"gateway": {"plugins": ["mail"]}, "plugins": {"mail": {
        "tasks": str(home / "vdir" / "tasks"), "calendars": str(home / "vdir" / "calendars"),
        "contacts": str(home / "contacts"), "timezone": "UTC"}}},
        projects=[{"id": "alpha", "name": "Alpha", "ai": True}])
    server = Server(home, home.parent / "stderr")
    try:
        settle_idle(server)
        yield server
    finally:
        server.stop()
        for big in home.rglob("*"):  # the sparse files take no room, but leave nothing behind
            if big.is_file() and big.stat().st_size > 1 << 20:
                big.unlink()


def test_a_repeating_event_is_cut_at_a_bounded_number_of_occurrences_and_every_plan_answer_says_so(served):
    seen = attack(served, [("agenda", {"start": DAY, "days": 30}), ("now", {}), ("list_projects", {}),
                           ("read_project", {"address": "sioul:project/alpha"})])
    agenda, now, projects, project = seen.answers
    for answer in seen.answers:
        assert not answer.is_error, text_of(answer)
        assert "were cut" in text_of(answer)
    cut = agenda.structured_content["repeats_cut"]
    assert {"sioul:event/secondly", "sioul:event/minutely", "sioul:event/manydates", "sioul:event/ancient"} <= set(cut)
    assert project.structured_content["repeats_cut"] == ["sioul:event/secondly"]
    assert "sioul:event/secondly" in now.structured_content["repeats_cut"]
    assert "sioul:event/secondly" in projects.structured_content["repeats_cut"]
    shown = agenda.structured_content["events"]
    per_event: dict[str, int] = {}
    for event in shown:
        per_event[event["address"]] = per_event.get(event["address"], 0) + 1
    assert "sioul:event/plain" in per_event  # the person's own events are still there
    assert len(shown) <= 1000  # the agenda's own bound on what it lists
    assert_bounded(served, seen)


def test_huge_dates_and_durations_are_clamped_and_a_huge_new_event_is_refused_with_a_sentence(served):
    seen = attack(served, [("agenda", {"start": DAY, "days": 3}), ("now", {}), ("find", {"query": "Forever"}),
                           ("add_event", {"title": "Forever", "start": "0001-01-01", "end": "9999-12-31"}),
                           ("agenda", {"start": "9999-12-30", "days": 7}), ("list_tasks", {"view": "all"}),
                           ("find", {"query": "ages"}), ("add_task", {"title": "Late", "due": "9999-12-31"})])
    agenda, now, found, added, far, tasks, ages, late = seen.answers
    for answer in (agenda, now, found, tasks, ages):
        assert not answer.is_error, text_of(answer)
    assert "9998-12-31" in text_of(tasks) and "sioul:task/ages" in text_of(ages)  # a due date clamped, not a failure
    assert "Forever meeting" in text_of(agenda) and "sioul:event/forever" in text_of(found)
    assert added.is_error and "outside the days the plan takes" in text_of(added)
    assert far.is_error and "outside the days the plan takes" in text_of(far)
    assert late.is_error and "outside the days the plan takes" in text_of(late)
    assert_bounded(served, seen)


def test_calendars_and_task_lists_of_a_gigabyte_and_more_are_read_by_their_summary_only(served):
    seen = attack(served, [("agenda", {"start": DAY, "days": 2}), ("list_tasks", {"view": "all"}),
                           ("complete_task", {"address": "sioul:task/big-task"})])
    agenda, tasks, complete = seen.answers
    assert not agenda.is_error and not tasks.is_error
    assert "Big calendar event 2" in text_of(agenda) and "Huge calendar event 0" in text_of(agenda)
    assert agenda.structured_content["summarized_files"] == 3  # and the one of 30,000 RDATE and EXDATE lines
    assert "read by summary only" in text_of(agenda)
    assert "Task in a big file" in text_of(tasks) and "Water the plants" in text_of(tasks)
    assert tasks.structured_content["summarized_files"] == 1
    assert complete.is_error and "marks it done in their own app" in text_of(complete)
    assert_bounded(served, seen)


def test_cards_with_a_huge_photo_or_line_are_read_by_their_summary_and_a_broken_one_is_only_counted(served):
    seen = attack(served, [("search_contacts", {"query": "Photo"}), ("search_contacts", {"query": "Huge"}),
                           ("search_contacts", {"query": "Ada"}), ("search_contacts", {"query": "Broken"})])
    photo, huge, ada, broken = seen.answers
    for answer in seen.answers:
        assert not answer.is_error, text_of(answer)
    assert "photo@example.org" in text_of(photo) and "written after the photo" in text_of(photo)
    assert "huge@example.net" in text_of(huge) and "Example Org" in text_of(huge)
    assert "ada@example.com" in text_of(ada)
    assert "Broken Card" not in text_of(broken)
    assert_bounded(served, seen)


def test_doctor_names_the_files_read_by_their_summary_and_those_that_could_not_be_read(served):
    seen = attack(served, [("agenda", {}), ("list_tasks", {}), ("search_contacts", {"query": "Ada"})])
    assert not any(answer.is_error for answer in seen.answers)
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(served.home)}
    doctor = subprocess.run(gateway_command("doctor"), env=env, capture_output=True, text=True,
                            timeout=110)
    said = doctor.stdout
    warnings = [line for line in said.splitlines() if line.startswith("WARNING  mail:")]
    for name in ("big-1g.ics", "big-4g.ics", "big-task.ics", "photo.vcf", "oneline.vcf", "huge.vcf"):
        assert any(name in line and "read by summary only" in line for line in warnings), (name, said)
    assert any("broken.vcf" in line and "could not be read as vCard" in line for line in warnings), said
    assert not any("plain.ics" in line or "ada.vcf" in line for line in warnings)


RULES = 12


def test_an_expansion_stopped_by_its_deadline_stops_and_keeps_what_it_did_for_the_next_call(tmp_path):
    # Rules within the walk's bound (an hour for five years and more: some 48,000 steps each from their start),
    # enough of them that their first expansion takes longer than the call's second even on an idle machine (six
    # took just under a second on an idle machine once the expansion got quicker: twelve).
    home = tmp_path / "home"
    start = (NOW - timedelta(days=2_000)).strftime("%Y%m%d")
    for number in range(RULES):
        _put(home / "vdir" / "calendars" / "home", f"hourly-{number}.ics", _ics(
            "VEVENT", f"hourly-{number}", f"SUMMARY:Hourly {number}", f"DTSTART:{start}T00{number:02d}00Z",
            "DURATION:PT1M", "RRULE:FREQ=HOURLY"))
    (home / "vdir" / "tasks" / "inbox").mkdir(parents=True)
    config = {"gateway": {"plugins": ["mail"], "call_timeout": 1}, "plugins": {"mail": {
        "tasks": str(home / "vdir" / "tasks"), "calendars": str(home / "vdir" / "calendars"), "timezone": "UTC"}}}
    write_config(home, config)
    server = Server(home, tmp_path / "stderr")
    try:
        settle_idle(server)
        first = attack(server, [("agenda", {"start": "today", "days": 1})])
        assert first.answers[0].is_error and "took longer than 1 s" in text_of(first.answers[0])
        assert_bounded(server, first, settle=2.0)  # the worker stopped soon after the answer, not minutes later
        # What it expanded before it stopped was kept beside the calendars' cache, for the next call.
        caches = list(home.rglob("plan-cache-*.sqlite"))
        kept = sum(sqlite3.connect(path).execute("SELECT count(*) FROM kept").fetchone()[0] for path in caches)
        assert kept >= 1
        config["gateway"]["call_timeout"] = 60  # read again on the next call
        write_config(home, config)
        then = attack(server, [("agenda", {"start": "today", "days": 1})])
        answer = then.answers[0]
        assert not answer.is_error, text_of(answer)
        assert f"Hourly {RULES - 1}" in text_of(answer) and "were cut" not in text_of(answer)
        assert_bounded(server, then)
    finally:
        server.stop()
