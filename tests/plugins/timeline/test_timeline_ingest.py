"""JSONL ingest: envelope events from any recorder; bad lines counted and reported, good ones kept."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from gateway_timeline.importers.jsonl import ingest_lines
from gateway_timeline.store import Store

from tests.plugins.timeline.timeline_helpers import WEEK_MS, envelope, iso, lines_of


def bodies(store: Store) -> list[dict]:
    return [json.loads(b) for (b,) in store.db.execute("SELECT body FROM events ORDER BY ts_ms")]


def test_good_lines_are_kept_and_bad_ones_counted_with_their_line_numbers(tmp_path: Path, now) -> None:
    good = envelope(now - timedelta(minutes=5), "app.focus", "Code", "a.py", event_id="evt_1")
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps([1, 2]),
        json.dumps({**good, "id": "evt_2", "ts": "yesterday"}),
        json.dumps({**good, "id": "evt_3", "ts": "2026-08-16T08:00:00"}),  # no zone
        json.dumps({**good, "id": "evt_4", "type": "Not A Type"}),
        json.dumps({**good, "id": "evt_5", "v": 2}),
        json.dumps({**good, "id": "evt_6", "app": "Code"}),
        "",
        json.dumps(envelope(now - timedelta(minutes=4), "window.focus", "Code", "b.py", event_id="evt_7")),
    ]
    with Store.open(tmp_path / "t.db") as store:
        report = ingest_lines(lines, store, retention_ms=WEEK_MS)
        assert report.stored == 2 and report.bad == 7 and report.lines == 9
        assert [p.split(":")[0] for p in report.problems] == [f"line {n}" for n in (2, 3, 4, 5, 6, 7, 8)]
        assert "not valid JSON" in report.problems[0]
        assert "has no zone" in report.problems[3]
        assert [e["id"] for e in bodies(store)] == ["evt_1", "evt_7"]
        assert store.meta("bad_lines") == 7


def test_missing_fields_are_filled_and_nothing_added_to_what_a_redaction_removed(tmp_path: Path, now) -> None:
    sparse = {
        "ts": iso(now),
        "type": "ui.click",
        "redaction": {"applied": True, "rules": ["secure_field"]},
        "element": {"role": "AXSecureTextField"},
    }
    with Store.open(tmp_path / "t.db") as store:
        ingest_lines([json.dumps(sparse)], store, retention_ms=WEEK_MS)
        (event,) = bodies(store)
    assert event["v"] == 1 and event["id"].startswith("evt_") and event["source"] == "unknown"
    assert event["app"] is None and event["window"] is None and event["data"] == {}
    assert event["redaction"] == {"applied": True, "rules": ["secure_field"]}
    assert event["element"] == {"role": "AXSecureTextField"}


def test_ingesting_the_same_file_twice_adds_nothing_even_without_ids(tmp_path: Path, now) -> None:
    events = [envelope(now - timedelta(minutes=m), "input.key", "Code", "a.py") for m in range(5)]
    with Store.open(tmp_path / "t.db") as store:
        first = ingest_lines(lines_of(events), store, retention_ms=WEEK_MS)
        again = ingest_lines(lines_of(events), store, retention_ms=WEEK_MS)
        assert len(bodies(store)) == 5
        assert (first.stored, first.new) == (5, 5) and (again.stored, again.new) == (5, 0)


def test_private_window_events_are_dropped_at_ingest(tmp_path: Path, now) -> None:
    events = [
        envelope(
            now,
            "browser.navigate",
            "Firefox",
            "Secret",
            data={"url": "https://a.example.org/", "mode": "private"},
        ),
        envelope(
            now,
            "browser.navigate",
            "Chrome",
            "Secret",
            data={"url": "https://b.example.org/", "incognito": True},
        ),
        envelope(
            now,
            "browser.navigate",
            "Chrome",
            "Shown",
            data={"url": "https://c.example.org/", "mode": "normal"},
        ),
    ]
    with Store.open(tmp_path / "t.db") as store:
        report = ingest_lines(lines_of(events), store, retention_ms=WEEK_MS)
        assert report.private_dropped == 2
        assert [e["window"]["title"] for e in bodies(store)] == ["Shown"]


def test_a_recorder_heartbeat_is_status_not_an_event(tmp_path: Path, now) -> None:
    beat = envelope(
        now,
        "recorder.heartbeat",
        data={
            "paused": True,
            "events_dropped": 3,
            "capture": {"sources": ["app", "window"], "text_content": False},
        },
    )
    with Store.open(tmp_path / "t.db") as store:
        report = ingest_lines(lines_of([beat]), store, retention_ms=WEEK_MS)
        assert report.heartbeats == 1 and bodies(store) == []
        saved = store.meta("heartbeat")
    assert saved["paused"] is True and saved["events_dropped"] == 3
    assert saved["capture"]["sources"] == ["app", "window"]


def test_events_older_than_the_retention_are_not_kept(tmp_path: Path, now) -> None:
    events = [
        envelope(now - timedelta(hours=3), "app.focus", "Code", "old"),
        envelope(now, "app.focus", "Code", "new"),
    ]
    with Store.open(tmp_path / "t.db") as store:
        report = ingest_lines(lines_of(events), store, retention_ms=3_600_000)
        assert report.too_old == 1
        assert [e["window"]["title"] for e in bodies(store)] == ["new"]
