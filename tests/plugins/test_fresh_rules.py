"""Issue 13's rules for a refresh, on the refresh modules themselves: sources only read, nothing walked when nothing
changed, one importer of a file at a time across processes, and a kill -9 mid-refresh leaving what a clean import
would."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import gateway_sessions
import gateway_timeline
import inotify_simple
import pytest
from gateway_sessions import refresh as sessions_refresh
from gateway_timeline import refresh as timeline_refresh

from gateway.api.context import home_environment
from gateway.engine.core import Caller
from gateway.testing import folders_of, make_gateway
from tests.plugins.fresh_helpers import claude_session, open_projects
from tests.plugins.timeline.timeline_awdb import WINDOW, AWDatabase

FIXTURES = Path(__file__).resolve().parent / "sessions" / "fixtures"

_opened: list[tuple[str, tuple]] | None = None


def _audit(event: str, args: tuple) -> None:
    if _opened is not None and event in ("open", "sqlite3.connect", "os.remove", "os.rename", "os.truncate"):
        _opened.append((event, args))


sys.addaudithook(_audit)  # records only while a test sets _opened


def place_sources(home: Path) -> None:
    """Every agent's transcripts where it keeps them, and an ActivityWatch database."""
    shutil.copytree(FIXTURES / "claude-code", home / ".claude" / "projects")
    shutil.copytree(FIXTURES / "codex", home / ".codex" / "sessions")
    shutil.copytree(FIXTURES / "gemini", home / ".gemini")
    database = home / ".local" / "share" / "opencode" / "opencode.db"
    database.parent.mkdir(parents=True)
    connection = sqlite3.connect(database)
    connection.executescript((FIXTURES / "opencode" / "opencode.sql").read_text())
    connection.commit()
    connection.close()


def aw_database(home: Path) -> AWDatabase:
    path = home / ".local" / "share" / "activitywatch" / "aw-server-rust" / "sqlite.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    database = AWDatabase(path, "rust")
    from datetime import UTC, datetime, timedelta

    database.add(WINDOW, [(datetime.now(UTC) - timedelta(minutes=10), 60, {"app": "Code", "title": "orchard.py"})])
    return database


def contexts(home: Path):
    gateway = make_gateway(
        [("sessions", gateway_sessions), ("timeline", gateway_timeline)],
        home=home,
        config={"gateway": {"plugins": ["sessions", "timeline"]}, "plugins": {"timeline": {"probe_activitywatch": False}}},
        projects=open_projects(home),
    )
    snapshot = gateway.snapshot()
    gateway.catalogue(snapshot)
    return (gateway.context("sessions", snapshot, Caller()), gateway.context("timeline", snapshot, Caller()))


def tree(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))}


def test_a_refresh_opens_every_source_read_only_and_leaves_them_as_they_were(gateway_home):
    global _opened
    home = gateway_home
    place_sources(home)
    aw_database(home).close()
    sessions_ctx, timeline_ctx = contexts(home)
    places = [home / ".claude", home / ".codex", home / ".gemini", home / ".local" / "share" / "opencode",
              home / ".local" / "share" / "activitywatch"]
    before = {str(place): tree(place) for place in places}
    _opened = []
    try:
        found = sessions_refresh.refresh(sessions_ctx)
        events = timeline_refresh.refresh(timeline_ctx)
        opened, _opened = _opened, None
    finally:
        _opened = None
    assert found.added == 9 and events.added == 1  # every fixture session, the one event
    assert {str(place): tree(place) for place in places} == before
    inside = [(event, args) for event, args in opened
              if any(str(args[0]).replace("file://", "").startswith(str(place)) for place in places)]
    assert inside, "the audit hook saw the sources opened"
    for event, args in inside:
        if event == "open":
            path, mode, flags = args
            assert (mode or "r").strip("bt") == "r" and not flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT), args
        elif event == "sqlite3.connect":
            assert "mode=ro" in str(args[0]), args
        else:
            pytest.fail(f"a source was changed: {event} {args}")


