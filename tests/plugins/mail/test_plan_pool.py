"""The first reading of many task files by a pool of processes: each file's failure its own, the same items as a
reading in one process, and no pool process left once the call that started it stops (at its deadline or done)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest
from gateway_mail.plan import sample, vdir

TOTAL = 200


def _readers() -> list[multiprocessing.Process]:
    return [p for p in multiprocessing.active_children() if p.name == "gateway-plan-reader"]


@pytest.fixture
def tasks(tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    """200 tasks in 8 lists and one hostile file among them; a pool of two whatever the machine's cores."""
    vdir.forget()
    monkeypatch.setattr(vdir, "_workers", lambda: 2)
    sample.generate(tmp_path / "vdir", TOTAL, 0)
    root = tmp_path / "vdir" / "tasks"
    # A component closed by the wrong END: icalendar refuses the whole file.
    (root / "list3" / "hostile.ics").write_bytes(
        b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VTODO\r\nUID:hostile\r\nSUMMARY:Unclosed\r\nEND:VCALENDAR\r\n")
    yield root, tmp_path / "cache"
    vdir.forget()


def test_a_hostile_file_among_200_fails_alone_and_the_pool_reads_what_one_process_reads(tasks) -> None:
    root, cache = tasks
    assert TOTAL + 1 >= vdir.POOL_FROM  # so the pool reads them
    found = vdir.read(root, cache)
    assert found.pending == 0 and found.unreadable == 1 and len(found.items) == TOTAL
    assert vdir.problems_of(cache, root) == [(str(root / "list3" / "hostile.ics"), vdir.UNREADABLE)]
    assert not _readers()
    # What each file says, as a reading in this process finds it (times compared as moments).
    expected = {}
    for path in sorted(root.glob("*/*.ics")):
        if path.name != "hostile.ics":
            for item in vdir.items_of(path.read_bytes(), path.parent.name, str(path)):
                expected[item.uid] = item
    assert {item.uid: item for item in found.items} == expected
    vdir.forget()  # a new process: what the pool read is on disk
    again = vdir.read(root, cache)
    assert {item.uid: item for item in again.items} == expected and again.unreadable == 1


def test_the_pool_stops_at_the_deadline_its_processes_gone_and_the_next_calls_go_on(tasks) -> None:
    root, cache = tasks
    asked = []

    def stop() -> bool:  # the deadline falls once the pool's processes are started, before any answer is taken
        asked.append(True)
        return len(asked) >= 2

    first = vdir.read(root, cache, stop)
    assert not _readers()  # killed, not left to finish their batches
    assert len(first.items) + first.unreadable == 1 and first.pending == TOTAL  # one file read here, as before
    asked.clear()
    later = []

    def stop_later() -> bool:
        later.append(True)
        return len(later) >= 40

    second = vdir.read(root, cache, stop_later)
    assert not _readers()
    assert len(second.items) + second.unreadable + second.pending == TOTAL + 1
    last = vdir.read(root, cache)
    assert last.pending == 0 and len(last.items) == TOTAL and last.unreadable == 1
    assert not _readers()
