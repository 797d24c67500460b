"""A plugin's `sys.exit()`, or any `BaseException` of its own, is that plugin failing wherever the core runs its code;
the person's interrupt and a cancellation go on up.

Each place is played in the process, on a gateway of the test's own: a plugin's import (installed as pip would,
found by its entry point), its registration, its settings model meeting a new table, its `traits_of` and `census`
hooks, its refresh, and its tools on a worker and on the event loop. The same through a real `gateway serve` and
the command line: `tests/adversarial/test_plugin_exits_served.py`.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel, field_validator

from gateway import Refresh, Tool, Traits, hookimpl
from gateway.engine.core import Caller
from gateway.engine.faults import plugin_failed
from gateway.testing import installed_plugin, make_gateway, read_audit, write_config
from tests.gateway.probe_site import forget

STEADY = '''
from gateway import Tool, hookimpl

def steady_echo(word: str) -> str:
    """Say a word back."""
    return "steady " + word

@hookimpl
def register_tools(gateway):
    return [Tool.from_function(steady_echo, read_only=True)]
'''

IMPORT_ENDINGS = {
    "sys.exit": ("import sys\nsys.exit(3)\n", "it tried to end the process (SystemExit: 3)"),
    "a GeneratorExit of its own": ("class Leaving(GeneratorExit):\n    pass\nraise Leaving('leaving')\n",
                                   "Leaving: leaving"),
    "a BaseException of its own": ("class Mine(BaseException):\n    pass\nraise Mine('mine')\n", "Mine: mine"),
    "a group of them": ("raise BaseExceptionGroup('several', [SystemExit(2), GeneratorExit()])\n",
                        "BaseExceptionGroup: several (2 sub-exceptions)"),
}


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """Install plugins as pip would (a module and its dist-info), found by the gateway's own discovery."""
    folder = tmp_path / "site"
    installed: list[str] = []
    monkeypatch.syspath_prepend(str(folder))

    def install(name: str, source: str) -> None:
        installed_plugin(folder, name, source)
        installed.append(f"gateway_{name}")
        forget(f"gateway_{name}")

    yield install
    for module in installed:
        forget(module)


@pytest.mark.parametrize("ending", sorted(IMPORT_ENDINGS))
def test_a_plugin_that_ends_while_importing_is_off_said_why_and_the_others_serve(site, gateway_home, ending):
    source, said = IMPORT_ENDINGS[ending]
    site("exitsimport", source)
    site("exitssteady", STEADY)
    gw = make_gateway(entrypoints=True, home=gateway_home,
                      config={"gateway": {"plugins": ["exitsimport", "exitssteady"]}})
    assert gw.list_tools() == ["steady_echo"]
    assert gw.call("steady_echo", {"word": "on"}).text == "steady on"
    plugin = gw.registry.get("exitsimport")
    assert plugin.error == f"failed while importing: {said}"
    assert f"plugin exitsimport: failed while importing: {said}" in gw.catalogue().problems


@pytest.mark.parametrize("raised", ["KeyboardInterrupt()", "asyncio.CancelledError()",
                                    "BaseExceptionGroup('both', [SystemExit(1), KeyboardInterrupt()])"])
def test_an_interrupt_or_a_cancellation_while_importing_goes_on_up(site, gateway_home, raised):
    site("exitsinterrupt", f"import asyncio\nraise {raised}\n")
    gw = make_gateway(entrypoints=True, home=gateway_home, config={"gateway": {"plugins": ["exitsinterrupt"]}})
    with pytest.raises((KeyboardInterrupt, asyncio.CancelledError, BaseExceptionGroup)) as caught:
        gw.catalogue()
    assert not plugin_failed(caught.value)


class ExitsRegistering:
    @hookimpl
    def register_tools(self, gateway):  # noqa: ANN001, ANN201
        sys.exit(9)


class Steady:
    @hookimpl
    def register_tools(self, gateway):  # noqa: ANN001, ANN201
        def steady_ping() -> str:
            """Say pong."""
            return "pong"

        return [Tool.from_function(steady_ping, read_only=True)]

    @hookimpl
    def traits_of(self, gateway, address):  # noqa: ANN001, ANN201
        return Traits(apps=("steady",)) if address.startswith("steady:") else None

    @hookimpl
    def census(self, gateway):  # noqa: ANN001, ANN201
        yield "steady store", Traits(apps=("steady",))