def test_nothing_changed_costs_a_stat_per_watched_folder_and_file_and_no_walk(gateway_home, monkeypatch):
    home = gateway_home
    place_sources(home)
    sessions_ctx, _ = contexts(home)
    assert sessions_refresh.refresh(sessions_ctx).added == 9
    watched = sessions_refresh._watched[str(sessions_refresh.store_path(sessions_ctx))]
    expected = sum(len(w.folders) + len(w.files) for w in watched.values())
    stats: list[str] = []
    real_stat = os.stat

    def counting_stat(path, *args, **kwargs):
        stats.append(str(path))
        return real_stat(path, *args, **kwargs)

    def no_walk(*args, **kwargs):
        raise AssertionError("a folder was listed while nothing changed")

    with monkeypatch.context() as patch:
        patch.setattr(os, "stat", counting_stat)
        for name in ("scandir", "listdir", "walk"):
            patch.setattr(os, name, no_walk)
        patch.setattr(Path, "glob", no_walk)
        patch.setattr(Path, "rglob", no_walk)
        patch.setattr(Path, "iterdir", no_walk)
        assert not sessions_refresh.refresh(sessions_ctx)
    # opencode's signature stats its database and its log: one more each; an agent whose place is missing (most of
    # them in this home) costs one stat of that place.
    opencode = watched["opencode"]
    missing = sum(1 for w in watched.values() if w.missing)
    assert len(stats) == expected + len(opencode.files) + missing
    assert set(stats) >= {path for w in watched.values() for path in [*w.folders, *w.files]}
    # And a line appended is seen by the next refresh, a new file in a new project too.
    claude_session(home, "late", ["a late pear"], home / "src" / "orchard", project="-brand-new")
    assert sessions_refresh.refresh(sessions_ctx).added == 1


def _run(home: Path, script: str, **popen) -> subprocess.Popen:
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": os.pathsep.join(sys.path), **home_environment(home)}
    code = textwrap.dedent("""
        import sys, time, json
        from gateway.engine.core import Caller, make_gateway_from_environment
        gateway = make_gateway_from_environment()
        snapshot = gateway.snapshot()
        gateway.catalogue(snapshot)
        ctx = gateway.context("sessions", snapshot, Caller())
        from gateway_sessions.importers import claude_code
        from gateway_sessions.refresh import refresh
    """) + script
    return subprocess.Popen([sys.executable, "-c", code], env=env, **popen)


SLOW_READS = textwrap.dedent("""
    import os
    real = claude_code.read
    def read(path):
        with open(LOG, "a") as log:
            log.write(json.dumps(["start", str(path), os.getpid()]) + "\\n")
        time.sleep(0.03)
        parsed = real(path)
        with open(LOG, "a") as log:
            log.write(json.dumps(["end", str(path), os.getpid()]) + "\\n")
        return parsed
    claude_code.read = read
""")


def test_two_processes_refreshing_at_once_never_import_one_file_at_the_same_time(gateway_home, tmp_path):
    home = gateway_home
    write = home / "src" / "orchard"
    contexts(home)  # the config
    for n in range(12):
        claude_session(home, f"s{n}", [f"line {i} of {n}" for i in range(20)], write, project=f"-p{n % 3}")
    log = tmp_path / "reads.jsonl"
    script = f"LOG = {str(log)!r}\n" + SLOW_READS + "refresh(ctx)\n"
    both = [_run(home, script) for _ in range(2)]
    assert [process.wait(timeout=120) for process in both] == [0, 0]
    events = [json.loads(line) for line in log.read_text().splitlines()]
    reading: dict[str, int] = {}
    for kind, path, pid in events:
        if kind == "start":
            assert path not in reading, f"{path} read by two processes at once"
            reading[path] = pid
        else:
            del reading[path]
    assert sorted({path for _, path, _ in events}) == sorted(
        str(p) for p in (home / ".claude" / "projects").glob("*/*.jsonl"))
    store = folders_of(home).for_plugin("sessions").data / "sessions.db"
    connection = sqlite3.connect(store)
    assert connection.execute("SELECT COUNT(*) FROM messages").fetchone() == (12 * 20,)
    # The second process found the first one's work recorded: each file read once in all.
    assert len(events) == 2 * 12
    connection.close()


def _contents(store: Path) -> dict[str, list]:
    connection = sqlite3.connect(store)
    try:
        return {
            "sessions": connection.execute(
                "SELECT agent, id, title, cwd, created_at, updated_at, message_count FROM sessions ORDER BY id"
            ).fetchall(),
            "messages": connection.execute(
                "SELECT s.id, m.key, m.seq, m.role, m.text FROM messages AS m JOIN sessions AS s ON s.rowid = m.session"
                " ORDER BY s.id, m.key"
            ).fetchall(),
            "indexed": connection.execute("SELECT COUNT(*) FROM messages_fts_docsize").fetchall(),
            "hits": connection.execute(
                "SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'greengage'").fetchall(),
        }
    finally:
        connection.close()


