"""The scan of a plain task or event file (`vdir.simple`) gives exactly what icalendar's whole reading gives: on every
file the benchmark's generator, the samples and the demo write, on files built at random from plain and odd lines,
and it leaves every unusual file (folds, escapes, quotes, zones, two components, a value icalendar refuses) to
icalendar."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import icalendar
import pytest
from gateway_mail.demo import write_organizer
from gateway_mail.plan import sample, vdir
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def _by_icalendar(raw: bytes, path: str) -> tuple[str, list]:
    """What icalendar's whole reading makes of a file: its items as the disk cache keeps them, or its failure."""
    try:
        calendar = icalendar.Calendar.from_ical(raw)
    except Exception as error:  # noqa: BLE001 (any failure is the file's outcome)
        return "unreadable", [type(error).__name__]
    items = [vdir._item(c, "list", path) for c in calendar.walk() if c.name in (vdir.TODO, vdir.EVENT)]
    return "read", [vdir.to_row(item) for item in items if item is not None]


def _same(raw: bytes, path: str = "/x/list/file.ics") -> bool:
    """True when the scan took the file (and then gave what icalendar gives), False when it left it to icalendar."""
    scanned = vdir.simple(raw, "list", path)
    if scanned is None:
        return False
    assert ("read", [vdir.to_row(item) for item in scanned]) == _by_icalendar(raw, path), raw
    assert scanned == [i for i in (vdir._item(c, "list", path) for c in icalendar.Calendar.from_ical(raw).walk()
                                   if c.name in (vdir.TODO, vdir.EVENT)) if i is not None]
    return True


def test_every_file_the_bench_the_samples_and_the_demo_write_reads_the_same_by_scan(tmp_path: Path) -> None:
    sample.generate(tmp_path / "bench", 800, 200)  # the benchmark's own generator and seed
    sample.world(tmp_path / "world", "canaryword", datetime.now(UTC))
    write_organizer(tmp_path / "demo", datetime.now(UTC))
    files = sorted(p for p in tmp_path.rglob("*.ics") if p.is_file())
    assert len(files) > 1000
    taken = {path.parent.parent.name: 0 for path in files}
    for path in files:
        if _same(path.read_bytes(), str(path)):
            taken[path.parent.parent.name] += 1
    # Every task the bench writes is plain; its events name a zone (TZID), so icalendar reads them.
    assert taken["tasks"] >= 800 and sum(taken.values()) < len(files)


ICS = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n{body}END:VCALENDAR\r\n"


def _file(*lines: str, kind: str = "VTODO") -> bytes:
    inner = "".join(f"{line}\r\n" for line in lines)
    return ICS.format(body=f"BEGIN:{kind}\r\n{inner}END:{kind}\r\n").encode()


@pytest.mark.parametrize("lines", [
    ["UID:a", "SUMMARY:A long title that is folded over", " two lines"],
    ["UID:a", "SUMMARY:Bread\\, butter"],
    ["UID:a", "DESCRIPTION:line one\\nline two"],
    ["UID:a", 'ORGANIZER;CN="Ada, L.":mailto:ada@example.org'],
    ["UID:a", "DTSTART;TZID=Europe/Paris:20261203T100000"],
    ["UID:a", "SUMMARY:one", "SUMMARY:two"],
    ["UID:a", "CATEGORIES:a", "CATEGORIES:b"],
    ["UID:a", "DUE:not-a-date"],
    ["UID:a", "DTSTART:20261203T250000Z"],
    ["UID:a", "PRIORITY:high"],
    ["UID:a", "RRULE:FREQ=SOMETIMES"],
    ["UID:a", "SUMMARY has no colon"],
    ["UID:a", "BEGIN:VALARM", "TRIGGER:-PT15M", "BEGIN:VALARM", "END:VALARM", "END:VALARM"],
    ["UID:a", "BEGIN:VJOURNAL", "END:VJOURNAL"],
    ["UID:a", "END:VEVENT"],
])
def test_an_unusual_file_is_left_to_icalendar(lines: list[str]) -> None:
    raw = _file(*lines)
    assert vdir.simple(raw, "list", "/x/list/file.ics") is None
    # items_of then gives what icalendar gives (or fails as it fails).
    outcome = _by_icalendar(raw, "/x/list/file.ics")
    try:
        read = ("read", [vdir.to_row(i) for i in vdir.items_of(raw, "list", "/x/list/file.ics")])
    except Exception as error:  # noqa: BLE001
        read = ("unreadable", [type(error).__name__])
    assert read == outcome


def test_files_that_are_not_one_plain_component_are_left_to_icalendar() -> None:
    two = ICS.format(body="BEGIN:VTODO\r\nUID:a\r\nEND:VTODO\r\nBEGIN:VTODO\r\nUID:b\r\nEND:VTODO\r\n").encode()
    zone = ICS.format(body="BEGIN:VTIMEZONE\r\nTZID:X\r\nEND:VTIMEZONE\r\nBEGIN:VTODO\r\nUID:a\r\nEND:VTODO\r\n")
    for raw in (two, zone.encode(), b"\xff\xfe" + _file("UID:a"), _file("UID:a").replace(b"\r\n", b"\r"),
                _file("UID:a")[:-15], b"", b"BEGIN:VCARD\r\nEND:VCARD\r\n"):
        assert vdir.simple(raw, "list", "/x/list/file.ics") is None, raw