def test_a_plugin_that_exits_while_registering_is_off_and_unregistered(gateway_home):
    gw = make_gateway([("exitsregistering", ExitsRegistering()), ("steady", Steady())], home=gateway_home,
                      config={"gateway": {"plugins": ["exitsregistering", "steady"]}})
    assert gw.list_tools() == ["steady_ping"]
    plugin = gw.registry.get("exitsregistering")
    assert plugin.error == "failed while registering: it tried to end the process (SystemExit: 9)"
    assert gw.registry.manager.get_plugin("exitsregistering") is None


class Prying:
    """Its traits_of and census hooks end the process (the census after one thing); `given` counts what it gave."""

    def __init__(self) -> None:
        self.closed = False

    @hookimpl
    def traits_of(self, gateway, address):  # noqa: ANN001, ANN201
        sys.exit(7)

    @hookimpl
    def census(self, gateway):  # noqa: ANN001, ANN201
        try:
            yield "prying store", Traits(apps=("prying",))
            yield "prying store", Traits(apps=("prying",))
            sys.exit(8)
        except GeneratorExit:
            self.closed = True
            raise


def test_traits_and_census_hooks_that_exit_are_skipped_and_said(gateway_home):
    prying = Prying()
    gw = make_gateway([("prying", prying), ("steady", Steady())], home=gateway_home,
                      config={"gateway": {"plugins": ["prying", "steady"]}})
    assert [plugin for plugin, _traits in gw.traits_of("steady:1")] == ["steady"]
    assert gw.traits_of("prying:1") == []
    found = list(gw.census())
    assert [(plugin, source) for plugin, source, _traits in found] == [
        ("prying", "prying store"), ("prying", "prying store"),
        ("prying", "its census failed (it tried to end the process (SystemExit: 8))"), ("steady", "steady store")]
    assert found[2][2] is None


def test_a_census_read_in_part_closes_the_plugins_generator_and_swallows_nothing(gateway_home):
    prying = Prying()
    gw = make_gateway([("prying", prying)], home=gateway_home, config={"gateway": {"plugins": ["prying"]}})
    reading = gw.census()
    assert next(reading)[1] == "prying store"
    reading.close()  # a GeneratorExit thrown into the core's generator: it goes on up, the plugin's is closed too
    del reading
    assert prying.closed


class Quitting:
    """Tools that end in a SystemExit, a GeneratorExit or a BaseException of their own, or in an interrupt."""

    @hookimpl
    def register_tools(self, gateway):  # noqa: ANN001, ANN201
        class Mine(BaseException):
            pass

        class Leaving(GeneratorExit):
            pass

        def quit_exit(stop: bool = True) -> str:
            """Call sys.exit when asked."""
            if stop:
                sys.exit(4)
            return "still here"

        async def quit_async() -> str:
            """Raise SystemExit from a coroutine."""
            raise SystemExit("bye")

        def quit_own() -> str:
            """Raise a BaseException class of its own."""
            raise Mine("mine")

        def quit_leave() -> str:
            """Raise a GeneratorExit class of its own."""
            raise Leaving("leaving")

        def quit_write() -> str:
            """A writing tool that calls sys.exit."""
            sys.exit(6)

        def quit_interrupt() -> str:
            """Raise KeyboardInterrupt (as Ctrl-C would, on the main thread)."""
            raise KeyboardInterrupt

        return [*(Tool.from_function(f, read_only=True) for f in (quit_exit, quit_async, quit_own, quit_leave,
                                                                   quit_interrupt)),
                Tool.from_function(quit_write)]


@pytest.fixture
def quitting(gateway_home: Path):  # noqa: ANN201
    return make_gateway([("quitting", Quitting()), ("steady", Steady())], home=gateway_home,
                        config={"gateway": {"plugins": ["quitting", "steady"]}})


@pytest.mark.parametrize(("tool", "kind"), [("quit_exit", "SystemExit"), ("quit_async", "SystemExit"),
                                            ("quit_own", "Mine"), ("quit_leave", "Leaving"),
                                            ("quit_write", "SystemExit")])