def test_kill_9_during_a_call_time_refresh_leaves_the_store_as_a_clean_import_would(gateway_home, tmp_path):
    home = gateway_home
    contexts(home)
    for n in range(40):
        claude_session(home, f"k{n:02d}", [f"greengage {n} line {i}" for i in range(150)],
                       home / "src" / "orchard", project=f"-p{n % 4}")
    store = folders_of(home).for_plugin("sessions").data / "sessions.db"
    log = tmp_path / "reads.jsonl"
    # Batches of a few files (the importer's own batching, made small), each read slowly: a kill lands mid-import.
    small_batches = (
        "import functools, gateway_sessions.importing as importing\n"
        "importing.import_agent = functools.partial(importing.import_agent, batch_messages=300)\n"
    )
    victim = _run(home, f"LOG = {str(log)!r}\n" + SLOW_READS + small_batches + "refresh(ctx)\n")
    deadline = time.monotonic() + 100
    while time.monotonic() < deadline and victim.poll() is None:  # until some batches are committed, not all
        if store.exists():
            try:
                connection = sqlite3.connect(f"{store.as_uri()}?mode=ro", uri=True)
                done = connection.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
                connection.close()
            except sqlite3.Error:
                done = 0
            if 0 < done < 40:
                break
        time.sleep(0.01)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait(timeout=30)
    assert victim.returncode == -signal.SIGKILL
    interrupted = _contents(store)
    assert 0 < len(interrupted["sessions"]) < 40
    assert interrupted["indexed"] == [(len(interrupted["messages"]),)]
    # The next call's refresh (a new process) finishes it; the store is that of a clean import.
    finisher = _run(home, "refresh(ctx)\n")
    assert finisher.wait(timeout=120) == 0
    clean_home = tmp_path / "clean"
    shutil.copytree(home / ".claude", clean_home / ".claude")
    shutil.copytree(home / "src", clean_home / "src")
    contexts(clean_home)
    # The transcripts record their folder (cwd) under the first home: the clean copy keeps the same paths.
    assert _run(clean_home, "refresh(ctx)\n").wait(timeout=120) == 0
    clean = _contents(folders_of(clean_home).for_plugin("sessions").data / "sessions.db")
    assert _contents(store) == clean
    assert len(clean["sessions"]) == 40 and clean["hits"] == [(40 * 150,)]


# With the kernel's file notifications (gateway.api.changes): nothing changed = nothing stat'ed at all.

class _Counted:
    """Every stat, lstat and listing made while it is on."""

    def __init__(self, monkeypatch) -> None:
        self.paths: list[str] = []
        self._patch = monkeypatch

    def __enter__(self) -> _Counted:
        real_stat, real_lstat = os.stat, os.lstat
        self._context = self._patch.context()
        patch = self._context.__enter__()

        def stat(path, *args, **kwargs):
            self.paths.append(str(path))
            return real_stat(path, *args, **kwargs)

        def lstat(path, *args, **kwargs):
            self.paths.append(str(path))
            return real_lstat(path, *args, **kwargs)

        def listing(*args, **kwargs):
            raise AssertionError("a folder was listed while nothing changed")

        patch.setattr(os, "stat", stat)
        patch.setattr(os, "lstat", lstat)
        for name in ("scandir", "listdir", "walk"):
            patch.setattr(os, name, listing)
        return self

    def __exit__(self, *exc_info) -> None:
        self._context.__exit__(*exc_info)


def _settled(stale, ctx) -> None:
    """Calls until the stale check trusts its notifications (a folder watched anew is trusted from the next pass)."""
    for _ in range(3):
        assert not stale(ctx)


def test_nothing_changed_stats_nothing_when_file_notifications_work(gateway_home, monkeypatch):
    home = gateway_home
    place_sources(home)
    database = aw_database(home)
    sessions_ctx, timeline_ctx = contexts(home)
    assert sessions_refresh.refresh(sessions_ctx).added == 9
    assert timeline_refresh.refresh(timeline_ctx).added == 1
    _settled(sessions_refresh.stale, sessions_ctx)
    _settled(timeline_refresh.stale, timeline_ctx)
    with _Counted(monkeypatch) as counted:
        for _ in range(5):
            assert not sessions_refresh.stale(sessions_ctx)
            assert not timeline_refresh.stale(timeline_ctx)
    assert counted.paths == []
    # And the next change is seen by the next call, with its stats.
    from datetime import UTC, datetime

    database.add(WINDOW, [(datetime.now(UTC), 30, {"app": "Code", "title": "quince.py"})])
    with _Counted(monkeypatch) as counted:
        assert timeline_refresh.stale(timeline_ctx)
    assert counted.paths
    assert timeline_refresh.refresh(timeline_ctx).added == 1
    database.close()


