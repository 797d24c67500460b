"""The ActivityWatch importer, on databases made in each server's own schema."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from gateway_timeline.importers.activitywatch import ActivityWatchError, import_database
from gateway_timeline.store import _EVENT_COLUMNS, EventRow, Store, envelope_of

from tests.plugins.timeline.timeline_awdb import AFK, VIM, WEB, WINDOW, AWDatabase, window_events
from tests.plugins.timeline.timeline_helpers import WEEK_MS

FLAVOURS = ["rust", "peewee"]


def stored(store: Store) -> list[dict]:
    rows = store.db.execute(f"SELECT {_EVENT_COLUMNS} FROM events ORDER BY ts_ms, id")
    return [envelope_of(EventRow._make(row)) for row in rows]


@pytest.fixture(params=FLAVOURS)
def aw(request: pytest.FixtureRequest, tmp_path: Path):
    database = AWDatabase(tmp_path / f"aw-{request.param}.db", request.param)
    yield database
    database.close()


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "store" / "timeline.db") as opened:
        yield opened


def test_window_afk_web_and_editor_buckets_become_envelope_events(aw, store, now) -> None:
    start = now - timedelta(hours=1)
    aw.add(WINDOW, window_events(start, [(10, "Code", "store.py — gateway"), (5, "Code", "render.py — gateway"),
                                         (5, "Firefox", "PR #42 — Mozilla Firefox")]))
    aw.add(AFK, [(start, 1200, {"status": "not-afk"}), (start + timedelta(minutes=20), 600, {"status": "afk"})])
    aw.add(WEB, [(start + timedelta(minutes=15), 120,
                  {"url": "https://github.example.com/pull/42", "title": "PR #42", "audible": False,
                   "incognito": False})])
    aw.add(VIM, [(start + timedelta(minutes=1), 30, {"file": "/home/ada/notes.md", "project": "/home/ada",
                                                     "language": "markdown"})])
    report = import_database(aw.path, store, retention_ms=WEEK_MS)
    events = stored(store)
    # same-time events come in id order: the AFK bucket's before the window bucket's
    assert [e["type"] for e in events] == [
        "user.active", "app.focus", "editor.activity", "window.focus", "browser.navigate", "app.focus", "user.idle",
    ]
    first = events[1]
    assert set(first) == {"v", "id", "ts", "mono_ns", "source", "type", "app", "window", "element", "data",
                          "redaction"}
    assert first["app"]["name"] == "Code" and first["window"]["title"] == "store.py — gateway"
    assert first["data"]["duration_s"] == 600
    assert first["ts"].endswith("Z") and first["source"] == f"activitywatch/{WINDOW}"
    web = next(e for e in events if e["type"] == "browser.navigate")
    assert web["app"]["name"] == "Firefox"
    assert web["data"]["url"] == "https://github.example.com/pull/42" and web["data"]["tab_title"] == "PR #42"
    assert next(e for e in events if e["type"] == "editor.activity")["data"]["path"] == "/home/ada/notes.md"
    assert report.flavour == aw.flavour
    assert report.total == 7


def test_importing_twice_adds_nothing(aw, store, now) -> None:
    aw.add(WINDOW, window_events(now - timedelta(hours=1), [(10, "Code", "a"), (10, "Slack", "b")]))
    import_database(aw.path, store, retention_ms=WEEK_MS)
    before = stored(store)
    again = import_database(aw.path, store, retention_ms=WEEK_MS)
    assert again.total == 0
    assert stored(store) == before


def test_only_new_events_are_read_and_a_grown_last_event_is_updated(aw, store, now) -> None:
    start = now - timedelta(hours=1)
    ids = aw.add(WINDOW, window_events(start, [(10, "Code", "a"), (5, "Slack", "b")]))
    import_database(aw.path, store, retention_ms=WEEK_MS)
    aw.grow(ids[-1], 9 * 60)  # heartbeats merged into the newest event
    aw.add(WINDOW, [(start + timedelta(minutes=19), 60, {"app": "Slack", "title": "c"})])
    report = import_database(aw.path, store, retention_ms=WEEK_MS)
    assert report.imported[WINDOW] == 1
    events = stored(store)
    assert len(events) == 3
    assert events[1]["data"]["duration_s"] == 540
    # the app did not change between the last two, across the two runs: a window change, not an app change
    assert [e["type"] for e in events] == ["app.focus", "app.focus", "window.focus"]


def test_private_browser_windows_are_never_stored(aw, store, now) -> None:
    aw.add(WEB, [(now - timedelta(minutes=30), 60, {"url": "https://private.example.net/", "title": "Hidden",
                                                    "audible": False, "incognito": True}),
                 (now - timedelta(minutes=20), 60, {"url": "https://open.example.net/", "title": "Shown",
                                                    "audible": False, "incognito": False})])
    report = import_database(aw.path, store, retention_ms=WEEK_MS)
    assert report.private_dropped == 1
    assert "private.example.net" not in json.dumps(stored(store))
    assert store.db.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 1
    aw.add(WEB, [(now - timedelta(minutes=10), 60, {"url": "https://private.example.net/b", "title": "Hidden",
                                                    "audible": False, "incognito": True})])
    # The bucket's newest row is private and read again by every import: counted by the one that first read it.
    assert import_database(aw.path, store, retention_ms=WEEK_MS).private_dropped == 1
    assert import_database(aw.path, store, retention_ms=WEEK_MS).private_dropped == 0


def test_other_bucket_types_are_skipped_and_named(aw, store, now) -> None:
    aw.add("aw-stopwatch_desk", [(now - timedelta(minutes=5), 60, {"label": "tea"})])
    report = import_database(aw.path, store, retention_ms=WEEK_MS)
    assert report.skipped_buckets == {"aw-stopwatch_desk": "general.stopwatch"}
    assert stored(store) == []


def test_events_older_than_the_retention_are_not_imported_and_old_ones_are_pruned(aw, store, now) -> None:
    aw.add(WINDOW, window_events(now - timedelta(hours=30), [(10, "Code", "old")]))
    aw.add(WINDOW, window_events(now - timedelta(hours=1), [(10, "Code", "new")]))
    report = import_database(aw.path, store, retention_ms=24 * 3_600_000)
    assert report.too_old == 1
    assert [e["window"]["title"] for e in stored(store)] == ["new"]
    # a shorter retention later deletes what the store holds beyond it
    report = import_database(aw.path, store, retention_ms=20 * 60_000)
    assert report.pruned == 1 and stored(store) == []


def test_the_activitywatch_database_is_opened_read_only(aw, store, now) -> None:
    aw.add(WINDOW, window_events(now - timedelta(hours=1), [(10, "Code", "a")]))
    aw.close()
    aw.path.chmod(0o444)
    try:
        import_database(aw.path, store, retention_ms=WEEK_MS)
    finally:
        aw.path.chmod(0o644)
    assert len(stored(store)) == 1


def test_a_file_that_is_not_activitywatch_is_refused_with_why(tmp_path: Path, store) -> None:
    with pytest.raises(ActivityWatchError, match="no ActivityWatch database"):
        import_database(tmp_path / "missing.db", store, retention_ms=WEEK_MS)
    other = tmp_path / "other.db"
    import sqlite3

    sqlite3.connect(other).execute("CREATE TABLE things (id INTEGER)").connection.commit()
    with pytest.raises(ActivityWatchError, match="neither aw-server-rust's nor aw-server's tables"):
        import_database(other, store, retention_ms=WEEK_MS)
    text = tmp_path / "notes.txt"
    text.write_text("not a database at all, just words " * 100)
    with pytest.raises(ActivityWatchError, match="cannot be read as SQLite"):
        import_database(text, store, retention_ms=WEEK_MS)
