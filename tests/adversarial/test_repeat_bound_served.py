"""A repeating task whose rule never gives a next date (or gives it past the bound) marked done through a real
`gateway serve --http`: dateutil's search is bounded by steps, the answer says so with a sentence, nothing is
written, and the server keeps answering a second client's pings throughout and is idle after."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from gateway_mail.plan import sample as sample_plan

from gateway.testing import write_config
from tests.adversarial.organizer_attack import Server, assert_bounded, attack, settle_idle, text_of

HOSTILE = {
    # Never matches (no 30 February): dateutil walks to the year 9999, second by second day after day.
    "spin-seconds": "RRULE:FREQ=SECONDLY;UNTIL=99991231T000000Z;BYMONTH=2;BYMONTHDAY=30",
    "spin-days": "RRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30",
}


def test_a_repeating_tasks_next_date_is_searched_within_a_bound_and_said_when_not_found(tmp_path: Path) -> None:
    home = tmp_path / "home"
    tasks = home / "vdir" / "tasks" / "home"
    for uid, rule in HOSTILE.items():
        sample_plan.put(tasks, uid, sample_plan.ics("VTODO", uid, [
            "DTSTAMP:20261101T080000Z", f"SUMMARY:Spin {uid}", "STATUS:NEEDS-ACTION",
            "DUE;TZID=Europe/Paris:20261203T090000", rule]))
    sample_plan.put(tasks, "weekly", sample_plan.ics("VTODO", "weekly", [
        "DTSTAMP:20261101T080000Z", "SUMMARY:Weekly review", "STATUS:NEEDS-ACTION",
        "DUE;TZID=Europe/Paris:20261203T090000", "RRULE:FREQ=WEEKLY"]))
    (home / "vdir" / "calendars" / "personal").mkdir(parents=True)
    write_config(home, sample_plan.config(home), projects=[])
    before = {p: p.read_bytes() for p in tasks.iterdir()}
    server = Server(home, tmp_path / "stderr")
    try:
        settle_idle(server)
        seen = attack(server, [("complete_task", {"address": f"sioul:task/{uid}"}) for uid in HOSTILE]
                      + [("complete_task", {"address": "sioul:task/weekly"})])
        assert_bounded(server, seen)
    finally:
        server.stop()
    *spins, weekly = seen.answers
    for answer in spins:
        assert answer.is_error and "could not be found within the bound" in text_of(answer), text_of(answer)
        assert "marks it done in their own app" in text_of(answer)
    assert not weekly.is_error and weekly.structured_content["next"]["due"] == "2026-12-10"
    after = {p: p.read_bytes() for p in tasks.iterdir()}
    for uid in HOSTILE:  # nothing written for the rules that spin: the task open, no next file
        path = tasks / f"{uid}.ics"
        assert after[path] == before[path]
    assert len(after) == len(before) + 1  # only the weekly review's next occurrence


def test_a_strangers_event_whose_rule_never_matches_is_cut_not_walked_to_the_year_9999(tmp_path: Path) -> None:
    home = tmp_path / "home"
    calendars = home / "vdir" / "calendars" / "invitations"
    sample_plan.put(calendars, "never", sample_plan.ics("VEVENT", "never", [
        "DTSTAMP:20261101T080000Z", "SUMMARY:Never", "DTSTART:20250101T090000Z", "DURATION:PT1H",
        "RRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30"]))
    sample_plan.put(calendars, "rent", sample_plan.ics("VEVENT", "rent", [
        "DTSTAMP:20261101T080000Z", "SUMMARY:Rent", "DTSTART:20200115T090000Z", "DURATION:PT1H",
        "RRULE:FREQ=MONTHLY;BYMONTHDAY=15"]))
    (home / "vdir" / "tasks" / "home").mkdir(parents=True)
    write_config(home, sample_plan.config(home), projects=[])
    server = Server(home, tmp_path / "stderr")
    try:
        settle_idle(server)
        seen = attack(server, [("agenda", {"start": "today", "days": 60}), ("now", {}),
                               ("agenda", {"start": "2027-06-01", "days": 30})])
        assert_bounded(server, seen)
    finally:
        server.stop()
    for answer in seen.answers:
        assert not answer.is_error, text_of(answer)
    first, _now, later = seen.answers
    assert first.structured_content["repeats_cut"] == ["sioul:event/never"]
    assert later.structured_content["repeats_cut"] == ["sioul:event/never"]
    # A filtered rule that matches is expanded in full: the rent on the 15th of each month. Sixty days from today
    # hold one, two or three 15ths, by the day the agenda began (the one it answers with).
    start = date.fromisoformat(first.structured_content["start"])
    fifteenths = sum((start + timedelta(days=n)).day == 15 for n in range(first.structured_content["days"]))
    assert first.structured_content["days"] == 60 and fifteenths >= 1
    assert [e["start"][8:10] for e in first.structured_content["events"] if e["title"] == "Rent"] == [
        "15"] * fifteenths
    assert [e["start"] for e in later.structured_content["events"]] == ["2027-06-15 11:00"]
