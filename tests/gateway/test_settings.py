"""Typed settings: a wrong value is named at load and by `gateway doctor`; every hook sees one shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway import Context, Setting, Tool, hookimpl
from gateway.commands.doctor import run_checks
from gateway.testing import folders_of, inline_plugin, make_gateway

SETTINGS = [
    Setting("greeting", "Hello", "the word"),
    Setting("times", 1, "how many", minimum=1, maximum=5),
    Setting("ratio", 0.5, "a number"),
    Setting("loud", False, "shout"),
    Setting("names", ["Ada"], "who"),
    Setting("store", Path("notes.db"), "the file"),
    Setting("mode", "fast", "how", choices=["fast", "slow"]),
    Setting("anything", None, "not checked"),
]


def show(ctx: Context) -> dict:
    return dict(ctx.settings)


def plugin():
    return inline_plugin("notes", tools=[Tool.from_function(show, read_only=True)], settings=SETTINGS)


def test_a_setting_type_is_inferred_from_its_default():
    kinds = {s.name: s.kind for s in SETTINGS}
    assert kinds["greeting"] is str and kinds["times"] is int and kinds["loud"] is bool
    assert kinds["names"] == list[str] and kinds["anything"] is None


@pytest.mark.parametrize(("table", "words"), [
    ({"greeting": 3}, "greeting must be a string, not 3"),
    ({"times": "2"}, "times must be an integer, not '2'"),
    ({"times": True}, "times must be an integer, not True"),
    ({"times": 9}, "times must be at most 5, not 9"),
    ({"loud": "yes"}, "loud must be true or false"),
    ({"names": ["Ada", 2]}, "names must be a list of strings"),
    ({"store": 12}, "store must be a path (a string)"),
    ({"mode": "medium"}, "mode must be one of 'fast', 'slow'"),
])
def test_a_wrong_value_is_named_at_load_and_the_plugin_stays_off(gateway_home, table, words):
    gateway = make_gateway([plugin()], home=gateway_home, config={"plugins": {"notes": table}})
    catalogue = gateway.catalogue()
    assert "notes" not in catalogue.plugin_order  # off: its tool is listed, and each call says why
    (problem,) = catalogue.problems
    assert "plugin notes" in problem and "[plugins.notes]" in problem and words in problem
    answer = gateway.call("show")
    assert answer.is_error and answer.text.startswith("show cannot answer now: plugin notes") and words in answer.text


def test_right_values_pass_and_ints_are_numbers(gateway_home):
    table = {"ratio": 2, "times": 5, "names": [], "store": "~/n.db", "anything": {"x": 1}, "mode": "slow"}
    gateway = make_gateway([plugin()], home=gateway_home, config={"plugins": {"notes": table}})
    assert gateway.catalogue().problems == [] and "show" in gateway.list_tools()


def test_doctor_names_a_wrong_typed_setting(gateway_home):
    gateway = make_gateway([plugin()], home=gateway_home, config={"plugins": {"notes": {"times": "two"}}})
    said: list[str] = []
    assert run_checks(gateway, said.append).problems >= 1
    assert any(line.startswith("PROBLEM") and "times must be an integer" in line for line in said)


def test_unknown_keys_are_still_refused_by_name(gateway_home):
    gateway = make_gateway([plugin()], home=gateway_home, config={"plugins": {"notes": {"colour": "red"}}})
    (problem,) = gateway.catalogue().problems
    assert "unknown key in [plugins.notes]: colour" in problem


def test_every_hook_and_call_sees_one_settings_shape(gateway_home):
    seen: dict[str, dict] = {}

    class Recording:
        @staticmethod
        @hookimpl
        def register_settings(gateway):
            seen["register_settings"] = dict(gateway.settings)
            return SETTINGS

        @staticmethod
        @hookimpl
        def register_tools(gateway):
            seen["register_tools"] = dict(gateway.settings)
            return [Tool.from_function(show, read_only=True)]

        @staticmethod
        @hookimpl
        def register_demo(gateway):
            seen["register_demo"] = dict(gateway.settings)
            return []

        @staticmethod
        @hookimpl
        def startup(gateway):
            seen["startup"] = dict(gateway.settings)

    config = {"plugins": {"notes": {"greeting": "Hi", "prefix": "n_", "disabled_tools": ["other"]}}}
    gateway = make_gateway([("notes", Recording())], home=gateway_home, config=config)
    from gateway.engine.registry import Lifecycle

    with Lifecycle(gateway):
        pass
    snapshot = gateway.snapshot()
    gateway.registry.call_each("register_demo", ["notes"], snapshot.config.table)
    called = gateway.call("n_show").data
    expected = {s.name: s.default for s in SETTINGS} | {"greeting": "Hi"}
    for hook in ("register_tools", "register_demo", "startup"):
        assert seen[hook] == expected, hook
    assert called == expected
    # register_settings runs before the plugin's keys are known: the table as given, the core's keys left out.
    assert seen["register_settings"] == {"greeting": "Hi"}


def test_path_settings_resolve_home_and_the_config_folder_alike_in_hooks_and_calls(gateway_home):
    found = {}

    class Paths:
        @staticmethod
        @hookimpl
        def register_settings(gateway):
            return [Setting("store", "", "a file"), Setting("archive", "~/old.db", "another"), Setting("db", "x.db")]

        @staticmethod
        @hookimpl
        def register_tools(gateway):
            found["host"] = (gateway.path_setting("store"), gateway.path_setting("archive"), gateway.path_setting("db"))
            return [Tool.from_function(where, read_only=True)]

    def where(ctx: Context) -> dict:
        found["ctx"] = (ctx.path_setting("store"), ctx.path_setting("archive"), ctx.path_setting("db"))
        return {}

    gateway = make_gateway([("paths", Paths())], home=gateway_home,
                           config={"plugins": {"paths": {"store": "data/notes.db"}}})
    gateway.call("where")
    config_folder = folders_of(gateway_home).config
    expected = (config_folder / "data" / "notes.db", Path.home() / "old.db", config_folder / "x.db")
    assert found["host"] == found["ctx"] == expected


def test_an_empty_path_setting_gives_the_default_not_the_config_folder(gateway_home):
    from gateway.api.context import PluginHost

    host = PluginHost("p", folders_of(gateway_home).for_plugin("p"), {"store": ""})
    assert host.path_setting("store") is None
    assert host.path_setting("store", Path("/srv/default.db")) == Path("/srv/default.db")
