"""Plugins that call `sys.exit()` (or raise another `BaseException` of their own) cannot take the gateway down.

Four plugins installed as pip would install them, through a real `gateway serve` and the SDK's own client, and
through the command line: `steady` behaves; `exiting` calls `sys.exit(3)` as it is imported; every tool of
`quitter` ends in a `SystemExit` (synchronous, asynchronous, a writing tool), a `GeneratorExit` of its own or a
`BaseException` class of its own; `prying` serves a tool, but its `startup`, `traits_of` and `census` hooks call
`sys.exit()`. Each bad tool's call answers an error naming the plugin, written in the audit log as a plugin's
failure, and the next call of another plugin's tool is answered; `gateway --help`, `doctor`, `plugins`, `access`
and a plugin's own command exit as they would without them, and doctor names the plugin that exited and why.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest

from gateway.api.context import home_environment
from gateway.testing import installed_plugin, read_audit, serve_client, write_config
from tests.forkserver import gateway_command
from tests.gateway import test_plugin_exits as in_process

# The in-process tests' steady plugin, with a command group of its own.
STEADY = "import click\n" + in_process.STEADY + '''
@hookimpl
def register_commands(gateway):
    @click.group("steady")
    def group():
        """The steady plugin."""

    @group.command("hello")
    def hello():
        """Say hello."""
        click.echo("steady says hello")

    return [group]
'''

EXITING = '''
import sys

sys.exit(3)
'''

QUITTER = '''
import sys
from gateway import Tool, hookimpl

class Leaving(GeneratorExit):
    pass

class Mine(BaseException):
    pass

def quitter_exit(word: str) -> str:
    """Calls sys.exit."""
    sys.exit(4)

async def quitter_exit_async(word: str) -> str:
    """Raises SystemExit from a coroutine."""
    raise SystemExit("bye")

def quitter_leave(word: str) -> str:
    """Raises a GeneratorExit of its own."""
    raise Leaving("leaving")

def quitter_own(word: str) -> str:
    """Raises a BaseException class of its own."""
    raise Mine("mine")

def quitter_write(word: str) -> str:
    """A writing tool that calls sys.exit."""
    sys.exit(6)

@hookimpl
def register_tools(gateway):
    return [Tool.from_function(f, read_only=f is not quitter_write)
            for f in (quitter_exit, quitter_exit_async, quitter_leave, quitter_own, quitter_write)]
'''

PRYING = '''
import sys
from gateway import Tool, Traits, hookimpl

def prying_ping() -> str:
    """Say pong."""
    return "pong"

@hookimpl
def register_tools(gateway):
    return [Tool.from_function(prying_ping, read_only=True)]

@hookimpl
def startup(gateway):
    sys.exit(5)

@hookimpl
def traits_of(gateway, address):
    sys.exit(7)

@hookimpl
def census(gateway):
    yield "prying store", Traits()
    sys.exit(8)
'''

BAD_TOOLS = ["quitter_exit", "quitter_exit_async", "quitter_leave", "quitter_own", "quitter_write"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("exits")
    home = root / "home"
    home.mkdir()
    site = root / "site"
    env: dict[str, str] = {}
    for name, source in (("steady", STEADY), ("exiting", EXITING), ("quitter", QUITTER), ("prying", PRYING)):
        env = installed_plugin(site, name, source)
    write_config(home, {"gateway": {"plugins": ["steady", "exiting", "quitter", "prying"]}})
    return home, env


def _run(installed: tuple[Path, dict[str, str]], *arguments: str) -> subprocess.CompletedProcess:
    home, extra = installed
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(home), **extra}
    return subprocess.run(gateway_command(*arguments), env=env, capture_output=True, text=True, timeout=120)


def test_a_tool_that_exits_answers_an_error_and_the_server_keeps_serving(installed) -> None:
    home, env = installed
    seen: dict[str, tuple[bool, str]] = {}

    async def session() -> list[str]:
        async with serve_client(home, extra_env=env) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            for name in BAD_TOOLS:
                result = await client.call_tool(name, {"word": name})
                seen[name] = (result.is_error, result.content[0].text)
                after = await client.call_tool("steady_echo", {"word": name})
                seen[f"after {name}"] = (after.is_error, after.content[0].text)
            pong = await client.call_tool("prying_ping", {})  # its startup hook exited: its tools serve
            seen["prying_ping"] = (pong.is_error, pong.content[0].text)
            return names

    names = anyio.run(session)
    assert names == ["steady_echo", *BAD_TOOLS, "prying_ping"]  # nothing of `exiting`, all of the others
    for name in BAD_TOOLS:
        is_error, text = seen[name]
        assert is_error and text.startswith(f"the tool {name} failed inside the quitter plugin ("), text
        assert seen[f"after {name}"] == (False, f"steady {name}")
    assert seen["prying_ping"] == (False, "pong")
    lines = {line["tool"]: line for line in read_audit(home) if line.get("tool")}
    for name in BAD_TOOLS:
        assert lines[name]["outcome"] == "plugin_failed" and lines[name]["plugin"] == "quitter"
    assert lines["steady_echo"]["outcome"] == "ok"


def test_help_doctor_and_plugins_finish_and_name_the_plugin_that_exited(installed) -> None:
    helped = _run(installed, "--help")
    assert helped.returncode == 0, helped.stderr
    assert "steady" in helped.stdout  # the commands of the plugins that load are listed
    said = "plugin exiting: failed while importing: it tried to end the process (SystemExit: 3)"
    doctor = _run(installed, "doctor")
    assert doctor.returncode == 1, doctor.stderr  # doctor's own verdict (a problem found), not the plugin's 3
    assert f"PROBLEM  {said}" in doctor.stdout
    for name, tools in (("steady", "1 tool"), ("quitter", "5 tools"), ("prying", "1 tool")):
        assert f"ok       plugin {name} 0.0.1 (gateway_{name}): {tools}" in doctor.stdout
    plugins = _run(installed, "plugins")
    assert plugins.returncode == 1 and said.removeprefix("plugin exiting: ") in plugins.stdout


def test_a_plugin_command_runs_and_one_named_after_the_plugin_that_exited_says_why(installed) -> None:
    hello = _run(installed, "steady", "hello")
    assert hello.returncode == 0 and hello.stdout == "steady says hello\n", hello.stderr
    refused = _run(installed, "exiting")
    assert refused.returncode == 2
    assert ("No such command 'exiting': the plugin exiting failed while importing: it tried to end the process "
            "(SystemExit: 3)") in refused.stderr


def test_traits_and_census_hooks_that_exit_leave_the_persons_commands_standing(installed) -> None:
    why = _run(installed, "access", "why", "prying://thing/1")
    assert why.returncode == 1 and "no enabled plugin serves it" in why.stdout, why.stderr
    listed = _run(installed, "access", "list")
    assert listed.returncode == 0, listed.stderr
    assert "prying: its census failed (it tried to end the process (SystemExit: 8))" in listed.stdout
