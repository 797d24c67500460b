"""Calendar and task files from strangers, read without a server: one file's failure is one file's, big files are
read by their summary, times are clamped, and a repeating rule's walk is reckoned before dateutil is asked."""

from __future__ import annotations

import os
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from gateway_mail import contentlines
from gateway_mail.plan import events, vdir


def _ics(uid: str, *lines: str, kind: str = "VEVENT") -> bytes:
    body = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//example.org//test//EN", f"BEGIN:{kind}", f"UID:{uid}",
            "DTSTAMP:20260101T000000Z", *lines, f"END:{kind}", "END:VCALENDAR"]
    return ("\r\n".join(body) + "\r\n").encode()


@pytest.fixture
def calendars(tmp_path: Path):
    vdir.forget()
    events._expanded.clear()
    root = tmp_path / "calendars"
    (root / "home").mkdir(parents=True)
    yield root, tmp_path / "cache"
    vdir.forget()
    events._expanded.clear()


def test_any_failure_reading_a_file_makes_that_file_unreadable_until_it_changes_even_in_a_new_process(
        calendars, monkeypatch) -> None:
    root, cache = calendars
    (root / "home" / "good.ics").write_bytes(_ics("good", "SUMMARY:Good", "DTSTART:20261201T090000Z"))
    bad = root / "home" / "bad.ics"
    bad.write_bytes(_ics("bad", "SUMMARY:Bad", "DTSTART:20261201T090000Z"))
    real, parsed = vdir.items_of, []

    def failing(raw, collection, path):
        parsed.append(Path(path).name)
        if Path(path).name == "bad.ics":
            raise RecursionError("a parser gone wrong in a way nobody listed")
        return real(raw, collection, path)

    monkeypatch.setattr(vdir, "items_of", failing)
    found = vdir.read(root, cache)
    assert [i.uid for i in found.items] == ["good"] and found.unreadable == 1
    monkeypatch.setattr(vdir, "FULL_CHECK", 0.0)  # every file looked at again
    parsed.clear()
    assert vdir.read(root, cache).unreadable == 1 and parsed == []  # not tried again: it did not change
    vdir.forget()  # a new process: the disk remembers
    assert vdir.read(root, cache).unreadable == 1 and parsed == []
    assert vdir.problems_of(cache, root) == [(str(bad), vdir.UNREADABLE)]
    bad.write_bytes(bad.read_bytes().replace(b"Bad", b"Better"))
    os.utime(bad, ns=(time.time_ns(), time.time_ns() + 3_000_000_000))
    monkeypatch.setattr(vdir, "items_of", real)
    again = vdir.read(root, cache)
    assert again.unreadable == 0 and {i.summary for i in again.items} == {"Good", "Better"}
    assert vdir.problems_of(cache, root) == []


def test_huge_durations_and_dates_are_clamped_where_no_sum_overflows() -> None:
    forever, = vdir.items_of(_ics("forever", "DTSTART:20261201T090000Z", "DURATION:P999999999D"), "home", "/x")
    assert forever.end == datetime(9998, 12, 31, 9, 0, tzinfo=forever.start.tzinfo)
    ancient, = vdir.items_of(_ics("ancient", "DTSTART;VALUE=DATE:00010101", "DURATION:-P999999999D",
                                  "DUE;VALUE=DATE:99991231", kind="VTODO"), "home", "/x")
    assert ancient.start == vdir.EARLIEST and ancient.due == vdir.LATEST
    assert ancient.start - timedelta(days=365) >= date.min and ancient.due + timedelta(days=365) <= date.max


