"""Every hook of gateway/api/hookspecs.py exercised (test_hook_<name>), in datasette's manner, and pluggy's meaning kept."""

from __future__ import annotations

import inspect
import os
import subprocess
import textwrap
import tomllib

import anyio
import attrs
import click
import pluggy
from pydantic import BaseModel, Field

from gateway import (
    Context,
    Person,
    Prompt,
    PromptArgument,
    Resource,
    ResourcePage,
    ResourceTemplate,
    Tool,
    Traits,
    hookimpl,
)
from gateway.api import hookspecs
from gateway.api.context import home_environment
from gateway.api.refresh import Refresh, Refreshed
from gateway.engine.registry import Lifecycle, lifecycle_of
from gateway.testing import folders_of, installed_plugin, make_gateway, read_audit, serve_client, write_config
from tests.forkserver import gateway_command


class Greeting(BaseModel):
    greeting: str = Field("Hello", description="the word")


def _hooks() -> list[str]:
    return sorted(name for name, f in vars(hookspecs).items() if inspect.isfunction(f) and hasattr(f, "gateway_spec"))


def test_every_hook_has_a_test_here():
    tests = {name for name in globals() if name.startswith("test_hook_")}
    missing = [hook for hook in _hooks() if f"test_hook_{hook}" not in tests]
    assert _hooks() and not missing, f"hooks without a test_hook_<name>: {missing}"


class Everything:
    """One plugin implementing every hook, as a plugin author would."""

    events: list[str]

    def __init__(self) -> None:
        self.events = []

    @hookimpl
    def register_settings(self, gateway):
        return Greeting

    @hookimpl
    def register_tools(self, gateway):
        def hello(ctx: Context, name: str) -> str:
            return f"{ctx.settings['greeting']}, {name}!"

        return [Tool.from_function(hello, read_only=True)]

    @hookimpl
    def register_resources(self, gateway):
        return [Resource(uri="every://motto", name="motto", read=lambda ctx: "small tools", mime_type="text/plain")]

    @hookimpl
    def register_resource_templates(self, gateway):
        def listing(ctx, cursor, limit):
            return ResourcePage(resources=[{"uri": "every://notes/1", "name": "note 1"}])

        return [ResourceTemplate(uri_template="every://notes/{id}", name="note", read=lambda ctx, id: f"note {id}",
                                 listing=listing)]

    @hookimpl
    def register_prompts(self, gateway):
        return [Prompt(name="greet", render=lambda ctx, name: f"greet {name}",
                       arguments=[PromptArgument("name", required=True)])]

    @hookimpl
    def register_commands(self, gateway):
        @click.command("every-hello")
        def every_hello():
            click.echo(f"{gateway.settings['greeting']} from {gateway.name}")

        return [every_hello]

    @hookimpl
    def register_demo(self, gateway):
        return [("hello", {"name": "Ada Example"})]

    @hookimpl
    def register_refresh(self, gateway):
        return [Refresh(run=lambda ctx: self.events.append(f"refresh {ctx.plugin}") or Refreshed())]

    @hookimpl
    def startup(self, gateway):
        self.events.append(f"startup {gateway.name}")

    @hookimpl
    def shutdown(self, gateway):
        self.events.append(f"shutdown {gateway.name}")


def _everything(home, config=None):
    plugin = Everything()
    return plugin, make_gateway([("every", plugin)], home=home, config=config)


def test_hook_register_settings(gateway_home):
    _plugin, gateway = _everything(gateway_home, {"plugins": {"every": {"greeting": "Hi"}}})
    assert gateway.call("hello", {"name": "Ada"}).text == "Hi, Ada!"
    _plugin, refused = _everything(gateway_home, {"plugins": {"every": {"colour": "red"}}})
    assert "unknown key in [plugins.every]: colour" in refused.catalogue().problems[0]


def test_hook_register_tools(gateway_home):
    _plugin, gateway = _everything(gateway_home)
    assert gateway.list_tools() == ["hello"] and gateway.call("hello", {"name": "Ada"}).text == "Hello, Ada!"


