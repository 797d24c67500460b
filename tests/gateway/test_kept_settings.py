"""What a plugin's settings model makes of its table, kept between starts with its tool schemas: a start whose
plugin package and table are as they were does not make the model (nor import its module), and gives the same
settings, the same problem sentence and the same switch as the model would; anything changed asks for the model.

A plugin package of two modules (its hooks, its settings model) is loaded by a registry, as `gateway serve` loads it;
its modules are then forgotten and imported again, as a new process would. Files are dated two minutes back (a file
changed in the last two seconds is never trusted).
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from pathlib import Path

import pytest

from gateway.api.context import Folders
from gateway.engine.registry import Registry
from tests.gateway.probe_site import forget, site_fixture

PACKAGE = "gateway_keptsettings"

SETTINGS = '''
from typing import Literal

from pydantic import BaseModel, Field


class Account(BaseModel):
    name: str
    folder: str = Field("", json_schema_extra={{"format": "path"}})


class ProbeSettings(BaseModel):
    enabled: bool = False
    greeting: str = Field("{greeting}", description="how to greet")
    limit: int = Field(10, ge=1, le=50)
    mode: Literal["short", "long"] = "short"
    accounts: list[Account] = []
'''

INIT = '''
from gateway import hookimpl


@hookimpl
def register_settings(gateway):
    from gateway_keptsettings.settings import ProbeSettings

    return ProbeSettings


@hookimpl
def register_tools(gateway):
    from gateway_keptsettings.tools import greet

    return [greet]
'''

TOOLS = '''
from gateway import tool


@tool(read_only=True)
def greet(name: str) -> str:
    """Greet someone."""
    return name
'''

TABLES = [
    {},
    {"enabled": True, "greeting": "Bonjour", "accounts": [{"name": "work"}]},
    {"limit": "ten"},  # a wrong value: the plugin is off, said in the same words
    {"greting": "Hi"},  # an unknown key
    {"enabled": True, "prefix": "p_", "disabled_tools": ["greet"]},  # the core's own keys
]


def write_package(site: Path, greeting: str = "Hello") -> None:
    folder = site / PACKAGE
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text(INIT)
    (folder / "settings.py").write_text(SETTINGS.format(greeting=greeting))
    (folder / "tools.py").write_text(TOOLS)
    then = time.time() - 120
    for path in folder.iterdir():
        os.utime(path, (then, then))


def load(folders: Folders, table: dict):  # noqa: ANN201 (a Plugin)
    """The package loaded by a registry of its own with `table` (a fresh import, as a new start does)."""
    forget(PACKAGE)
    module = importlib.import_module(PACKAGE)
    plugin = Registry(folders, plugins=[("keptsettings", module)], entrypoints=False).get("keptsettings", table)
    assert plugin.ok, plugin.error
    return plugin


def read(plugin, table: dict) -> tuple:  # noqa: ANN001
    return plugin.settings_for(table), plugin.table_problem(table), plugin.switched_off(table)


site = site_fixture(PACKAGE)


@pytest.mark.parametrize("table", TABLES)
def test_a_second_start_reads_the_table_as_the_model_does_without_making_it(gateway_home, site, table) -> None:
    write_package(site)
    folders = Folders.from_environment()
    first = load(folders, table)
    made = read(first, table)
    assert f"{PACKAGE}.settings" in sys.modules
    second = load(folders, table)
    assert f"{PACKAGE}.settings" not in sys.modules  # the model was not made
    assert read(second, table) == made
    assert second.tools[0].name == "greet"
    given = second.settings_for(table)
    given["greeting"] = "changed by a careless plugin"
    assert second.settings_for(table) == made[0]  # each caller has a copy of its own
    assert second.settings_model.__name__ == "ProbeSettings"  # asked for when something needs it
    assert read(second, table) == made


def test_the_problem_sentence_and_the_switch_are_the_models(gateway_home, site) -> None:
    write_package(site)
    folders = Folders.from_environment()
    load(folders, {"limit": "ten"})
    again = load(folders, {"limit": "ten"})
    assert again.table_problem({"limit": "ten"}) == (
        "plugin keptsettings: [plugins.keptsettings] limit: must be an integer, not string; the plugin is off until "
        "the config is fixed")
    assert again.switched_off({}) is True  # another table: the model is asked for
    assert f"{PACKAGE}.settings" in sys.modules
    assert again.settings_for({"enabled": True})["enabled"] is True


def test_a_changed_model_is_asked_for_again(gateway_home, site) -> None:
    write_package(site)
    folders = Folders.from_environment()
    assert load(folders, {}).settings_for({})["greeting"] == "Hello"
    write_package(site, greeting="Bonjour")
    changed = load(folders, {})
    assert f"{PACKAGE}.settings" in sys.modules
    assert changed.settings_for({})["greeting"] == "Bonjour"
    again = load(folders, {})
    assert f"{PACKAGE}.settings" not in sys.modules  # the new reading was kept
    assert again.settings_for({})["greeting"] == "Bonjour"


def test_a_table_with_a_date_is_not_taken_for_its_text(gateway_home, site) -> None:
    import datetime

    write_package(site)
    folders = Folders.from_environment()
    written = {"greeting": datetime.date(2026, 12, 2)}
    load(folders, {"greeting": "2026-12-02"})
    again = load(folders, written)
    assert f"{PACKAGE}.settings" in sys.modules  # not the same table: the model reads it
    assert again.settings_for(written)["greeting"] == "2026-12-02"


def test_a_refused_table_holding_a_date_is_read_by_the_model_and_not_kept(gateway_home, site) -> None:
    # TOML gives dates as date objects, which a refused table's settings carry as written: they cannot be kept, and
    # the plugin is loaded as without keeping, off with the table's problem.
    import datetime

    write_package(site)
    folders = Folders.from_environment()
    table = {"limit": datetime.date(2026, 12, 2)}
    for _start in range(2):
        plugin = load(folders, table)
        assert plugin.table_problem(table) and "limit" in plugin.table_problem(table)
        assert plugin.settings_for(table)["limit"] == datetime.date(2026, 12, 2)


def test_another_package_under_the_same_name_is_not_given_the_first_ones_reading(gateway_home, site) -> None:
    other = site / "gateway_keptother"
    other.mkdir()
    (other / "__init__.py").write_text(INIT.replace(PACKAGE, "gateway_keptother"))
    (other / "settings.py").write_text(SETTINGS.format(greeting="Hallo"))
    (other / "tools.py").write_text(TOOLS)
    then = time.time() - 120
    for path in other.iterdir():
        os.utime(path, (then, then))
    write_package(site)
    os.utime(site, (then, then))  # the folder as it was: the same environment for both loads
    folders = Folders.from_environment()
    assert load(folders, {}).settings_for({})["greeting"] == "Hello"
    try:
        module = importlib.import_module("gateway_keptother")
        plugin = Registry(folders, plugins=[("keptsettings", module)], entrypoints=False).get("keptsettings", {})
        assert plugin.settings_for({})["greeting"] == "Hallo"
    finally:
        forget("gateway_keptother")


def test_a_plugin_given_as_an_object_asks_for_its_model_at_each_load(gateway_home) -> None:
    from pydantic import BaseModel

    from gateway import hookimpl

    asked: list[str] = []

    class Given:
        @hookimpl
        def register_settings(self, gateway):  # noqa: ANN001, ANN201
            asked.append("model")

            class GivenSettings(BaseModel):
                greeting: str = "Hello"

            return GivenSettings

    folders = Folders.from_environment()
    for _ in range(2):
        plugin = Registry(folders, plugins=[("given", Given())], entrypoints=False).get("given", {})
        assert plugin.ok and plugin.settings_for({}) == {"greeting": "Hello"}
    assert asked == ["model", "model"]
