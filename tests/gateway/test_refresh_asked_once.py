"""A plugin whose refreshes each say they have nothing to run is asked so with the tool's own context (one context a
call); a refresh that has something to run, that is running, or whose check fails still runs the long way, under its
own budget and context, and the tool's context then carries a deadline that starts after it."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from gateway import Answer, Tool
from gateway.api.hookspecs import hookimpl
from gateway.api.refresh import Refresh, Refreshed
from gateway.engine import core
from gateway.testing import inline_plugin, make_gateway


def _gateway(home: Path, stale, runs: list, seen: list):
    def run(ctx) -> Refreshed:
        runs.append(ctx.deadline.seconds)
        return Refreshed()

    def look(ctx) -> Answer:
        seen.append((ctx.deadline.seconds, ctx.deadline.left(), ctx.mark))
        return Answer(text="looked")

    name, plugin = inline_plugin("look", tools=[Tool.from_function(look, read_only=True)])
    plugin.register_refresh = hookimpl(lambda gateway: [Refresh(run=run, stale=stale)])
    return make_gateway([(name, plugin)], config={"gateway": {"plugins": ["look"], "call_timeout": 9}}, home=home)


def contexts_counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The plugins' names of the contexts the core makes from here on, one each, in order."""
    made: list[str] = []
    context = core.Gateway.context

    def counted(self, plugin_name, *args, **kwargs):
        made.append(plugin_name)
        return context(self, plugin_name, *args, **kwargs)

    monkeypatch.setattr(core.Gateway, "context", counted)
    return made


def test_refreshes_with_nothing_to_run_are_asked_with_the_tools_own_context(gateway_home: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list = []
    runs: list = []
    seen: list = []
    gateway = _gateway(gateway_home, lambda ctx: asked.append(ctx) or False, runs, seen)
    made = contexts_counted(monkeypatch)
    for _ in range(5):
        assert gateway.call("look").text == "looked"
    assert made == ["look"] * 5 and runs == [] and len(asked) == 5
    assert all(seconds == 9 and 0 < left <= 9 for seconds, left, _mark in seen)
    assert [ctx.mark for ctx in asked] == [mark for _s, _l, mark in seen]  # the very context the tool was given
    assert len({mark for _s, _l, mark in seen}) == 5


@pytest.mark.parametrize("kind", ["stale", "failing", "exiting", "no check"])
def test_a_refresh_with_something_to_run_runs_under_its_own_context(gateway_home: Path,
                                                                   monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    asked: list = []

    def stale(ctx) -> bool:
        asked.append(ctx)
        if kind == "failing":
            raise OSError("a source cannot be read")
        if kind == "exiting":
            sys.exit(12)  # a plugin's exit is its check failing (gateway.engine.faults), never the gateway's end
        return True

    runs: list = []
    seen: list = []
    gateway = _gateway(gateway_home, None if kind == "no check" else stale, runs, seen)
    made = contexts_counted(monkeypatch)
    for _ in range(3):
        assert gateway.call("look").text == "looked"
    assert runs == [float("inf")] * 3  # the refresh's own budget, not the call's deadline
    assert all(seconds == 9 and 0 < left <= 9 for seconds, left, _mark in seen)
    assert made == ["look"] * (6 if kind == "no check" else 9)  # asked first, then the refresh's and the tool's own
    # Asked once a call: what it said is not asked again the long way; a check that failed is (and said there).
    assert len(asked) == {"stale": 3, "failing": 6, "exiting": 6, "no check": 0}[kind]


def test_each_refresh_of_a_plugin_is_asked_once_and_only_the_stale_ones_run(gateway_home: Path) -> None:
    asked: list[str] = []
    runs: list[str] = []

    def refresh(name: str, says: bool) -> Refresh:
        return Refresh(run=lambda ctx: runs.append(name) or Refreshed(),
                       stale=lambda ctx: asked.append(name) or says)

    def look(ctx) -> Answer:
        return Answer(text="looked")

    name, plugin = inline_plugin("look", tools=[Tool.from_function(look, read_only=True)])
    plugin.register_refresh = hookimpl(lambda gateway: [refresh("fresh", False), refresh("behind", True),
                                                        refresh("fresh too", False)])
    gateway = make_gateway([(name, plugin)], config={"gateway": {"plugins": ["look"]}}, home=gateway_home)
    for _ in range(2):
        assert gateway.call("look").text == "looked"
    assert asked == ["fresh", "behind", "fresh too"] * 2
    assert runs == ["behind"] * 2


def test_a_running_refresh_is_waited_for_the_long_way(gateway_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs: list = []
    seen: list = []
    gateway = _gateway(gateway_home, lambda ctx: False, runs, seen)
    waited: list[str] = []

    async def before(plugin, refresh, ctx, budget_ms):
        waited.append(plugin)
        return None

    running = threading.Event()  # a refresh under way (`gateway watch`'s, a call's started earlier)
    monkeypatch.setitem(gateway.refreshing._running, "look", running)
    monkeypatch.setattr(gateway.refreshing, "before", before)
    assert gateway.call("look").text == "looked"
    assert waited == ["look"]
    running.set()
    assert gateway.call("look").text == "looked"
    assert waited == ["look"]