def test_plain_files_in_other_spellings_read_the_same() -> None:
    assert _same(_file("uid:a", "summary:lower case names", "due;value=date:20261203", "status:needs-action"))
    assert _same(_file("UID:a", "SUMMARY:bare line feeds").replace(b"\r\n", b"\n"))
    assert _same(b"\xef\xbb\xbf" + _file("UID:a", "SUMMARY:after a byte order mark"))
    assert _same(_file("SUMMARY:no uid"))  # no item, as icalendar's reading gives none
    assert _same(_file("UID:e", "DTSTART:20261203T100000Z", "DURATION:PT1H", "LOCATION:Room 2",
                       "BEGIN:VALARM", "ACTION:AUDIO", "TRIGGER;RELATED=END:PT5M", "REPEAT:2", "DURATION:PT1M",
                       "END:VALARM", "BEGIN:VALARM", "TRIGGER;VALUE=DATE-TIME:20261203T090000Z", "END:VALARM",
                       kind="VEVENT"))


# Lines a plain file may hold, good and bad values alike: the scan must agree with icalendar on every mix.
LINES = [
    "UID:task-1", "UID:", "SUMMARY:Call Ada", "SUMMARY:", "SUMMARY:card 4111 1111 1111 1111", "DESCRIPTION:Some words",
    "LOCATION:Here", "STATUS:COMPLETED", "STATUS:needs-action", "STATUS:odd", "PRIORITY:1", "PRIORITY:0",
    "PRIORITY:12", "PRIORITY:-3", "PRIORITY:", "PERCENT-COMPLETE:50", "PERCENT-COMPLETE:x",
    "DTSTART:20261203T100000Z", "DTSTART:20261203T100000", "DTSTART;VALUE=DATE:20261203", "DTSTART:20261203",
    "DTSTART:00010101T000000Z", "DTSTART:99991231", "DTSTART:2026", "DUE:20261204T180000Z", "DUE;VALUE=DATE:20261204",
    "DUE;VALUE=DATE:20261204T180000Z", "DUE;VALUE=DATE-TIME:20261204", "DTEND:20261203T110000Z", "DURATION:PT1H",
    "DURATION:P999999999D", "DURATION:-P1D", "DURATION:PT", "COMPLETED:20261201T120000Z", "COMPLETED:20261201",
    "CREATED:20261101T080000Z", "DTSTAMP:20261101T080000Z", "LAST-MODIFIED:20261101T080000Z", "SEQUENCE:2",
    "CATEGORIES:project:p1", "CATEGORIES:a,b,,c", "CATEGORIES:", "RELATED-TO:task-0",
    "RELATED-TO;RELTYPE=PARENT:task-0", "RELATED-TO;RELTYPE=depends-on:task-9", "RELATED-TO;RELTYPE=CHILD:task-2",
    "REFID:vault", "RRULE:FREQ=WEEKLY;COUNT=3", "RDATE:20261210T100000Z", "RDATE:", "EXDATE:20261210T100000Z",
    "CLASS:PRIVATE", "TRANSP:OPAQUE", "URL:https://example.org/x", "GEO:1.5;2.5", "GEO:nowhere", "X-ODD:thing",
    "X-ODD;X-P=1:thing", "ATTENDEE:mailto:bo@example.net", "ORGANIZER;ROLE=CHAIR:mailto:ada@example.org",
    "RECURRENCE-ID:20261210T100000Z", "ATTACH:https://example.org/a", "COMMENT:said", "CONTACT:Bo",
    "BEGIN:VALARM", "END:VALARM", "TRIGGER:-PT15M", "TRIGGER;RELATED=END:PT0S", "TRIGGER;RELATED=ODD:PT1M",
    "TRIGGER;VALUE=DATE-TIME:20261203T090000Z", "TRIGGER:soon", "ACTION:DISPLAY", "ACTION:email", "REPEAT:3",
    "REPEAT:many", "DESCRIPTION:Ring",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(LINES), max_size=14), st.sampled_from(["VTODO", "VEVENT"]))
def test_the_scan_agrees_with_icalendar_on_any_mix_of_plain_lines(lines: list[str], kind: str) -> None:
    _same(_file(*lines, kind=kind))


def test_files_the_real_todoman_writes_read_the_same_by_scan(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    tasks = tmp_path / "tasks" / "home"
    tasks.mkdir(parents=True)
    config = tmp_path / "todoman.py"
    config.write_text(f'path = "{tmp_path / "tasks"}/*"\ndate_format = "%Y-%m-%d"\ntime_format = "%H:%M"\n'
                      f'default_list = "home"\ncache_path = "{tmp_path / "cache.sqlite3"}"\n')
    todo = Path(sys.executable).parent / "todo"
    for title, extra in (("Buy bread", ["--due", "2026-12-05", "--priority", "high"]), ("Plain", []),
                         ("Call Ada, then Bo; later", []), ("Café crème", ["--due", "2026-12-05 09:00"]),
                         ("A title long enough that todoman folds its line, past seventy-five octets for sure", [])):
        subprocess.run([str(todo), "--config", str(config), "new", "-l", "home", *extra, title], check=True,
                       capture_output=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)})
    written = sorted(tasks.glob("*.ics"))
    taken = sum(_same(path.read_bytes(), str(path)) for path in written)
    assert len(written) == 5 and taken >= 3  # the comma's escape and the folded title are icalendar's
