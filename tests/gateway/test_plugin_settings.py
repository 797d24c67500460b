"""`ctx.plugin_settings(name)` and `PluginHost.plugin_settings(name)`: another plugin's table, from the config the
core read (whichever file `--config` named), as a copy."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import tomli_w

from gateway import Answer, Context, Tool
from gateway.api.context import home_environment
from gateway.testing import inline_plugin, make_gateway, write_config
from tests.forkserver import gateway_command


def peek(ctx: Context) -> Answer:
    """Another plugin's table, as this call sees it."""
    table = ctx.plugin_settings("other")
    table.setdefault("added", True)  # a copy: the core's config must not change
    return Answer(text=repr(sorted(ctx.plugin_settings("other").items())) + repr(ctx.plugin_settings("none")))


def test_a_tool_reads_another_plugins_table_as_written_in_this_calls_config(gateway_home: Path) -> None:
    other = inline_plugin("other")
    gateway = make_gateway([inline_plugin("peeker", tools=[Tool.from_function(peek, read_only=True)]), other],
                           home=gateway_home, config={"gateway": {"plugins": ["peeker"]},
                                                      "plugins": {"other": {"accounts": [{"name": "a"}]}}})
    answer = gateway.call("peek")
    assert not answer.is_error, answer.text
    assert answer.text == "[('accounts', [{'name': 'a'}])]{}"
    write_config(gateway_home, {"gateway": {"plugins": ["peeker"]}, "plugins": {"other": {"x": 1}}})
    assert gateway.call("peek").text == "[('x', 1)]{}"  # read again once the config changed


COMMAND = '''
import click
from gateway import hookimpl

@hookimpl
def register_commands(gateway):
    @click.command("peek")
    def peek():
        click.echo(sorted(gateway.plugin_settings("other").items()))
    return [peek]
'''


def test_a_command_reads_another_plugins_table_from_the_config_given_with_dash_dash_config(
        gateway_home: Path, tmp_path: Path) -> None:
    from gateway.testing import installed_plugin

    site = tmp_path / "site"
    extra = installed_plugin(site, "peeker", COMMAND)
    write_config(gateway_home, {"gateway": {"plugins": ["peeker"]}, "plugins": {"other": {"where": "default"}}})
    elsewhere = tmp_path / "elsewhere.toml"
    elsewhere.write_text(tomli_w.dumps({"gateway": {"plugins": ["peeker"]}, "plugins": {"other": {"where": "there"}}}))
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(gateway_home), **extra}
    run = subprocess.run(gateway_command("--config", str(elsewhere), "peek"), env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[('where', 'there')]"
