"""A real host set up with `gateway setup --write` gets the built-in plugins only, never the example plugin's toys;
a config of the person's own is never touched."""

from __future__ import annotations

import json
import tomllib

import pytest
from click.testing import CliRunner

from gateway.commands.cli import main
from gateway.commands.setup import config_file
from gateway.engine.registry import BUILT_IN_ORDER
from gateway.testing import folders_of


@pytest.fixture
def run(gateway_home):
    def invoke(*args):
        return CliRunner().invoke(main, list(args), catch_exceptions=False)

    return invoke


def test_setup_write_makes_a_config_naming_the_built_in_plugins(run, gateway_home):
    config = folders_of(gateway_home).config / "config.toml"
    assert "hello" in run("tools").stdout  # no config: every installed plugin is on, the example's toys too
    result = run("setup", "--host", "cursor", "--write")
    assert result.exit_code == 0 and f"Wrote {config}" in result.output
    plugins = tomllib.loads(config.read_text())["gateway"]["plugins"]
    assert plugins == list(BUILT_IN_ORDER)  # the built-ins by name, whatever else the person installed
    assert "remove a name to turn that plugin off" in config.read_text() and "disabled_tools" in config.read_text()
    listed = [line.split(" ")[0] for line in run("tools").stdout.splitlines()]
    assert listed and not {"hello", "echo", "whose"} & set(listed)


def test_an_existing_config_is_never_touched(run, gateway_home):
    config = folders_of(gateway_home).config / "config.toml"
    config.parent.mkdir(parents=True)
    mine = b'# mine\n[gateway]\nplugins = ["hello"]   # just the toy\n'
    config.write_bytes(mine)
    result = run("setup", "--host", "cursor", "--write")
    assert result.exit_code == 0 and "Wrote" not in result.output
    assert config.read_bytes() == mine


def test_setup_without_write_says_the_toys_would_be_on_and_writes_nothing(run, gateway_home):
    result = run("setup", "--host", "claude-code")
    assert result.exit_code == 0
    assert result.stdout.startswith("claude mcp add")  # stdout stays the line to paste
    # The example plugin is named; plugins of the person's own in the same environment may be named with it.
    assert "hello (gateway-hello)" in result.stderr and " too. " in result.stderr and "--write" in result.stderr
    assert not (folders_of(gateway_home).config / "config.toml").exists()


def test_a_config_named_on_the_command_line_reaches_the_host_entry(run, gateway_home, tmp_path):
    mine = tmp_path / "mine.toml"
    mine.write_text('[gateway]\nplugins = ["cron"]\n')
    assert run("--config", str(mine), "setup", "--host", "cursor", "--write").exit_code == 0
    entry = json.loads(config_file("cursor").read_text())["mcpServers"]["gateway"]
    assert entry["args"][-3:] == ["--config", str(mine), "serve"]
    assert mine.read_text() == '[gateway]\nplugins = ["cron"]\n'
