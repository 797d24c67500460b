"""What makes `gateway` start light: the public API imported on first use, the cycle collector held off while
starting, each plugin distribution's metadata read once, and a command's kept answer (`gateway.replayable`)."""

from __future__ import annotations

import gc
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import platformdirs
import pytest

import gateway
from gateway.api.context import APP_NAME
from gateway.commands import replay
from gateway.engine import startup
from gateway.engine.registry import discover_entry_points
from gateway.testing import write_config


def test_import_gateway_imports_none_of_its_modules_until_a_name_is_asked() -> None:
    done = subprocess.run([sys.executable, "-c", "import sys, gateway; print(sorted(m for m in sys.modules if "
                           "m.startswith(('gateway.', 'structlog', 'pydantic', 'mcp'))))"],
                          capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "[]"


def test_every_public_name_is_there_and_a_wrong_one_is_an_attribute_error() -> None:
    for name in gateway.__all__:
        assert getattr(gateway, name) is not None, name
    assert gateway.words_pattern is importlib.import_module("gateway.gate.traits")._pattern
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        gateway.nothing_here  # noqa: B018


def test_the_collector_is_released_only_by_whoever_held_it() -> None:
    assert gc.isenabled()
    startup.release()  # not held: nothing changes
    assert gc.isenabled()
    try:
        startup.hold()
        assert not gc.isenabled()
        startup.release()
        assert gc.isenabled() and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.enable()


def test_a_served_gateway_collects_again_once_started(gateway_home: Path) -> None:
    """The Lifecycle's start lets the collector run again: a host's long session is not left without it."""
    code = ("import gc, sys; from gateway.engine import startup; startup.hold();"
            "from gateway.engine.core import make_gateway_from_environment;"
            "from gateway.engine.registry import lifecycle_of;"
            "g = make_gateway_from_environment(); held = gc.isenabled();"
            "lifecycle_of(g).start(); print(held, gc.isenabled())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120,
                          env=dict(os.environ))
    assert done.stdout.split() == ["False", "True"]


def test_plugins_are_found_with_each_distributions_own_name_and_version() -> None:
    for candidate in discover_entry_points():
        if candidate.origin == "built-in":
            assert candidate.version == importlib.metadata.version("mcp-gateway")
        else:
            assert candidate.version == importlib.metadata.version(candidate.origin)


def test_the_kept_answers_folder_is_platformdirs_cache_folder(gateway_home: Path, monkeypatch) -> None:
    assert replay.APP_NAME == APP_NAME
    assert replay._cache_folder() == os.path.join(platformdirs.user_cache_dir(APP_NAME), "replay")
    monkeypatch.setenv("XDG_CACHE_HOME", "  ")
    assert replay._cache_folder() == os.path.join(platformdirs.user_cache_dir(APP_NAME), "replay")


@pytest.fixture
def kept(gateway_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> Path:
    """A file the answer depends on, a minute old; this process taken as `gateway demo count`."""
    watched = gateway_home / "watched.txt"
    watched.write_text("one")
    os.utime(watched, (os.path.getmtime(watched) - 60,) * 2)
    monkeypatch.setattr(replay, "_running", None)
    assert not replay.replayed(["demo", "count"])  # nothing kept yet; this process now runs that line
    capsys.readouterr()
    return watched


def test_an_answer_is_said_again_while_what_it_read_is_unchanged(kept: Path, capsys, monkeypatch) -> None:
    assert replay.record(f"3 things ({replay.SECONDS} s)\n", [kept], None)
    assert replay.replayed(["demo", "count"])
    assert capsys.readouterr().out.startswith("3 things (0.")
    assert not replay.replayed(["demo", "count", "--all"])  # another command line
    monkeypatch.setenv("GATEWAY_PROFILE", "work")
    assert not replay.replayed(["demo", "count"])  # another profile
    monkeypatch.delenv("GATEWAY_PROFILE")
    kept.write_text("two")  # what it read changed
    assert not replay.replayed(["demo", "count"])
    assert capsys.readouterr().out == ""


def test_a_path_changed_just_now_keeps_nothing_and_forgets_what_was_kept(kept: Path) -> None:
    assert replay.record("3 things\n", [kept], None)
    kept.touch()
    assert not replay.record("3 things\n", [kept], None)
    os.utime(kept, (os.path.getmtime(kept) - 60,) * 2)
    assert not replay.replayed(["demo", "count"])


def test_a_damaged_kept_answer_runs_the_command(kept: Path) -> None:
    assert replay.record("3 things\n", [kept], None)
    for path in Path(replay._cache_folder()).iterdir():
        assert path.stat().st_mode & 0o777 == 0o600
        path.write_bytes(b"\x00not marshal")
    assert not replay.replayed(["demo", "count"])


def test_outside_the_gateway_command_nothing_is_kept(gateway_home: Path, monkeypatch) -> None:
    monkeypatch.setattr(replay, "_running", None)
    assert not replay.record("3 things\n", [], None)
    assert not replay.replayable("3 things\n", [])


# What a start to its first tools/list answer does without: the modules the tools read their things with (imported
# when a tool runs), the plugins' settings models (what they made of the table is kept between starts), the kernel's
# file notifications with ctypes (the config's folders are watched from a later call on), and the XML parser that
# checks icons (a host of a revision before icons is given none).
NOT_AT_START = (
    "gateway_time.invoices", "gateway_time.timewarrior", "gateway_time.described", "gateway_texts.people",
    "gateway_ledger.budgets", "gateway_ledger.gate", "gateway_cron.settings", "gateway_ledger.settings",
    "gateway_mail.settings", "gateway_papers.settings", "gateway_sessions.settings", "gateway_spam.settings",
    "gateway_texts.settings", "gateway_time.settings", "inotify_simple", "ctypes", "gateway.api.changes",
    "xml.etree.ElementTree",
)
OPENING = [
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
]


def _start_to_the_tools_list(home: Path) -> tuple[bytes, set[str]]:
    """One real `gateway serve` (no fork server) to its tools/list answer: the answer, and the modules it imported."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    env.pop("GATEWAY_TEST_LAUNCHER", None)
    process = subprocess.Popen([sys.executable, "-m", "gateway", "serve"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=home)
    answer = b""
    for message in OPENING:
        process.stdin.write((json.dumps(message) + "\n").encode())
        process.stdin.flush()
        if "id" in message:
            answer = process.stdout.readline()
    process.stdin.close()
    said = process.stderr.read().decode(errors="replace")
    process.wait(60)
    process.stdout.close()
    imported = {text.rsplit("|", 1)[1].strip() for text in said.splitlines() if text.startswith("import time:")}
    return answer, imported


def test_a_start_to_its_first_answer_imports_only_what_the_answer_needs(gateway_home: Path) -> None:
    installed = sorted({entry.name for entry in importlib.metadata.entry_points(group="gateway.plugins")})
    write_config(gateway_home, {"gateway": {"plugins": installed}})
    first, imported_first = _start_to_the_tools_list(gateway_home)
    assert "gateway_mail.settings" in imported_first  # nothing kept yet: the models are made, and kept
    _start_to_the_tools_list(gateway_home)  # the folders the first start made are there from now on
    again, imported = _start_to_the_tools_list(gateway_home)
    assert json.loads(again) == json.loads(first) and len(json.loads(again)["result"]["tools"]) > 40
    assert "gateway_time.tools" in imported  # the plugins were loaded
    assert sorted(set(NOT_AT_START) & imported) == []
