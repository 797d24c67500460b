"""`gateway sessions import|show|list`, run as the person would."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from gateway_sessions.cli import commands

from gateway import Folders, PluginHost
from gateway.testing import write_config
from tests.forkserver import gateway_command
from tests.plugins.sessions.sessions_helpers import FIXTURES, NOTES, PEARS, PLUMS, SUBAGENT, place_fixtures


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
    assert "codex: 1 session, 5 messages from 1 file (0 unchanged)" in result.output
    assert "gemini: 2 sessions, 6 messages from 2 files (0 unchanged)" in result.output
    assert "opencode: 2 sessions, 3 messages from 1 file (0 unchanged)" in result.output
    assert "1 line could not be read and was passed over" in result.output
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
    assert result.exit_code == 0 and "codex: 1 session, 5 messages from 1 file" in result.output
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

    from gateway.api.context import home_environment

    write_config(gateway_home, {"gateway": {"plugins": ["sessions"]}})
    place_fixtures(gateway_home)
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(gateway_home)}
    run = subprocess.run(
        gateway_command("sessions", "import", "claude-code"),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert "claude-code: 4 sessions, 11 messages from 4 files" in run.stdout
    assert "\r" not in run.stderr  # no progress bar when standard error is not a terminal


def test_claude_code_given_one_projects_folder_imports_it(gateway_home: Path):
    write_config(gateway_home, {"gateway": {"plugins": ["sessions"]}})
    project = FIXTURES / "claude-code" / "-home-ada-src-orchard"
    result = _run("sessions", "import", "claude-code", str(project))
    assert result.exit_code == 0, result.output
    # Its two sessions and the subagent of one of them; not the other project's.
    assert f"claude-code: 3 sessions, 9 messages from 3 files (0 unchanged) in {project}" in result.output
    listed = _run("sessions", "list").output
    assert PEARS in listed and NOTES in listed and SUBAGENT in listed
    assert "9e8d7c6b" not in listed
    one_file = _run("sessions", "import", "claude-code", str(project / f"{PEARS}.jsonl"))
    assert one_file.exit_code == 0 and "0 files (1 unchanged)" in one_file.output  # read already, with its folder


def test_a_path_that_does_not_exist_exits_non_zero_saying_what_to_give(gateway_home: Path):
    write_config(gateway_home, {"gateway": {"plugins": ["sessions"]}})
    result = _run("sessions", "import", "claude-code", str(gateway_home / "nonexistent"))
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"Error: {gateway_home / 'nonexistent'} does not exist; give claude-code's the folder of per-project "
        "folders (~/.claude/projects), one project's folder in it, or one .jsonl transcript"
    ]
    assert "0 sessions" not in result.output
    codex = _run("sessions", "import", "codex", "/nonexistent")
    assert codex.exit_code == 1 and "~/.codex/sessions" in codex.output


def test_a_folder_holding_no_transcripts_exits_non_zero_saying_what_to_give(gateway_home: Path):
    write_config(gateway_home, {"gateway": {"plugins": ["sessions"]}})
    place_fixtures(gateway_home)
    # ~/.claude instead of ~/.claude/projects: there, but nothing Claude Code wrote.
    result = _run("sessions", "import", "claude-code", str(gateway_home / ".claude"))
    assert result.exit_code == 1
    assert f"Error: no claude-code transcripts in {gateway_home / '.claude'}; give PATH as" in result.output
    # One agent named, its default place missing: said, non-zero; `all` passes over agents not used here.
    (gateway_home / ".gemini" / "tmp").rename(gateway_home / ".gemini" / "elsewhere")
    missing = _run("sessions", "import", "gemini")
    assert missing.exit_code == 1, missing.output
    assert f"gemini: nothing imported, {gateway_home / '.gemini' / 'tmp'} does not exist" in missing.output
    assert "or the setting `gemini`" in missing.output
    everyone = _run("sessions", "import")
    assert everyone.exit_code == 0, everyone.output
    assert "gemini: nothing imported" in everyone.output and "Error" not in everyone.output


def test_show_takes_a_unique_start_of_an_id_and_names_a_few_when_several_begin_so(gateway_home: Path):
    write_config(gateway_home, {"gateway": {"plugins": ["sessions"]}})
    place_fixtures(gateway_home)
    assert _run("sessions", "import").exit_code == 0
    shown = _run("sessions", "show", PEARS[:8])
    assert shown.exit_code == 0 and shown.output.splitlines()[0] == f"id: {PEARS}"
    # NOTES and its subagent share the start of their ids: ambiguous, both named.
    ambiguous = _run("sessions", "show", NOTES[:6])
    assert ambiguous.exit_code == 1
    assert f"{NOTES[:6]} is the start of several session ids ({NOTES}, {SUBAGENT}): give more of it" in (
        ambiguous.output
    )
    assert _run("sessions", "show", NOTES).output.splitlines()[0] == f"id: {NOTES}"  # a whole id is that one
    assert "session not found: zz" in _run("sessions", "show", "zz").output


def test_list_and_show_of_an_empty_store_say_how_to_fill_it(gateway_home: Path):
    write_config(gateway_home, {"gateway": {"plugins": ["sessions"]}})
    listed = _run("sessions", "list")
    assert listed.output.splitlines() == ["(no sessions)", "The store is empty: `gateway sessions import` fills it."]
    shown = _run("sessions", "show", "abc")
    assert shown.exit_code == 1 and "`gateway sessions import` fills it" in shown.output


def test_a_store_that_is_not_a_database_is_said_in_a_sentence_not_a_traceback(gateway_home: Path):
    import os
    import subprocess

    from gateway.api.context import home_environment
    from gateway.testing import folders_of

    write_config(gateway_home, {"gateway": {"plugins": ["sessions"]}})
    place_fixtures(gateway_home)
    store_file = folders_of(gateway_home).data / "plugins" / "sessions" / "sessions.db"
    store_file.parent.mkdir(parents=True, exist_ok=True)
    store_file.write_bytes(bytes(range(256)) * 400)  # garbage, not SQLite
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(gateway_home)}
    run = subprocess.run(gateway_command("sessions", "import"), env=env, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr + run.stdout
    assert f"the sessions store {store_file} cannot be used: SQLite says file is not a database" in run.stderr
    assert f"mv '{store_file}' '{store_file}.damaged'" in run.stderr
    assert store_file.read_bytes() == bytes(range(256)) * 400  # left as it was, for the person to look at
