"""Discovery through entry points: order, the config as allow-list, a broken plugin not stopping the others."""

from __future__ import annotations

import sys
import textwrap

import pytest

from gateway.api.context import Folders
from gateway.engine.registry import Registry, default_order
from gateway.testing import make_gateway

GOOD = """
from gateway import Tool, hookimpl

def {name}_ping() -> str:
    return "{name} pong"

@hookimpl
def register_tools(gateway):
    return [Tool.from_function({name}_ping, read_only=True)]
"""


@pytest.fixture
def fake_entry_points(tmp_path, monkeypatch):
    """Plugins installed as pip leaves them: a module and a dist-info folder announcing an entry point."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))

    def add(name: str, source: str) -> None:
        module = f"fake_plugin_{name}"
        (folder / f"{module}.py").write_text(textwrap.dedent(source))
        info = folder / f"fake_plugin_{name}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fake-plugin-{name}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[gateway.plugins]\n{name} = {module}\n")
        sys.modules.pop(module, None)

    return add


def test_no_config_enables_every_plugin_built_ins_first_then_by_name():
    assert default_order(["zeta", "cron", "alpha", "sessions", "spam"]) == ["sessions", "cron", "spam", "alpha", "zeta"]


def test_installed_plugins_are_found_and_ordered(fake_entry_points, gateway_home):
    fake_entry_points("zeta", GOOD.format(name="zeta"))
    fake_entry_points("alpha", GOOD.format(name="alpha"))
    gw = make_gateway(entrypoints=True, home=gateway_home)
    tools = gw.list_tools()
    assert tools.index("alpha_ping") < tools.index("zeta_ping")
    assert gw.registry.get("zeta").origin == "fake-plugin-zeta" and gw.registry.get("zeta").version == "1.0"


def test_the_config_is_the_allow_list_and_the_order(fake_entry_points, gateway_home):
    fake_entry_points("zeta", GOOD.format(name="zeta"))
    fake_entry_points("alpha", GOOD.format(name="alpha"))
    fake_entry_points("mid", GOOD.format(name="mid"))
    gw = make_gateway(entrypoints=True, home=gateway_home, config={"gateway": {"plugins": ["zeta", "alpha"]}})
    assert gw.list_tools() == ["zeta_ping", "alpha_ping"]
    assert "fake_plugin_mid" not in sys.modules, "a plugin that is off is never imported"


def test_a_plugin_that_fails_to_import_is_reported_and_the_others_serve(fake_entry_points, gateway_home):
    fake_entry_points("broken", "import gateway_missing_dependency_xyz\n")
    fake_entry_points("good", GOOD.format(name="good"))
    gw = make_gateway(entrypoints=True, home=gateway_home, config={"gateway": {"plugins": ["broken", "good"]}})
    assert gw.list_tools() == ["good_ping"]
    assert gw.call("good_ping").text == "good pong"
    plugin = gw.registry.get("broken")
    assert not plugin.ok and "gateway_missing_dependency_xyz" in plugin.error
    assert any("broken" in p for p in gw.catalogue().problems)


def test_a_plugin_that_fails_to_register_is_unregistered(fake_entry_points, gateway_home):
    fake_entry_points("faulty", """
        from gateway import hookimpl
        @hookimpl
        def register_tools(gateway):
            raise RuntimeError("cannot open my store")
    """)
    fake_entry_points("good", GOOD.format(name="good"))
    gw = make_gateway(entrypoints=True, home=gateway_home, config={"gateway": {"plugins": ["faulty", "good"]}})
    assert gw.list_tools() == ["good_ping"]
    assert "cannot open my store" in gw.registry.get("faulty").error
    assert gw.registry.manager.get_plugin("faulty") is None


def test_a_misspelt_hook_is_caught(fake_entry_points, gateway_home):
    fake_entry_points("typo", """
        from gateway import hookimpl
        @hookimpl
        def register_tool(gateway):
            return []
    """)
    gw = make_gateway(entrypoints=True, home=gateway_home, config={"gateway": {"plugins": ["typo"]}})
    assert "register_tool" in gw.registry.get("typo").error


def test_an_enabled_plugin_that_is_not_installed_is_named(gateway_home):
    gw = make_gateway(home=gateway_home, config={"gateway": {"plugins": ["ghost"]}})
    assert gw.list_tools() == []
    assert "no plugin named 'ghost' is installed" in " ".join(gw.catalogue().problems)


def test_each_plugin_gets_its_own_folders(tmp_path):
    folders = Folders(tmp_path / "c", tmp_path / "d", tmp_path / "s", tmp_path / "k")
    mine = folders.for_plugin("sessions")
    assert mine.data == tmp_path / "d" / "plugins" / "sessions"
    assert Registry(folders, entrypoints=False).names() == []
