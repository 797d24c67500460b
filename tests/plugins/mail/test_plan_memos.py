"""What a warm list of tasks keeps between calls (the tie map, each task's shown fields, the words of its reasons)
is made again as soon as what it was made of changes: a tie written by another connection or another process, a
tie store made again, another manifest, a file of the list."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import gateway_mail
import pytest
from gateway_mail import zone
from gateway_mail.plan import sample as sample_plan
from gateway_mail.plan import tasks, vdir
from gateway_mail.plan.vdir import TODO, Item
from gateway_mail.projects.belonging import tie_map_at
from gateway_mail.projects.ties import FILE_NAME, Ties

from gateway import Gate, Project
from gateway.gate.access import Manifest
from gateway.testing import folders_of, make_gateway

CANARY = "quokkamemocanary"
PARIS = ZoneInfo("Europe/Paris")


def _gate(*ids: str) -> Gate:
    return Gate(Manifest(tuple(Project(i, ai=True) for i in ids)))


def test_a_tie_made_by_another_connection_is_in_the_next_map(tmp_path: Path) -> None:
    store, gate = tmp_path / FILE_NAME, _gate("garden", "lawsuit")
    first = tie_map_at(store, gate)
    assert first == {} and oct(store.stat().st_mode & 0o777) == "0o600"  # made as the tie tools make it
    with Ties.at(store) as ties:
        ties.add("sioul:task/seeds", "sioul:project/garden")
    second = tie_map_at(store, gate)
    assert second == {"sioul:task/seeds": frozenset({"garden"})} and second.key != first.key
    assert tie_map_at(store, gate) is second  # unchanged: the same map, not read again
    with Ties.at(store) as ties:
        ties.add("sioul:project/lawsuit", "sioul:task/seeds")
    assert tie_map_at(store, gate) == {"sioul:task/seeds": frozenset({"garden", "lawsuit"})}


def test_a_tie_made_by_another_process_is_in_the_next_map(tmp_path: Path) -> None:
    store, gate = tmp_path / FILE_NAME, _gate("garden")
    assert tie_map_at(store, gate) == {}
    script = ("import sys; from pathlib import Path; from gateway_mail.projects.ties import Ties\n"
              "with Ties.at(Path(sys.argv[1])) as t: t.add('sioul:note/plan', 'sioul:project/garden')")
    subprocess.run([sys.executable, "-c", script, str(store)], check=True, timeout=60)
    assert tie_map_at(store, gate) == {"sioul:note/plan": frozenset({"garden"})}


def test_a_store_made_again_or_written_over_is_read_anew(tmp_path: Path) -> None:
    store, gate = tmp_path / FILE_NAME, _gate("garden", "lawsuit")
    with Ties.at(store) as ties:
        ties.add("sioul:task/seeds", "sioul:project/garden")
    assert tie_map_at(store, gate) == {"sioul:task/seeds": frozenset({"garden"})}
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)
    with Ties.at(store) as ties:
        ties.add("sioul:task/keys", "sioul:project/lawsuit")
    assert tie_map_at(store, gate) == {"sioul:task/keys": frozenset({"lawsuit"})}
    # Written over in place, by other means than SQLite: its reading fails as it did before anything was kept.
    store.write_bytes(b"this is no database, but long enough to be read as one" * 20)
    with pytest.raises(Exception, match="not a database|file is not a database"):
        tie_map_at(store, gate)


def test_the_map_follows_the_manifest(tmp_path: Path) -> None:
    store = tmp_path / FILE_NAME
    with Ties.at(store) as ties:
        ties.add("sioul:task/seeds", "sioul:project/garden")
    assert tie_map_at(store, _gate("garden")) == {"sioul:task/seeds": frozenset({"garden"})}
    assert tie_map_at(store, _gate("lawsuit")) == {}  # a tie to a project the manifest does not hold owns nothing


def test_a_task_tied_to_a_closed_project_from_outside_is_left_out_of_the_next_list(gateway_home: Path) -> None:
    vdir.forget()
    sample_plan.world(gateway_home, CANARY, datetime.now(PARIS))
    served = make_gateway([gateway_mail], home=gateway_home, config=sample_plan.config(gateway_home),
                          projects=sample_plan.PROJECTS)
    before = served.call("list_tasks", {"view": "all"})
    assert "sioul:task/bread" in [t["address"] for t in before.data["tasks"]]
    assert served.call("list_tasks", {"view": "all"}).data == before.data  # warm: the same answer
    # The person ties bread to the closed vault from another process (their own `gateway` command, say).
    store = folders_of(gateway_home).for_plugin("mail").data / FILE_NAME
    script = ("import sys; from pathlib import Path; from gateway_mail.projects.ties import Ties\n"
              "with Ties.at(Path(sys.argv[1])) as t: t.add('sioul:task/bread', 'sioul:project/vault')")
    subprocess.run([sys.executable, "-c", script, str(store)], check=True, timeout=60)
    after = served.call("list_tasks", {"view": "all"})
    assert "sioul:task/bread" not in [t["address"] for t in after.data["tasks"]]
    assert after.data["left_out"] == before.data["left_out"] + 1
    assert "Buy bread" not in after.text
    vdir.forget()


def test_a_changed_file_changes_the_shown_task(gateway_home: Path) -> None:
    vdir.forget()
    made = sample_plan.world(gateway_home, CANARY, datetime.now(PARIS))
    served = make_gateway([gateway_mail], home=gateway_home, config=sample_plan.config(gateway_home),
                          projects=sample_plan.PROJECTS)

    def bread() -> dict:
        return next(t for t in served.call("list_tasks", {"view": "all"}).data["tasks"]
                    if t["address"] == "sioul:task/bread")

    assert bread()["title"] == "Buy bread" and "priority" not in bread()
    path = made["files"]["bread"]
    path.write_text(path.read_text().replace("SUMMARY:Buy bread", "SUMMARY:Buy rye bread\r\nPRIORITY:2"))
    stamp = path.stat().st_mtime_ns + 3_000_000_000  # a time the cache has not seen, as a sync's write would give
    os.utime(path, ns=(stamp, stamp))
    os.utime(path.parent, ns=(stamp, stamp))
    changed = bread()
    assert changed["title"] == "Buy rye bread" and changed["priority"] == 2 and "priority 2" in changed["why"]
    vdir.forget()


def test_the_words_of_a_reason_are_strftimes_in_every_case() -> None:
    """The reasons are worded without strftime (for speed): they read as strftime's %a, %b, %H:%M and %Y-%m-%d."""
    now = datetime(2026, 12, 2, 9, 17, tzinfo=PARIS)
    for days, hours in ((-40, 0), (-1, 5), (0, 2), (0, -2), (1, 0), (3, 7), (7, 1), (8, 0), (400, 0), (-800, 3)):
        due = now + timedelta(days=days, hours=hours)
        urgency, words = tasks._due_words(due, True, now)
        written = {0: f"overdue since {due:%a} {due.day} {due:%b} at {due:%H:%M}", 1: f"due today at {due:%H:%M}",
                   2: f"due {due:%a} {due.day} {due:%b} at {due:%H:%M}", 3: f"due {due:%Y-%m-%d}"}[urgency]
        assert words == written
    old = datetime(999, 3, 4, 8, 5, tzinfo=PARIS)
    assert tasks._due_words(old, False, now) == (0, f"overdue since {old:%a} 4 Mar")
    assert tasks._due_words(datetime(2999, 1, 2, tzinfo=PARIS), False, now) == (3, "due 2999-01-02")


