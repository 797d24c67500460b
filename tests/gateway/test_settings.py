"""Typed settings: a wrong value is named at load and by `gateway doctor`; every hook sees one shape."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from gateway import Context, Tool, hookimpl
from gateway.commands.doctor import run_checks
from gateway.testing import folders_of, inline_plugin, make_gateway


class Account(BaseModel):
    name: str
    maildir: str = Field(json_schema_extra={"format": "path"})
    addresses: list[str] = []


class Settings(BaseModel):
    greeting: str = Field("Hello", description="the word")
    times: int = Field(1, ge=1, le=5, description="how many")
    ratio: float = Field(0.5, description="a number")
    loud: bool = Field(False, description="shout")
    names: list[str] = Field(["Ada"], description="who")
    store: str = Field("notes.db", description="the file", json_schema_extra={"format": "path"})
    mode: Literal["fast", "slow"] = Field("fast", description="how")
    anything: Any = Field(None, description="not checked")
    accounts: list[Account] = Field([], description="records")


DEFAULTS = {"greeting": "Hello", "times": 1, "ratio": 0.5, "loud": False, "names": ["Ada"], "store": "notes.db",
            "mode": "fast", "anything": None, "accounts": []}


def show(ctx: Context) -> dict:
    return dict(ctx.settings)


def plugin():
    return inline_plugin("notes", tools=[Tool.from_function(show, read_only=True)], settings=Settings)


@pytest.mark.parametrize(("table", "words"), [
    ({"greeting": 3}, "[plugins.notes] greeting: must be a string, not integer"),
    ({"times": "2"}, "[plugins.notes] times: must be an integer, not string"),
    ({"times": True}, "[plugins.notes] times: must be an integer, not boolean"),
    ({"times": 9}, "[plugins.notes] times: must be at most 5"),
    ({"loud": "yes"}, "[plugins.notes] loud: must be true or false, not string"),
    ({"names": ["Ada", 2]}, "[plugins.notes] names[1]: must be a string, not integer"),
    ({"store": 12}, "[plugins.notes] store: must be a string, not integer"),
    ({"mode": "medium"}, "[plugins.notes] mode: must be one of 'fast', 'slow'"),
    ({"accounts": [{"name": "a", "maildir": "m"}, {"name": "b", "maildir": 7}]},
     "[plugins.notes] accounts[1].maildir: must be a string, not integer"),
    ({"accounts": [{"name": "a"}]}, "[plugins.notes] accounts[0]: missing 'maildir' (required)"),
    ({"accounts": [{"name": "a", "maildir": "m", "colour": "red"}]},
     "[plugins.notes] accounts[0]: unknown key 'colour' (known: name, maildir, addresses)"),
    ({"accounts": {"name": "a"}}, "[plugins.notes] accounts: must be a list, not object"),
])
def test_a_wrong_value_is_named_at_load_and_the_plugin_stays_off(gateway_home, table, words):
    gateway = make_gateway([plugin()], home=gateway_home, config={"plugins": {"notes": table}})
    catalogue = gateway.catalogue()
    assert "notes" not in catalogue.plugin_order  # off: its tool is listed, and each call says why
    (problem,) = catalogue.problems
    assert problem.startswith("plugin notes: ") and words in problem, problem
    answer = gateway.call("show")
    assert answer.is_error and answer.text.startswith("show cannot answer now: plugin notes") and words in answer.text


def test_a_setting_and_an_argument_that_break_the_same_rule_are_said_in_the_same_words(gateway_home):
    def count(times: Annotated[int, Field(ge=1, le=5)]) -> str:
        return str(times)

    gateway = make_gateway([inline_plugin("counting", tools=[Tool.from_function(count, read_only=True)])],
                           home=gateway_home)
    for value, words in (("2", "must be an integer, not string"), (9, "must be at most 5")):
        answer = gateway.call("count", {"times": value})
        assert answer.is_error and f"argument 'times' {words}" in answer.text
        settings = make_gateway([plugin()], home=gateway_home, config={"plugins": {"notes": {"times": value}}})
        assert f"[plugins.notes] times: {words}" in settings.catalogue().problems[0]


def test_right_values_pass_and_ints_are_numbers(gateway_home):
    table = {"ratio": 2, "times": 5, "names": [], "store": "~/n.db", "anything": {"x": 1}, "mode": "slow",
             "accounts": [{"name": "home", "maildir": "~/Mail"}]}
    gateway = make_gateway([plugin()], home=gateway_home, config={"plugins": {"notes": table}})
    assert gateway.catalogue().problems == [] and "show" in gateway.list_tools()
    # The model dumped: plain values, a whole number a number, a record's defaults filled in.
    assert gateway.call("show").data == {**DEFAULTS, **table, "ratio": 2.0,
                                         "accounts": [{"name": "home", "maildir": "~/Mail", "addresses": []}]}


def test_doctor_names_a_wrong_typed_setting(gateway_home):
    table = {"accounts": [{"name": "home", "maildir": "~/Mail"}, {"name": "work", "maildir": ["~/Work"]}]}
    gateway = make_gateway([plugin()], home=gateway_home, config={"plugins": {"notes": table}})
    said: list[str] = []
    assert run_checks(gateway, said.append).problems >= 1
    assert any(line.startswith("PROBLEM") and "[plugins.notes] accounts[1].maildir: must be a string, not list"
               in line for line in said), said


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
            return Settings

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
    expected = DEFAULTS | {"greeting": "Hi"}
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
            class PathSettings(BaseModel):
                store: str = ""
                archive: str = "~/old.db"
                db: str = "x.db"

            return PathSettings

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
