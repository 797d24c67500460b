"""`gateway sessions import|show|list`, run as the person would."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from conftest import FIXTURES, PEARS, PLUMS, place_fixtures
from gateway_sessions.cli import commands

from gateway import Folders, PluginHost
from gateway.testing import write_config


def _run(*arguments: str):
    """`gateway sessions ...` for the home of this test (the commands are built for it, as the CLI builds them)."""
    assert arguments[0] == "sessions"
    host = PluginHost(name="sessions", folders=Folders.from_environment().for_plugin("sessions"), settings={})
    (group,) = commands(host)
    return CliRunner().invoke(group, list(arguments[1:]))


def test_import_all_then_list_and_show_with_tool_blocks(gateway_home: Path):
    write_config(gateway_home, {"gateway": {"plugins": ["sessions"]}})
    place_fixtures(gateway_home)
    result = _run("sessions", "import")
    assert result.exit_code == 0, result.output
    assert "claude-code: 4 sessions, 11 messages from 4 files (0 unchanged)" in result.output
    assert "codex: 1 sessions, 5 messages from 1 files (0 unchanged)" in result.output
    assert "gemini: 2 sessions, 6 messages from 2 files (0 unchanged)" in result.output
    assert "opencode: 2 sessions, 3 messages from 1 files (0 unchanged)" in result.output
    assert "1 lines could not be read" in result.output
    again = _run("sessions", "import", "all")
    assert "claude-code: 0 sessions, 0 messages from 0 files (4 unchanged)" in again.output

    listed = _run("sessions", "list", "--limit", "2").output.splitlines()
    assert len(listed) == 2 and listed[0].startswith("ses_01JOrchardApricot Apricot drying schedule msgs=2")

    shown = _run("sessions", "show", PEARS).output
    assert "tool_use Bash" in shown and "quinceflux" in shown and "(thinking)" in shown
    assert shown.splitlines()[0] == f"id: {PEARS}"


def test_import_of_one_agent_from_a_given_path(gateway_home: Path):
    write_config(gateway_home, {"gateway": {"plugins": ["sessions"]}})
    result = _run("sessions", "import", "codex", str(FIXTURES / "codex"))
    assert result.exit_code == 0 and "codex: 1 sessions" in result.output
    assert "claude-code" not in result.output
    assert _run("sessions", "show", PLUMS).exit_code == 0


def test_a_path_needs_one_agent_and_an_unknown_id_is_named(gateway_home: Path):
    write_config(gateway_home, {"gateway": {"plugins": ["sessions"]}})
    result = _run("sessions", "import", "all", str(FIXTURES))
    assert result.exit_code == 2 and "PATH belongs to one agent" in result.output
    missing = _run("sessions", "show", "nope-123")
    assert missing.exit_code == 1 and "session not found: nope-123" in missing.output


def test_gateway_sessions_import_runs_as_a_command_of_the_gateway(gateway_home: Path):
    import os
    import subprocess
    import sys

    from gateway.context import home_environment

    write_config(gateway_home, {"gateway": {"plugins": ["sessions"]}})
    place_fixtures(gateway_home)
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(gateway_home)}
    run = subprocess.run(
        [sys.executable, "-m", "gateway", "sessions", "import", "claude-code"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert "claude-code: 4 sessions, 11 messages from 4 files" in run.stdout
    assert "\r" not in run.stderr  # no progress bar when standard error is not a terminal