def _replace(path: Path, text: str) -> None:
    aside = path.parent.parent / f"{path.name}.tmp"
    aside.write_text(text)
    os.replace(aside, path)


@pytest.mark.parametrize("change", ["append in place", "new project", "new file in a project", "atomic replace",
                                    "deletion"])
def test_each_change_to_the_transcripts_is_seen_by_the_next_call(gateway_home, change):
    home = gateway_home
    orchard = home / "src" / "orchard"
    contexts(home)
    kept = claude_session(home, "kept", ["graft the pears", "grafted"], orchard, project="-p1")
    ctx, _ = contexts(home)
    assert sessions_refresh.refresh(ctx).added == 1
    _settled(sessions_refresh.stale, ctx)
    watched = sessions_refresh._watched[str(sessions_refresh.store_path(ctx))]["claude-code"]
    if change == "append in place":
        claude_session(home, "kept", ["and water the quinces"], orchard, project="-p1", append=True, first=3)
    elif change == "new project":
        claude_session(home, "fresh", ["a late medlar"], orchard, project="-brand-new")
    elif change == "new file in a project":
        claude_session(home, "fresh", ["a late medlar"], orchard, project="-p1")
    elif change == "atomic replace":
        lines = kept.read_text()
        _replace(kept, lines + lines.replace("graft the pears", "prune the medlars").replace("kept-1", "kept-9"))
    else:
        kept.unlink()
    assert sessions_refresh.stale(ctx)
    found = sessions_refresh.refresh(ctx)
    if change.startswith("new"):
        assert found.added == 1
    elif change == "deletion":
        assert str(kept) in watched.files  # before
        assert str(kept) not in sessions_refresh._watched[str(sessions_refresh.store_path(ctx))]["claude-code"].files
    else:
        assert found.changed  # the session was read again
    store = folders_of(home).for_plugin("sessions").data / "sessions.db"
    connection = sqlite3.connect(store)
    texts = " ".join(row[0] for row in connection.execute("SELECT text FROM messages"))
    connection.close()
    if change == "append in place":
        assert "water the quinces" in texts
    elif change.startswith("new"):
        assert "late medlar" in texts
    elif change == "atomic replace":
        assert "prune the medlars" in texts
    _settled(sessions_refresh.stale, ctx)  # and quiet again after


@pytest.fixture
def no_notifications(monkeypatch):
    from gateway.api import changes

    fresh = changes._Hub()
    monkeypatch.setattr(changes, "_hub", fresh)
    monkeypatch.setenv(changes.DISABLE, "0")
    return fresh


def test_without_file_notifications_each_call_stats_its_sources_and_sees_a_change(gateway_home, monkeypatch,
                                                                                    no_notifications):
    home = gateway_home
    place_sources(home)
    sessions_ctx, _ = contexts(home)
    assert sessions_refresh.refresh(sessions_ctx).added == 9
    watched = sessions_refresh._watched[str(sessions_refresh.store_path(sessions_ctx))]
    paths = {path for w in watched.values() for path in [*w.folders, *w.files]}
    for _ in range(2):
        with _Counted(monkeypatch) as counted:
            assert not sessions_refresh.stale(sessions_ctx)
        assert set(counted.paths) >= paths
    claude_session(home, "late", ["a late pear"], home / "src" / "orchard", project="-brand-new")
    assert sessions_refresh.stale(sessions_ctx)
    assert sessions_refresh.refresh(sessions_ctx).added == 1