def test_hook_register_resources(gateway_home):
    _plugin, gateway = _everything(gateway_home)
    assert gateway.read("every://motto").text == "small tools"


def test_hook_register_resource_templates(gateway_home):
    _plugin, gateway = _everything(gateway_home)
    assert gateway.read("every://notes/7").text == "note 7"
    assert "every://notes/1" in [r["uri"] for r in gateway.all_resources()]


def test_hook_register_prompts(gateway_home):
    _plugin, gateway = _everything(gateway_home)
    assert gateway.prompt("greet", {"name": "Ada"}).text == "greet Ada"


COMMAND_PLUGIN = '''
import click
from pydantic import BaseModel
from gateway import hookimpl

class Settings(BaseModel):
    greeting: str = "Hello"

@hookimpl
def register_settings(gateway):
    return Settings

@hookimpl
def register_commands(gateway):
    @click.command("shout")
    @click.argument("name")
    def shout(name):
        """Greet someone loudly."""
        click.echo(f"{gateway.settings['greeting'].upper()}, {name.upper()}! ({gateway.name})")
    return [shout]
'''


def test_hook_register_commands(gateway_home, tmp_path):
    env = installed_plugin(tmp_path / "site", "loud", COMMAND_PLUGIN)
    write_config(gateway_home, {"gateway": {"plugins": ["loud"]}, "plugins": {"loud": {"greeting": "Hi"}}})
    run = subprocess.run(
        gateway_command("shout", "ada"), capture_output=True, text=True, timeout=60,
        env={"PATH": os.environ.get("PATH", ""), **home_environment(gateway_home), **env},
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "HI, ADA! (loud)"


def test_hook_register_demo(gateway_home):
    # As `gateway demo` gathers its tour: each enabled plugin's calls, each a tool it lists.
    _plugin, gateway = _everything(gateway_home)
    snapshot = gateway.snapshot()
    order = gateway.catalogue(snapshot).plugin_order
    (found,) = gateway.registry.call_each("register_demo", order, snapshot.config.table)
    assert found == ("every", [("hello", {"name": "Ada Example"})])
    assert gateway.call(*found[1][0]).text == "Hello, Ada Example!"


def test_hook_register_refresh(gateway_home):
    plugin, gateway = _everything(gateway_home)
    assert gateway.call("hello", {"name": "Ada"}).text == "Hello, Ada!"
    assert gateway.read("every://motto").text == "small tools"
    assert plugin.events == ["refresh every", "refresh every"]  # before each call and each read


def test_hook_startup(gateway_home):
    plugin, gateway = _everything(gateway_home)
    lifecycle = Lifecycle(gateway)
    lifecycle.start()
    lifecycle.start()  # a second transport, or the same one entering twice
    assert plugin.events == ["startup every"]


def test_hook_shutdown(gateway_home):
    plugin, gateway = _everything(gateway_home)
    with lifecycle_of(gateway):
        with lifecycle_of(gateway):  # nested: the inner exit must not shut the plugins down while serving
            pass
        assert plugin.events == ["startup every"]
    lifecycle_of(gateway).stop()
    assert plugin.events == ["startup every", "shutdown every"]


def test_shutdown_without_startup_calls_nothing(gateway_home):
    plugin, gateway = _everything(gateway_home)
    Lifecycle(gateway).stop()
    assert plugin.events == []


def test_a_failing_startup_is_logged_and_the_others_start(gateway_home, captured_logs):
    class Broken:
        @staticmethod
        @hookimpl
        def startup(gateway):
            raise RuntimeError("no disk")

    plugin = Everything()
    gateway = make_gateway([("broken", Broken()), ("every", plugin)], home=gateway_home)
    with Lifecycle(gateway):
        pass
    assert plugin.events == ["startup every", "shutdown every"]
    assert any(e.get("hook") == "startup" and e.get("plugin") == "broken" for e in captured_logs)


LIFECYCLE_PLUGIN = '''
from gateway import hookimpl

def _note(gateway, word):
    with open(gateway.folders.data / "events.txt", "a") as events:
        events.write(word + "\\n")

@hookimpl
def startup(gateway):
    _note(gateway, "startup")

@hookimpl
def shutdown(gateway):
    _note(gateway, "shutdown")
'''


def test_startup_and_shutdown_fire_once_each_under_a_real_stdio_server(gateway_home, tmp_path):
    env = installed_plugin(tmp_path / "site", "life", LIFECYCLE_PLUGIN)
    write_config(gateway_home, {"gateway": {"plugins": ["life"]}})

    async def session():
        async with serve_client(gateway_home, extra_env=env) as client:
            await client.list_tools()

    anyio.run(session)
    events = gateway_home / ".local" / "share" / "gateway" / "plugins" / "life" / "events.txt"
    assert events.read_text().splitlines() == ["startup", "shutdown"]


# --- pluggy's own features ----------------------------------------------------------------------------------


def test_hooks_go_through_pluggy_so_a_plugins_own_wrapper_wraps_its_hook(gateway_home):
    class Wrapped:
        @staticmethod
        @hookimpl
        def register_tools(gateway):
            return [Tool.from_function(lambda: "pong", name="ping", read_only=True)]

        @staticmethod
        @hookimpl(wrapper=True, specname="register_tools")
        def rename_tools(gateway):
            results = yield
            return [[Tool.from_function(t.function, name=f"w_{t.name}", read_only=True) for t in r] for r in results]

    gateway = make_gateway([("wrapped", Wrapped())], home=gateway_home)
    assert gateway.list_tools() == ["w_ping"]


def test_a_wrapper_never_sees_another_plugins_call(gateway_home):
    seen = []

    class Spy:
        @staticmethod
        @hookimpl(wrapper=True, specname="register_tools", tryfirst=True)
        def spy(gateway):
            seen.append(gateway.name)
            return (yield)

    class Other:
        @staticmethod
        @hookimpl
        def register_tools(gateway):
            return [Tool.from_function(lambda: "x", name="other_tool", read_only=True)]

    gateway = make_gateway([("spy", Spy()), ("other", Other())], home=gateway_home)
    assert gateway.list_tools() == ["other_tool"]
    assert seen == ["spy"]  # it wraps its own plugin's call alone; the order across plugins is the config's


def test_a_misspelt_hook_is_refused_by_pluggy_check_pending(gateway_home):
    class Typo:
        @staticmethod
        @hookimpl
        def register_tool(gateway):
            return []

    gateway = make_gateway([("typo", Typo())], home=gateway_home)
    (problem,) = gateway.catalogue().problems
    assert "typo" in problem and "register_tool" in problem


def test_the_hook_marker_is_pluggys():
    assert isinstance(hookimpl, pluggy.HookimplMarker) and hookimpl.project_name == "gateway"
    assert textwrap.dedent(hookspecs.__doc__ or "").strip()


def test_startup_and_shutdown_fire_once_each_under_a_real_http_server(gateway_home, tmp_path):
    import os
    import signal
    import socket
    import subprocess
    import time

    from gateway.api.context import home_environment

    env = installed_plugin(tmp_path / "site", "life", LIFECYCLE_PLUGIN)
    write_config(gateway_home, {"gateway": {"plugins": ["life"]}})
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        gateway_command("serve", "--http", f"127.0.0.1:{port}"),
        env={"PATH": os.environ.get("PATH", ""), **home_environment(gateway_home), **env},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert process.poll() is None
                time.sleep(0.1)
        events = gateway_home / ".local" / "share" / "gateway" / "plugins" / "life" / "events.txt"
        assert events.read_text().splitlines() == ["startup"]  # before the first request is served
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    assert events.read_text().splitlines() == ["startup", "shutdown"]


def test_sigterm_ends_a_stdio_server_with_its_shutdown_hooks(gateway_home, tmp_path):
    # A host that does not wait for the server to leave after closing its input sends SIGTERM.
    import json
    import os
    import signal
    import subprocess

    from gateway.api.context import home_environment

    env = installed_plugin(tmp_path / "site", "life", LIFECYCLE_PLUGIN)
    write_config(gateway_home, {"gateway": {"plugins": ["life"]}})
    process = subprocess.Popen(
        gateway_command("serve"),
        env={"PATH": os.environ.get("PATH", ""), **home_environment(gateway_home), **env},
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    try:
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode() + b"\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1  # serving, stdin still open
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
    events = gateway_home / ".local" / "share" / "gateway" / "plugins" / "life" / "events.txt"
    assert events.read_text().splitlines() == ["startup", "shutdown"]


# --- what a plugin says of its things: traits_of, census, tied_projects --------------------------------------

SHELF_PROJECTS = [
    {"id": "lawsuit", "name": "Dispute", "senders": ["@law.example.net"], "lists": ["court"]},
    {"id": "garden", "ai": True, "senders": ["@garden.example.org"]},
]


class Shelf:
    """A plugin holding three letters, describing them to the gate, and keeping the person's ties."""

    LETTERS = {
        "letter/1": ("lee@law.example.net", "home", "the canary word is juniper"),
        "letter/2": ("bo@garden.example.org", "home", "seeds arrived"),
        "letter/3": ("kim@example.com", "court", "a hearing date"),
    }

    def __init__(self, ties=None, broken=False):
        self.ties = dict(ties or {})
        self.broken = broken

    def traits(self, address):
        sender, shelf, _text = self.LETTERS[address]
        return Traits(people=[Person(sender, proven=True)], list=shelf)

    @hookimpl
    def register_tools(self, gateway):
        def read_letter(ctx: Context, id: str) -> str:
            """A letter, by its address."""
            tied = ctx.tied([id]).get(id, frozenset())
            owners = ctx.gate.owners(attrs.evolve(self.traits(id), projects=tied))
            ctx.gate.check_read(owners, f"the letter {id}", address=id)
            return self.LETTERS[id][2]

        return [Tool.from_function(read_letter, read_only=True)]

    @hookimpl
    def traits_of(self, gateway, address):
        return self.traits(address) if address in self.LETTERS else None

    @hookimpl
    def census(self, gateway):
        for address in self.LETTERS:
            yield f"shelf {self.LETTERS[address][1]}", self.traits(address)

    @hookimpl
    def tied_projects(self, gateway, addresses):
        if self.broken:
            raise OSError("the tie store is locked")
        return {a: self.ties[a] for a in addresses if a in self.ties}


class Reader:
    """A second plugin that reads the shelf's letters by address: it sees the shelf's ties through the core."""

    @hookimpl
    def register_tools(self, gateway):
        def peek(ctx: Context, id: str) -> str:
            """Whether a letter may be shown, as this plugin's gate sees it."""
            tied = ctx.tied([id, "unknown"])
            assert "unknown" not in tied
            ctx.gate.check_read(ctx.gate.owners(Traits(projects=tied.get(id, ()))), f"the letter {id}")
            return f"{id} may be shown"

        return [Tool.from_function(peek, read_only=True)]


def _shelf_gateway(home, shelf):
    return make_gateway([("shelf", shelf), ("reader", Reader())], home=home, projects=SHELF_PROJECTS,
                        config={"gateway": {"plugins": ["shelf", "reader"]}})


def test_hook_traits_of(gateway_home):
    from gateway.gate.why import explain

    gateway = _shelf_gateway(gateway_home, Shelf())
    said: list[str] = []
    assert explain(gateway, "letter/1", None, said.append) == 1
    text = "\n".join(said)
    manifest = folders_of(gateway_home).config / "projects.toml"
    assert "letter/1 (shelf plugin):" in text
    assert f"taken by lawsuit (closed): senders route '@law.example.net'  [{manifest}:" in text
    assert "kept from agents by the project:" in text and "lawsuit (Dispute)" in text
    said.clear()
    assert explain(gateway, "letter/2", None, said.append) == 0
    assert "taken by garden (open)" in "\n".join(said) and "open to agents" in "\n".join(said)
    # No audit line: the person's question was answered from the traits, not by a call through the gate.
    assert not [e for e in read_audit(gateway_home) if e.get("tool") == "read_letter"]


def test_hook_census(gateway_home):
    from gateway.gate.census import tally
    from gateway.gate.why import list_projects

    gateway = _shelf_gateway(gateway_home, Shelf())
    snapshot = gateway.snapshot()
    counted = tally(gateway, snapshot)
    assert counted.things == {"shelf home": 2, "shelf court": 1}
    said: list[str] = []
    list_projects(snapshot.gate, snapshot.config.projects_path, said.append, counted)
    text = "\n".join(said)
    assert "  senders '@law.example.net': 1 in shelf home" in text
    assert "  lists 'court': 1 in shelf court" in text
    assert "Counted now over 3 things in 2 sources." in text


def test_hook_tied_projects(gateway_home):
    shelf = Shelf(ties={"letter/2": ["LAWSUIT"]})  # ids are compared without case
    gateway = _shelf_gateway(gateway_home, shelf)
    refused = gateway.call("read_letter", {"id": "letter/2"})
    assert refused.is_error and "seeds" not in refused.text and "`gateway access why letter/2`" in refused.text
    assert gateway.call("peek", {"id": "letter/2"}).is_error  # the other plugin agrees
    assert gateway.call("peek", {"id": "letter/3"}).text == "letter/3 may be shown"
    shelf.ties.clear()
    assert gateway.call("read_letter", {"id": "letter/2"}).text == "seeds arrived"


def test_a_tie_store_that_cannot_be_read_fails_the_call_never_gives(gateway_home, captured_logs):
    gateway = _shelf_gateway(gateway_home, Shelf(ties={"letter/2": ["lawsuit"]}, broken=True))
    for tool in ("read_letter", "peek"):
        answer = gateway.call(tool, {"id": "letter/2"})
        assert answer.is_error and "seeds" not in answer.text and "ties cannot be read" in answer.text
    assert any(e.get("hook") == "tied_projects" for e in captured_logs)


def test_a_failing_census_is_said_and_the_others_are_counted(gateway_home):
    from gateway.gate.census import tally

    class Broken:
        @hookimpl
        def census(self, gateway):
            yield "broken list", Traits(list="x")
            raise OSError("store gone")

    gateway = make_gateway([("shelf", Shelf()), ("broken", Broken())], home=gateway_home, projects=SHELF_PROJECTS,
                           config={"gateway": {"plugins": ["shelf", "broken"]}})
    counted = tally(gateway, gateway.snapshot())
    assert counted.things["shelf home"] == 2 and counted.things["broken list"] == 1
    assert counted.failures and "broken: its census failed (OSError: store gone)" in counted.failures[0]
    from gateway.commands.doctor import route_warnings

    said = route_warnings(gateway, gateway.snapshot())
    assert "plugin broken: its census failed (OSError: store gone): what its routes take is not counted" in said


DETECTING_PLUGIN = '''
from pydantic import BaseModel
from gateway import Detected, hookimpl

class Settings(BaseModel):
    greeting: str = "Hello"
    folder: str = ""

@hookimpl
def register_settings(gateway):
    return Settings

@hookimpl
def detect(gateway):
    return Detected({"folder": "~/words"}, ["words: found ~/.wordsrc"])
'''


def test_hook_detect(gateway_home, tmp_path):
    # `gateway setup --detect --write` merges what a plugin found into its table, and keeps the person's keys.
    env = installed_plugin(tmp_path / "site", "words", DETECTING_PLUGIN)
    write_config(gateway_home, {"gateway": {"plugins": []}, "plugins": {"words": {"greeting": "Hi"}}})
    run = subprocess.run(
        gateway_command("setup", "--detect", "--write"), capture_output=True, text=True,
        timeout=60, env={"PATH": os.environ.get("PATH", ""), **home_environment(gateway_home), **env},
    )
    assert run.returncode == 0, run.stderr
    assert "words: found ~/.wordsrc" in run.stderr
    config = tomllib.loads(write_config(gateway_home).read_text())
    assert "words" in config["gateway"]["plugins"]
    assert config["plugins"]["words"] == {"greeting": "Hi", "folder": "~/words"}
