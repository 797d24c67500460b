"""`gateway watch` keeps every plugin fresh with no call, on the system's notifications or by polling, and writes its
heartbeat; `gateway doctor` says where each source was found, what is stale, and whether watch runs."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import pytest

from gateway.api.context import home_environment
from gateway.commands.watch import read_heartbeat, watch
from gateway.engine.core import make_gateway_from_environment
from gateway.testing import folders_of, write_config
from tests.forkserver import gateway_command
from tests.plugins.fresh_helpers import claude_session, open_projects


def _sessions(home: Path) -> list[str]:
    store = folders_of(home).for_plugin("sessions").data / "sessions.db"
    if not store.exists():
        return []
    connection = sqlite3.connect(f"{store.as_uri()}?mode=ro", uri=True)
    try:
        return [row[0] for row in connection.execute("SELECT id FROM sessions ORDER BY id")]
    except sqlite3.OperationalError:
        return []
    finally:
        connection.close()


@pytest.mark.parametrize("polling", [False, True])
def test_watch_imports_what_an_agent_writes_with_no_call_and_beats(gateway_home, polling):
    home = gateway_home
    write_config(home, {"gateway": {"plugins": ["sessions"]}}, open_projects(home))
    claude_session(home, "early", ["sow the beans"], home / "src" / "orchard")
    gateway = make_gateway_from_environment(entrypoints=True)
    said: list[str] = []
    stop = threading.Event()
    thread = threading.Thread(target=watch, args=(gateway, said.append),
                              kwargs={"every": 0.2, "stop": stop, "polling": polling}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while _sessions(home) != ["early"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _sessions(home) == ["early"]
        claude_session(home, "late", ["harvest the beans"], home / "src" / "orchard", project="-new-project")
        while _sessions(home) != ["early", "late"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _sessions(home) == ["early", "late"]
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive()
    beat = read_heartbeat(gateway)
    assert beat["pid"] == os.getpid() and beat["how"] == ("polling" if polling else "notifications")
    assert abs(beat["at_ms"] / 1000 - time.time()) < 600


def test_doctor_lists_each_source_found_or_not_and_what_is_stale(gateway_home):
    home = gateway_home
    write_config(home, {"gateway": {"plugins": ["sessions", "timeline"]},
                        "plugins": {"timeline": {"probe_activitywatch": False}}}, open_projects(home))
    claude_session(home, "one", ["a pear"], home / "src" / "orchard")
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(home)}

    def doctor() -> str:
        done = subprocess.run(gateway_command("doctor"), env=env, capture_output=True, text=True,
                              timeout=120)
        return done.stdout

    first = doctor()
    claude_root = home / ".claude" / "projects"
    assert f"stale    sessions: Claude Code transcripts (1) at {claude_root}: 1 of 1 transcripts" in first
    assert f"-        sessions: no Codex transcripts at {home / '.codex' / 'sessions'}" in first
    assert "-        timeline: no ActivityWatch database at " in first
    assert "gateway watch is not running" in first
    assert "ok       file notifications (inotify): a call whose sources did not change reads nothing" in first
    off = subprocess.run(gateway_command("doctor"), env={**env, "GATEWAY_FILE_NOTIFICATIONS": "0"},
                         capture_output=True, text=True, timeout=120).stdout
    assert "-        file notifications unavailable (GATEWAY_FILE_NOTIFICATIONS=0): each call stats its sources" in off
    once = subprocess.run(gateway_command("watch", "--once"), env=env, capture_output=True,
                          text=True, timeout=120)
    assert once.returncode == 0 and "sessions: 1 new" in once.stderr
    assert f"ok       sessions: Claude Code transcripts (1) at {claude_root}" in doctor()
