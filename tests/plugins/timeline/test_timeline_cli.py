"""`gateway timeline import activitywatch` (once and --watch) and `gateway timeline ingest`, as a person runs them."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from gateway_timeline.store import Store, envelope_of

from gateway.testing import home_environment, write_config
from tests.forkserver import gateway_command
from tests.plugins.timeline.timeline_awdb import AFK, WINDOW, AWDatabase, window_events
from tests.plugins.timeline.timeline_helpers import envelope, home_store, lines_of


def gateway(home: Path, *arguments: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(home)}
    return subprocess.run(
        gateway_command(*arguments), input=stdin, capture_output=True, text=True, env=env,
        timeout=60,
    )


def stored_titles(home: Path) -> list[str]:
    store = Store.reader(home_store(home))
    if store is None:  # not created yet, or its tables not yet made by the importer
        return []
    with store:
        envelopes = [envelope_of(row) for row in store.events(0, 2**62)]
    return [e["window"]["title"] for e in envelopes if e["window"]]


@pytest.mark.parametrize("flavour", ["rust", "peewee"])
def test_import_reads_the_database_given_and_reports_per_bucket(gateway_home: Path, now, flavour: str) -> None:
    aw = AWDatabase(gateway_home / "aw.db", flavour)
    aw.add(WINDOW, window_events(now - timedelta(hours=1), [(10, "Code", "a.py"), (10, "Slack", "general")]))
    aw.close()
    done = gateway(gateway_home, "timeline", "import", "activitywatch", str(aw.path))
    assert done.returncode == 0, done.stderr
    assert f"{WINDOW}: 2 new events" in done.stderr and done.stdout == ""
    assert stored_titles(gateway_home) == ["a.py", "general"]
    again = gateway(gateway_home, "timeline", "import", "activitywatch", str(aw.path))
    assert f"{WINDOW}: 0 new events" in again.stderr


def test_import_finds_activitywatch_in_its_usual_place_or_says_where_it_looked(gateway_home: Path, now) -> None:
    missing = gateway(gateway_home, "timeline", "import", "activitywatch")
    assert missing.returncode != 0 and "no ActivityWatch database found" in missing.stderr
    assert "aw-server-rust/sqlite.db" in missing.stderr
    usual = gateway_home / ".local" / "share" / "activitywatch" / "aw-server-rust" / "sqlite.db"
    usual.parent.mkdir(parents=True)
    aw = AWDatabase(usual, "rust")
    aw.add(WINDOW, window_events(now - timedelta(hours=1), [(10, "Code", "found.py")]))
    aw.close()
    done = gateway(gateway_home, "timeline", "import", "activitywatch")
    assert done.returncode == 0, done.stderr
    assert stored_titles(gateway_home) == ["found.py"]


def test_the_store_and_database_settings_are_used(gateway_home: Path, now) -> None:
    aw = AWDatabase(gateway_home / "elsewhere.db", "peewee")
    aw.add(WINDOW, window_events(now - timedelta(hours=1), [(10, "Code", "configured.py")]))
    aw.close()
    store = gateway_home / "my-store.db"
    write_config(gateway_home, {"plugins": {"timeline": {"activitywatch": str(aw.path), "store": str(store)}}})
    done = gateway(gateway_home, "timeline", "import", "activitywatch")
    assert done.returncode == 0, done.stderr
    assert store.exists() and not home_store(gateway_home).exists()


def test_relative_store_and_database_settings_are_taken_from_the_config_folder(gateway_home: Path, now) -> None:
    config = write_config(gateway_home, {"plugins": {"timeline": {"activitywatch": "aw/a.db", "store": "t.db"}}}).parent
    (config / "aw").mkdir()
    aw = AWDatabase(config / "aw" / "a.db", "rust")
    aw.add(WINDOW, window_events(now - timedelta(hours=1), [(10, "Code", "relative.py")]))
    aw.close()
    elsewhere = gateway_home / "elsewhere"
    elsewhere.mkdir()
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(gateway_home)}
    done = subprocess.run(  # run from another folder: the working directory must not matter
        gateway_command("timeline", "import", "activitywatch"), capture_output=True, text=True,
        env=env, cwd=elsewhere, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert (config / "t.db").exists() and not (elsewhere / "t.db").exists()
    with Store.reader(config / "t.db") as store:
        assert [envelope_of(row)["window"]["title"] for row in store.events(0, 2**62)] == ["relative.py"]


def test_ingest_keeps_good_lines_and_reports_bad_ones(gateway_home: Path, now) -> None:
    file = gateway_home / "events.jsonl"
    good = lines_of([envelope(now - timedelta(minutes=2), "app.focus", "Code", "kept.py")])
    file.write_text("\n".join([*good, "{broken", json.dumps({"type": "app.focus"})]) + "\n")
    done = gateway(gateway_home, "timeline", "ingest", str(file))
    assert done.returncode == 0, done.stderr
    assert "1 new event stored from 3 lines; 2 bad lines" in done.stderr
    assert "line 2: not valid JSON" in done.stderr and "line 3: ts must be" in done.stderr
    assert stored_titles(gateway_home) == ["kept.py"]
    piped = gateway(gateway_home, "timeline", "ingest", "-",
                    stdin="\n".join(lines_of([envelope(now - timedelta(minutes=1), "app.focus", "Slack", "piped")])))
    assert piped.returncode == 0, piped.stderr
    assert stored_titles(gateway_home) == ["kept.py", "piped"]


def test_ingest_of_the_same_file_again_says_nothing_new_was_stored(gateway_home: Path, now) -> None:
    file = gateway_home / "events.jsonl"
    events = [envelope(now - timedelta(minutes=m), "app.focus", "Code", f"{m}.py") for m in (1, 2, 3)]
    private = envelope(now - timedelta(minutes=4), "browser.navigate", "Firefox", "Hidden", data={"mode": "private"})
    file.write_text("\n".join(lines_of([*events, private])) + "\n")
    first = gateway(gateway_home, "timeline", "ingest", str(file))
    assert first.returncode == 0, first.stderr
    assert "3 new events stored from 4 lines; 0 bad lines" in first.stderr and "already" not in first.stderr
    assert "1 line from private windows skipped (never stored)" in first.stderr
    file.write_text("\n".join(lines_of([*events, private, envelope(now, "app.focus", "Slack", "new")])) + "\n")
    again = gateway(gateway_home, "timeline", "ingest", str(file))
    assert again.returncode == 0, again.stderr
    assert "1 new event stored (3 already there) from 5 lines; 0 bad lines" in again.stderr
    assert "3 events" not in again.stderr and "private-window events" not in again.stderr


def test_import_counts_a_private_window_once_though_its_row_is_read_again(gateway_home: Path, now) -> None:
    # ActivityWatch grows its newest row in place, so each import reads it again: a private one was counted once.
    aw = AWDatabase(gateway_home / "aw.db", "rust")
    aw.add(WINDOW, window_events(now - timedelta(minutes=30), [(10, "Code", "a.py"),
                                                              (5, "Firefox", "Bank — Mozilla Firefox Private Browsing")]))
    aw.close()
    first = gateway(gateway_home, "timeline", "import", "activitywatch", str(aw.path))
    assert first.returncode == 0, first.stderr
    assert f"{WINDOW}: 2 new events" in first.stderr
    assert "1 private-window event dropped, never stored" in first.stderr
    again = gateway(gateway_home, "timeline", "import", "activitywatch", str(aw.path))
    assert again.returncode == 0, again.stderr
    assert f"{WINDOW}: 0 new events" in again.stderr and "private-window" not in again.stderr
    assert stored_titles(gateway_home) == ["a.py"]


def test_watch_keeps_importing_and_marks_recording_as_running(gateway_home: Path) -> None:
    now = datetime.now(UTC)
    aw = AWDatabase(gateway_home / "aw.db", "rust")
    [last] = aw.add(WINDOW, window_events(now - timedelta(minutes=5), [(5, "Code", "first.py")]))
    aw.add(AFK, [(now - timedelta(minutes=5), 300, {"status": "not-afk"})])
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(gateway_home)}
    process = subprocess.Popen(
        gateway_command("timeline", "import", "activitywatch", str(aw.path), "--watch",
         "--every", "0.2"),
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # Ctrl-C as in a terminal: a test run started in the background (a shell's `&`) ignores SIGINT, and an
        # ignored signal stays ignored in the children it starts.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "first.py" not in stored_titles(gateway_home):
            time.sleep(0.1)
        aw.grow(last, 5 * 60 + 1)  # ActivityWatch is still writing: a heartbeat grew the newest event
        aw.add(WINDOW, [(datetime.now(UTC), 1, {"app": "Slack", "title": "second"})])
        beat = None
        while time.monotonic() < deadline:
            with sqlite3.connect(home_store(gateway_home)) as db:
                row = db.execute("SELECT value FROM meta WHERE key = 'heartbeat'").fetchone()
            if row and "second" in stored_titles(gateway_home):
                beat = json.loads(row[0])
                break
            time.sleep(0.1)
        assert beat is not None, "the watcher imported the new event and wrote a heartbeat"
        assert abs(beat["at_ms"] / 1000 - time.time()) < 30
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
        aw.close()
    assert process.returncode in (0, 1, -signal.SIGINT, 130), err
    assert out == ""