def test_a_tool_that_exits_answers_an_error_written_as_the_plugins_failure(quitting, gateway_home, tool, kind):
    answer = quitting.call(tool)
    assert answer.is_error and answer.text.startswith(f"the tool {tool} failed inside the quitting plugin ({kind}).")
    assert quitting.call("steady_ping").text == "pong"
    lines = [line for line in read_audit(gateway_home) if line.get("tool") == tool]
    assert [(line["plugin"], line["outcome"]) for line in lines] == [("quitting", "plugin_failed")]


def test_a_quick_tool_that_exits_on_the_event_loop_answers_an_error(quitting):
    listed = quitting.catalogue().tools_by_name["quit_exit"]
    pace = quitting._pace(listed.tool)
    pace.streak = pace.needed  # quick from now on: the next run goes on the loop's own thread
    assert pace.quick
    answer = quitting.call("quit_exit", {"stop": True})
    assert answer.is_error and "failed inside the quitting plugin (SystemExit)" in answer.text
    assert pace.pinned  # it failed on the loop: run again on a worker, and kept there
    assert quitting.call("quit_exit", {"stop": False}).text == "still here"


def test_an_interrupt_raised_in_a_tool_goes_on_up(quitting):
    with pytest.raises(KeyboardInterrupt):
        quitting.call("quit_interrupt")


class StrictSettings(BaseModel):
    mode: str = "calm"

    @field_validator("mode")
    @classmethod
    def _never_boom(cls, value: str) -> str:
        if value == "boom":
            sys.exit(5)
        return value


class Configured(Steady):
    @hookimpl
    def register_settings(self, gateway):  # noqa: ANN001, ANN201
        return StrictSettings


def test_a_settings_model_that_exits_on_a_new_table_turns_its_plugin_off_with_a_sentence(gateway_home):
    gw = make_gateway([("configured", Configured())], home=gateway_home,
                      config={"gateway": {"plugins": ["configured"]}})
    assert gw.call("steady_ping").text == "pong"
    write_config(gateway_home, {"gateway": {"plugins": ["configured"]}, "plugins": {"configured": {"mode": "boom"}}})
    said = ("plugin configured: its settings model failed on [plugins.configured] (it tried to end the process "
            "(SystemExit: 5)); the plugin is off until it or the config is fixed")
    assert said in gw.catalogue().problems
    answer = gw.call("steady_ping")
    assert answer.is_error and said in answer.text


class Refreshing(Steady):
    """A refresh whose stale check and run both call sys.exit."""

    def __init__(self) -> None:
        self.ran = 0

    @hookimpl
    def register_refresh(self, gateway):  # noqa: ANN001, ANN201
        def run(ctx):  # noqa: ANN001, ANN202
            self.ran += 1
            sys.exit(11)

        def stale(ctx) -> bool:  # noqa: ANN001
            sys.exit(12)

        return [Refresh(run=run, stale=stale)]


def test_a_refresh_that_exits_leaves_the_call_answered(gateway_home):
    refreshing = Refreshing()
    gw = make_gateway([("refreshing", refreshing)], home=gateway_home, config={"gateway": {"plugins": ["refreshing"]}})
    assert gw.call("steady_ping").text == "pong"  # its stale check exited on the loop, its run on a thread
    assert refreshing.ran == 1
    refresh = gw.registry.get("refreshing").refreshes[0]
    ctx = gw.context("refreshing", gw.snapshot(), Caller("test", "1", "test"))
    assert not gw.refreshing.run_now("refreshing", refresh, ctx)  # `gateway watch`'s way: on this thread
    assert refreshing.ran == 2


def test_the_rule_takes_groups_apart():
    assert plugin_failed(SystemExit(1)) and plugin_failed(GeneratorExit()) and plugin_failed(ValueError())
    assert not plugin_failed(KeyboardInterrupt()) and not plugin_failed(asyncio.CancelledError())
    assert plugin_failed(BaseExceptionGroup("g", [SystemExit(1), ValueError()]))
    nested = BaseExceptionGroup("g", [SystemExit(1), BaseExceptionGroup("h", [asyncio.CancelledError()])])
    assert not plugin_failed(nested)
