"""`gateway sessions import|show|list`, run as the person would."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from conftest import FIXTURES, PEARS, PLUMS, place_fixtures

from gateway.cli import main
from gateway.testing import write_config


def _run(*arguments: str):
    return CliRunner().invoke(main, list(arguments), catch_exceptions=False)


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
    result = CliRunner().invoke(main, ["sessions", "import", "all", str(FIXTURES)])
    assert result.exit_code == 2 and "PATH belongs to one agent" in result.output
    missing = CliRunner().invoke(main, ["sessions", "show", "nope-123"])
    assert missing.exit_code == 1 and "session not found: nope-123" in missing.output
