"""The command line says what happened: `--config` reaches plugin commands, a problem exits non-zero with one
sentence, `gateway doctor` says each problem once, counts agree with their nouns."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from gateway import plural
from gateway.commands.cli import main
from gateway.testing import write_config


@pytest.fixture
def run(gateway_home):
    def invoke(*args, env=None):
        return CliRunner().invoke(main, list(args), catch_exceptions=False, env=env)

    return invoke


@pytest.fixture
def other_config(gateway_home, tmp_path):
    """The home's own config turns on `hello` only; this one, elsewhere, turns on `cron` with its own store."""
    write_config(gateway_home, {"gateway": {"plugins": ["hello"]}})
    path = tmp_path / "elsewhere" / "config.toml"
    path.parent.mkdir()
    path.write_text(f'[gateway]\nplugins = ["cron"]\n[plugins.cron]\nstore = "{tmp_path / "jobs.db"}"\n')
    return path


def test_a_plugin_command_is_found_for_the_config_given_by_option(run, other_config, tmp_path):
    added = run("--config", str(other_config), "cron", "add", "digest", "@daily", "Sum up", "--deliver",
                "ada@example.com")
    assert added.exit_code == 0, added.output
    # The command was made for that config: its [plugins.cron] store is the one written.
    assert (tmp_path / "jobs.db").is_file()
    listed = run("--config", str(other_config), "cron", "list")
    assert listed.exit_code == 0 and "digest" in listed.output
    # Nothing leaked into the process's environment for later commands to pick up.
    assert "GATEWAY_CONFIG" not in os.environ
    assert "No such command 'cron': the plugin cron is off" in run("cron", "list").output


def test_a_plugin_command_is_found_for_the_config_given_by_environment(run, other_config):
    listed = run("cron", "list", env={"GATEWAY_CONFIG": str(other_config)})
    assert listed.exit_code == 0 and "(no jobs)" in listed.output


def test_an_unknown_command_under_a_broken_config_says_why(run, gateway_home, tmp_path):
    broken = tmp_path / "broken.toml"
    broken.write_text("[gateway\n")
    result = run("--config", str(broken), "cron", "list")
    assert result.exit_code == 2
    assert "No such command 'cron' while the config cannot be used" in result.output and "not valid TOML" in result.output


@pytest.mark.parametrize("command", ["tools", "plugins", "resources", "prompts"])
def test_a_broken_config_exits_non_zero_with_its_reason(run, gateway_home, command):
    config = write_config(gateway_home, {"gateway": {"plugins": ["hello"]}})
    config.write_text('[gateway]\nplugins = "hello"\n')
    result = run(command)
    assert result.exit_code == 1
    assert "plugins must be a list of plugin names" in result.stderr
    # Nothing is listed as if it served: the gate gives nothing while the config is broken.
    assert "[on]" not in result.stdout and "hello (read-only)" not in result.stdout and "hello://" not in result.stdout


def test_tools_lists_what_serves_and_exits_non_zero_on_a_plugin_off(run, gateway_home):
    write_config(gateway_home, {"gateway": {"plugins": ["hello", "ghost"]}})
    result = run("tools")
    assert result.exit_code == 1
    assert result.stdout.startswith("hello (read-only)")
    problems = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(problems) == 1 and problems[0].startswith("problem: plugin ghost: no plugin named 'ghost'")


def test_plugins_shows_each_error_once_and_exits_non_zero(run, gateway_home):
    write_config(gateway_home, {"gateway": {"plugins": ["hello", "ghost"]}})
    result = run("plugins")
    assert result.exit_code == 1
    assert result.output.count("no plugin named 'ghost'") == 1
    assert "hello [on]" in result.stdout and "ghost [on] (not installed)" in result.stdout


def test_doctor_says_a_broken_config_once(run, gateway_home):
    config = write_config(gateway_home, {"gateway": {"plugins": ["hello"]}})
    config.write_text("[gateway\n")
    result = run("doctor")
    assert result.exit_code == 1
    assert result.output.count("is not valid TOML") == 1
    assert "1 problem found." in result.output


def test_doctor_shows_no_ok_line_for_a_plugin_that_is_off(run, gateway_home):
    write_config(gateway_home, {"gateway": {"plugins": ["hello", "sessions"]},
                                "plugins": {"sessions": {"colour": "red"}, "hello": {}}},
                 projects=[{"id": "kept", "paths": ["/srv/kept"]}])
    result = run("doctor")
    assert result.exit_code == 1
    assert "ok       plugin hello" in result.output and "5 tools" in result.output
    assert "ok       plugin sessions" not in result.output
    assert result.output.count("unknown key in [plugins.sessions]: colour") == 1  # not also a log line


def test_plural_agrees_with_the_count():
    assert plural(1, "line") == "1 line"
    assert plural(0, "session") == "0 sessions"
    assert plural(2, "entry", "entries") == "2 entries"
    assert plural(1500, "event") == "1,500 events"


def test_help_lists_the_commands_of_the_config_given(run, other_config):
    def commands(result):
        listed = result.output.split("Commands:", 1)[1]
        return {line.split()[0] for line in listed.splitlines() if line.strip()}

    assert "cron" in commands(run("--config", str(other_config), "--help"))
    assert "cron" not in commands(run("--help"))
