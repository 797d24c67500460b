"""`gateway NAME ...` where NAME is an enabled plugin's: that plugin alone is loaded and asked for its command, and
the command found so is the one asking every plugin finds (`PluginCommands`'s rule); another plugin that is broken
or exits while importing changes nothing for it; an off plugin's command is refused with the sentence that says
how to turn it on."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from gateway import hookimpl
from gateway.api.context import home_environment
from gateway.commands.cli import PluginCommands, Session, main
from gateway.engine.registry import BUILT_IN_ORDER
from gateway.testing import installed_plugin, make_gateway, write_config
from tests.forkserver import gateway_command

# The built-in plugins that add commands, each under its own name (a test below keeps this list true).
COMMANDING = {"sessions", "cron", "timeline", "mail", "spam"}


def _context(session: Session) -> click.Context:
    """A context of `gateway` as a run makes it, with a session of its own (nothing asked yet)."""
    context = click.Context(main)
    context.obj = session
    return context


def _shape(command: click.Command) -> dict[str, Any]:
    """All click says of a command: its name, help, options and arguments, and its sub-commands', recursively."""
    return command.to_info_dict(click.Context(command))


def _loaded(session: Session) -> list[str]:
    return [plugin.name for plugin in session.gateway().registry.loaded()]


def test_every_built_in_plugins_command_found_alone_is_the_one_all_plugins_give(gateway_home):
    assert isinstance(main, PluginCommands)
    write_config(gateway_home, {"gateway": {"plugins": list(BUILT_IN_ORDER)}})
    everything = Session()
    every = main.plugin_commands(_context(everything))
    assert set(every) == COMMANDING
    assert sorted(_loaded(everything)) == sorted(BUILT_IN_ORDER)  # the long way loads every enabled plugin
    for name in sorted(every):
        alone = Session()
        found = main.own_command(_context(alone), name)
        assert found is not None, name
        assert _loaded(alone) == [name]  # that plugin only: no other imported, no catalogue of tools made
        assert _shape(found) == _shape(every[name])
        assert _shape(found)["commands"], name  # a group with its commands, not an empty stand-in


def test_a_name_that_is_no_enabled_plugins_loads_nothing_by_the_short_way(gateway_home):
    write_config(gateway_home, {"gateway": {"plugins": ["spam", "mail"]}})
    session = Session()
    for name in ("cron", "nothing", "doctor"):  # off, unknown, built-in (a built-in never reaches plugins)
        assert main.own_command(_context(session), name) is None
    assert _loaded(session) == []


class _Giving:
    """A plugin giving click commands of the given names, each saying which plugin it came from."""

    def __init__(self, plugin: str, *names: str) -> None:
        self.plugin, self.names, self.asked = plugin, names, 0

    @hookimpl
    def register_commands(self, gateway):
        self.asked += 1
        made = []
        for name in self.names:
            @click.command(name, help=f"{name} of {self.plugin}")
            def said(name: str = name) -> None:
                click.echo(f"{name} of {self.plugin}")
            made.append(said)
        return made


def _two_giving_one_name(home: Path) -> tuple[Any, dict[str, _Giving]]:
    # alpha comes first and gives `beta`, `shared` and `gamma`; beta gives its own `beta`, and `shared`; gamma gives
    # none of its own name, only `other`.
    plugins = {"alpha": _Giving("alpha", "beta", "shared", "gamma"), "beta": _Giving("beta", "beta", "shared"),
               "gamma": _Giving("gamma", "other")}
    gateway = make_gateway(list(plugins.items()), config={"gateway": {"plugins": ["alpha", "beta", "gamma"]}},
                           home=home)
    return gateway, plugins


@pytest.mark.parametrize(("name", "giver", "alone"), [
    ("beta", "beta", ["beta"]),  # its own name: beta's, found by loading beta alone (alpha comes first)
    ("shared", "alpha", None),  # no plugin's name: the first in the config's order, all of them asked
    ("gamma", "alpha", None),  # gamma gives none of its name: the first that gives one, all of them asked
    ("other", "gamma", None),
])
def test_two_plugins_giving_one_name_the_short_and_long_ways_agree(gateway_home, name, giver, alone):
    gateway, plugins = _two_giving_one_name(gateway_home)
    short = Session(None, gateway)
    found = main.own_command(_context(short), name)
    if alone is None:
        assert found is None
        found = main.get_command(_context(short), name)
    else:
        assert _loaded(short) == alone
    long_gateway, _plugins = _two_giving_one_name(gateway_home)
    every = main.plugin_commands(_context(Session(None, long_gateway)))
    assert found.help == every[name].help == f"{name} of {giver}"
    assert sorted(every) == ["beta", "gamma", "other", "shared"]
    # Each plugin was asked once, whichever ways asked it (the short way first, then the long one).
    main.plugin_commands(_context(short))
    assert [plugin.asked for plugin in plugins.values()] == [1, 1, 1]


def test_two_plugins_giving_one_name_on_the_command_line(gateway_home):
    gateway, _plugins = _two_giving_one_name(gateway_home)
    runner = CliRunner()
    for name, said in (("beta", "beta of beta"), ("shared", "shared of alpha"), ("gamma", "gamma of alpha")):
        result = runner.invoke(main, [name], obj=Session(None, gateway), catch_exceptions=False)
        assert result.exit_code == 0 and result.output.strip() == said
    listing = runner.invoke(main, ["--help"], obj=Session(None, gateway)).output
    assert "beta of beta" in listing and "shared of alpha" in listing and "gamma of alpha" in listing


BROKEN = '''
raise RuntimeError("this plugin is broken on purpose")
'''
QUITTING = '''
import sys
sys.exit(7)
'''


def _run(home: Path, extra: dict[str, str], *arguments: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(home), **extra}
    return subprocess.run(gateway_command(*arguments), env=env, input=stdin, capture_output=True, text=True,
                          timeout=120)


def test_a_broken_other_plugin_does_not_stop_gateway_spam(gateway_home, tmp_path):
    site = tmp_path / "site"
    installed_plugin(site, "crashing", BROKEN)
    extra = installed_plugin(site, "quitting", QUITTING)
    # Both come before spam: the long way imports them first, and one of them ends the process as it imports.
    write_config(gateway_home, {"gateway": {"plugins": ["crashing", "quitting", "spam"]}})
    helped = _run(gateway_home, extra, "spam", "train", "--help")
    assert helped.returncode == 0, helped.stderr
    assert "gateway spam train [OPTIONS]" in helped.stdout and "--dry-run" in helped.stdout
    classified = _run(gateway_home, extra, "spam", "classify", "-", stdin="From: ada@example.com\n\nhello\n")
    assert classified.returncode == 3  # the command ran: no model yet, as the spam plugin says it
    assert "the filter has no model yet" in classified.stderr
    for run in (helped, classified):
        assert "crashing" not in run.stderr and "broken on purpose" not in run.stderr  # never imported


def test_an_off_plugins_command_is_refused_with_the_sentence_that_turns_it_on(gateway_home):
    config = write_config(gateway_home, {"gateway": {"plugins": ["mail"]}})
    refused = _run(gateway_home, {}, "spam", "train")
    assert refused.returncode == 2
    assert (f"No such command 'spam': the plugin spam is off; add it to [gateway] plugins in {config}"
            in refused.stderr)