def test_after_a_queue_overflow_the_next_call_stats_its_sources(gateway_home, monkeypatch):
    from gateway.api import changes

    home = gateway_home
    place_sources(home)
    sessions_ctx, _ = contexts(home)
    assert sessions_refresh.refresh(sessions_ctx).added == 9
    _settled(sessions_refresh.stale, sessions_ctx)
    # The kernel's queue overflowed (events lost, among them perhaps a transcript's): as the hub reads it.
    inotify = changes._hub.instance()
    overflow = inotify_simple.Event(wd=-1, mask=inotify_simple.flags.Q_OVERFLOW, cookie=0, name="")
    real_read, pending = inotify.read, [overflow]

    def read(timeout=None):
        said, pending[:] = [*pending, *real_read(timeout=timeout)], []
        return said

    monkeypatch.setattr(inotify, "read", read)
    with _Counted(monkeypatch) as counted:
        assert not sessions_refresh.stale(sessions_ctx)
    watched = sessions_refresh._watched[str(sessions_refresh.store_path(sessions_ctx))]
    assert set(counted.paths) >= {path for w in watched.values() for path in [*w.folders, *w.files]}
    with _Counted(monkeypatch) as counted:
        assert not sessions_refresh.stale(sessions_ctx)
    assert counted.paths == []  # trusted again after that stat pass


def test_an_append_in_place_stats_that_transcript_alone(gateway_home, monkeypatch):
    home = gateway_home
    place_sources(home)
    sessions_ctx, _ = contexts(home)
    assert sessions_refresh.refresh(sessions_ctx).added == 9
    _settled(sessions_refresh.stale, sessions_ctx)
    watched = sessions_refresh._watched[str(sessions_refresh.store_path(sessions_ctx))]
    transcript = next(path for path in watched["claude-code"].files if "subagents" not in path)
    with open(transcript, "a") as handle:
        handle.write('{"type": "user", "uuid": "late-1", "message": {"role": "user", "content": "a late plum"}}\n')
    with _Counted(monkeypatch) as counted:
        assert sessions_refresh.stale(sessions_ctx)
    assert counted.paths == [transcript]  # the notifications named it: none of the other folders and files
    with _Counted(monkeypatch) as counted:
        found = sessions_refresh.refresh(sessions_ctx)
    assert found.changed
    assert transcript in counted.paths and not set(counted.paths) & set(watched["codex"].files)
    _settled(sessions_refresh.stale, sessions_ctx)


@pytest.mark.parametrize("notifications", ["inotify", "stats"])
def test_an_agent_installed_later_is_found_by_the_next_call_and_home_noise_stats_nothing(
        gateway_home, monkeypatch, request, notifications):
    if notifications == "stats":
        request.getfixturevalue("no_notifications")
    home = gateway_home
    ctx, _ = contexts(home)
    assert not sessions_refresh.refresh(ctx)  # no agent at all yet
    _settled(sessions_refresh.stale, ctx)
    (home / ".bashrc").write_text("# a file made in the home folder, the nearest folder of the agents' places\n")
    (home / "Downloads").mkdir()
    assert not sessions_refresh.stale(ctx)
    if notifications == "inotify":
        with _Counted(monkeypatch) as counted:
            assert not sessions_refresh.stale(ctx)
        assert counted.paths == []
    claude_session(home, "first", ["the first pear"], home / "src" / "orchard", project="-p1")  # ~/.claude made
    assert sessions_refresh.stale(ctx)
    assert sessions_refresh.refresh(ctx).added == 1


def test_the_plugins_shutdown_stops_their_file_notifications(gateway_home):
    from gateway.engine.registry import lifecycle_of

    home = gateway_home
    place_sources(home)
    aw_database(home).close()
    gateway = make_gateway(
        [("sessions", gateway_sessions), ("timeline", gateway_timeline)], home=home,
        config={"gateway": {"plugins": ["sessions", "timeline"]}, "plugins": {"timeline": {"probe_activitywatch": False}}},
        projects=open_projects(home),
    )
    with lifecycle_of(gateway):
        snapshot = gateway.snapshot()
        gateway.catalogue(snapshot)
        sessions_ctx = gateway.context("sessions", snapshot, Caller())
        timeline_ctx = gateway.context("timeline", snapshot, Caller())
        sessions_refresh.refresh(sessions_ctx)
        timeline_refresh.refresh(timeline_ctx)
        _settled(sessions_refresh.stale, sessions_ctx)
        _settled(timeline_refresh.stale, timeline_ctx)
        watchers = [sessions_refresh._changes[str(sessions_refresh.store_path(sessions_ctx))][1],
                    timeline_refresh._changes_of(timeline_ctx)]
        assert all(changes.watching and changes.quiet() for changes in watchers)
    assert all(changes.watching == 0 and not changes.quiet() for changes in watchers)
    assert not sessions_refresh._changes and not timeline_refresh._changes
    # A call after that (another gateway of the process) stats, and watches again.
    assert not sessions_refresh.stale(sessions_ctx)
    assert sessions_refresh._changes