def test_a_ranking_holds_exactly_while_no_rank_view_or_reason_can_change() -> None:
    """The plan is ranked again only at the next due or start time or midnight (`tasks.holds_until`): at every
    moment a ranking is said to hold, ranking afresh gives the same order, readiness, views and reasons."""
    utc = ZoneInfo("UTC")

    def todo(uid: str, **fields) -> Item:
        return Item(TODO, uid, "home", f"/tasks/home/{uid}.ics", summary=uid, **fields)

    # Around the night Paris moves its clocks forward: timed dues (in UTC, in Paris, floating), dates, starts to come,
    # a step whose bigger task's date it takes, a task waiting on another, priorities.
    items = (todo("timed", due=datetime(2027, 3, 27, 21, 30, tzinfo=utc)),
             todo("paris", due=datetime(2027, 3, 28, 3, 15, tzinfo=PARIS), priority=2),
             todo("floating", due=datetime(2027, 3, 28, 1, 45)),
             todo("dated", due=date(2027, 3, 28)), todo("later", due=date(2027, 4, 2)),
             todo("starts", start=datetime(2027, 3, 28, 0, 20, tzinfo=utc), due=date(2027, 3, 30)),
             todo("starts-day", start=date(2027, 3, 29)),
             todo("big", due=date(2027, 3, 27)), todo("step", parent="big"),
             todo("waits", depends=("timed",), priority=1), todo("none"))
    prepared = tasks.prepare(items, PARIS)
    begin = datetime(2027, 3, 27, 18, 0, tzinfo=utc)
    moments = {begin + timedelta(minutes=11 * i) for i in range(330)}
    for p in prepared:  # each due and start time, and a second either side
        for edge in (p.due, p.start):
            if edge is not None:
                moments |= {edge + timedelta(seconds=s) for s in (-1, 0, 1)}
    moments = sorted(zone.now_in(PARIS, m) for m in moments)

    def seen(now: datetime) -> list[tuple]:
        return [(e.item.uid, e.ready, e.why, [tasks.in_view(e, v, now, PARIS) for v in ("now", "today", "all")])
                for e in tasks.rank(prepared, now)]

    checked = 0
    for since in moments[::4]:
        until = tasks.holds_until(prepared, since, PARIS)
        assert until >= since  # a due time at this very moment: held for no time at all, ranked again next call
        expected = seen(since)
        for now in moments:
            if since <= now < until:
                assert seen(now) == expected, (since, now, until)
                checked += 1
    assert checked > 1000