def test_a_file_over_the_bound_is_read_by_its_summary_its_attachment_passed_over(calendars) -> None:
    root, cache = calendars
    attachment = b"\r\n ".join([b"A" * 74] * 40_000)  # some 3 MB of base64, folded
    path = root / "home" / "invitation.ics"
    path.write_bytes(_ics("invited", "SUMMARY:Board meeting", "DTSTART:20261201T090000Z",
                          "ATTACH;ENCODING=BASE64;VALUE=BINARY:" + attachment.decode(), "LOCATION:Room 4"))
    text, summary = vdir.bounded_bytes(path)
    assert summary and b"ATTACH" not in text and len(text) < 2_000
    found = vdir.read(root, cache)
    item, = found.items
    assert (item.summary, item.location) == ("Board meeting", "Room 4") and found.summarized == 1
    assert vdir.problems_of(cache, root) == [(str(path), vdir.SUMMARY_ONLY)]


def test_a_file_of_too_many_lines_is_read_by_its_summary_of_a_bounded_number_of_lines(calendars) -> None:
    root, _cache = calendars
    path = root / "home" / "dates.ics"
    path.write_bytes(_ics("dates", "DTSTART:20261201T090000Z", "RRULE:FREQ=DAILY",
                          *[f"EXDATE:{date(2000, 1, 1) + timedelta(days=n):%Y%m%d}T090000Z" for n in range(9_000)]))
    assert path.stat().st_size < vdir.MAX_FILE
    text, summary = vdir.bounded_bytes(path)
    assert summary and text.count(b"\n") <= vdir.MAX_LINES + 36  # and the calendar's own few lines around
    assert b"END:VEVENT" in text and text.rstrip().endswith(b"END:VCALENDAR")  # cut, and closed


def test_content_lines_keep_a_fold_that_falls_across_two_chunks_and_drop_a_line_too_long(tmp_path) -> None:
    path = tmp_path / "card.vcf"
    head = b"BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Fold Across\r\nNOTE:"
    filler = b"x" * (contentlines.CHUNK - len(head) - 2)
    path.write_bytes(head + filler + b"\r\n tail of the note\r\nTITLE:" + b"y" * 5_000 + b"\r\nEND:VCARD\r\n")
    found = contentlines.reduced(path, limit=1 << 20, line_limit=contentlines.CHUNK + 1_000, unit_limit=1 << 20,
                                 units=10, container=None, wanted=lambda _c, _n: True,
                                 kept_components=frozenset((b"VCARD",)))
    note = [line for line in found.lines if line.startswith(b"NOTE:")]
    assert len(note) == 1 and note[0].endswith(b"\r\n tail of the note") and found.whole
    short = contentlines.reduced(path, limit=1 << 20, line_limit=1_000, unit_limit=1 << 20, units=10,
                                 container=None, wanted=lambda _c, _n: True, kept_components=frozenset((b"VCARD",)))
    assert [line.split(b":")[0] for line in short.lines] == [b"BEGIN", b"VERSION", b"FN", b"END"]
    cut = contentlines.reduced(path, limit=len(head) + 10, line_limit=1_000, unit_limit=1 << 20, units=10,
                               container=None, wanted=lambda _c, _n: True, kept_components=frozenset((b"VCARD",)))
    assert cut.lines == [b"BEGIN:VCARD", b"VERSION:3.0", b"FN:Fold Across", b"END:VCARD"] and not cut.whole


def test_the_walk_of_a_rule_is_reckoned_from_its_frequency_interval_lists_count_and_until() -> None:
    from icalendar import vRecur

    start = datetime(2026, 1, 1, tzinfo=UTC)
    stop = start + timedelta(days=28)

    def walk(rule: str, begin: datetime = start) -> float:
        return events._walk(vRecur.from_ical(rule), begin, stop)

    assert walk("FREQ=SECONDLY;COUNT=1000000000") > events.MAX_WALK
    assert walk("FREQ=SECONDLY;COUNT=50") == 50
    assert walk("FREQ=MINUTELY;INTERVAL=30") < 2_000
    assert walk("FREQ=DAILY;BYHOUR=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23;"
                "BYMINUTE=0,15,30,45") > 2_000
    assert walk("FREQ=YEARLY", datetime(1900, 1, 1, tzinfo=UTC)) < events.MAX_WALK  # a birthday since 1900
    assert walk("FREQ=MINUTELY;UNTIL=20260101T010000Z") < 100
