"""What a new process (a cold call) takes from the disk cache: folders' listings and repeating events' expansions,
and that neither hides a change made while no gateway ran."""

from __future__ import annotations

import os
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from gateway_mail.plan import events, vdir
from gateway_mail.plan import sample as sample_plan

PARIS = ZoneInfo("Europe/Paris")


@pytest.fixture
def roots(gateway_home: Path):
    vdir.forget()
    events._expanded.clear()
    root = gateway_home / "vdir"
    sample_plan.generate(root, 40, 0, lists=2)
    past = time.time() - 100  # folders settled: written well before they are listed
    for folder in (root / "tasks").iterdir():
        os.utime(folder, (past, past))
    yield root, gateway_home / "cache"
    vdir.forget()
    events._expanded.clear()


def _listed_folders(monkeypatch, root: Path) -> list[str]:
    listed: list[str] = []
    real = os.scandir

    def scandir(path="."):
        if Path(path).parent == root:
            listed.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    return listed


def test_a_new_process_lists_no_settled_folder_and_sees_one_changed_meanwhile(roots, monkeypatch) -> None:
    root, cache = roots
    assert len(vdir.read(root / "tasks", cache).items) == 40
    vdir.forget()  # a new process
    listed = _listed_folders(monkeypatch, root / "tasks")
    assert len(vdir.read(root / "tasks", cache).items) == 40
    assert listed == []  # the disk said what each settled folder held
    # A task added while no gateway ran changes its folder: the next new process lists that folder only.
    sample_plan.put(root / "tasks" / "list1", "late", sample_plan.ics("VTODO", "late", ["SUMMARY:Late one"]))
    vdir.forget()
    again = vdir.read(root / "tasks", cache)
    assert listed == ["list1"] and "late" in {item.uid for item in again.items}


def test_a_file_edited_in_place_is_seen_once_every_file_is_looked_at(roots, monkeypatch) -> None:
    root, cache = roots
    vdir.read(root / "tasks", cache)
    path = next((root / "tasks" / "list0").glob("*.ics"))
    path.write_bytes(path.read_bytes().replace(b"SUMMARY:", b"SUMMARY:Edited "))
    vdir.forget()
    monkeypatch.setattr(vdir, "FULL_CHECK", 0.0)  # the look at every file, due FULL_CHECK after a start
    assert any(item.summary.startswith("Edited ") for item in vdir.read(root / "tasks", cache).items)


def test_a_repeating_events_occurrences_are_kept_on_disk_until_its_file_changes(roots, monkeypatch) -> None:
    root, cache = roots
    today = datetime.now(PARIS).date()
    path = sample_plan.put(root / "calendars" / "home", "weekly", sample_plan.ics("VEVENT", "weekly", [
        "SUMMARY:Choir", f"DTSTART;TZID=Europe/Paris:{today:%Y%m%d}T190000",
        f"DTEND;TZID=Europe/Paris:{today:%Y%m%d}T200000", "RRULE:FREQ=WEEKLY;COUNT=10"]))
    begin = datetime.combine(today, datetime.min.time(), PARIS)
    finish = begin + timedelta(days=21)

    def starts() -> list[str]:
        found = events.occurrences(vdir.read(root / "calendars", cache), begin, finish, PARIS)
        return [o.start.strftime("%Y-%m-%d %H:%M") for o in found]

    first = starts()
    assert len(first) == 3 and first[0].endswith("19:00")
    vdir.forget()
    events._expanded.clear()  # a new process

    def no_parsing(*args, **kwargs):
        raise AssertionError("a repeating event was expanded again although the disk kept it")

    real = events._expand
    monkeypatch.setattr(events, "_expand", no_parsing)
    assert starts() == first
    # The file changed (a later hour): what was kept is not used.
    monkeypatch.setattr(events, "_expand", real)
    path.write_bytes(path.read_bytes().replace(b"T190000", b"T180000").replace(b"T200000", b"T190000"))
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 3_000_000_000))
    vdir.forget()
    events._expanded.clear()
    assert [s[-5:] for s in starts()] == ["18:00"] * 3
