"""Annotations are the only type language: every built-in tool's input and output schemas come from its annotations,
its settings are one pydantic class, an unannotated parameter turns its plugin off, and the old ways stay gone."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import typing
from pathlib import Path

import anyio
import pytest

import gateway
from gateway.api import schemas
from gateway.api.context import home_environment
from gateway.engine.registry import BUILT_IN_ORDER
from gateway.testing import inline_plugin, make_gateway, serve_client, write_config
from tests.forkserver import gateway_command

ROOT = Path(__file__).resolve().parents[2]
BUILT_INS = (*BUILT_IN_ORDER, "hello")

# The output schemas the built-ins wrote by hand before their return annotations said them: each new one must say
# the same (loosely: the same properties, types, required keys, items and descriptions).
HAND_WRITTEN = json.loads((Path(__file__).parent / "hand_written_output_schemas.json").read_text())


def _all_on(home: Path) -> typing.Any:
    config = {"gateway": {"plugins": list(BUILT_INS)}, "plugins": {"texts": {"enabled": True}}}
    return make_gateway(home=home, config=config, entrypoints=True)


@pytest.fixture(scope="module")
def built_in_tools(tmp_path_factory: pytest.TempPathFactory) -> dict[str, gateway.Tool]:
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        for key, value in home_environment(home).items():
            patch.setenv(key, value)
        patch.delenv("GATEWAY_CONFIG", raising=False)
        built = _all_on(home)
        catalogue = built.catalogue()
        assert catalogue.problems == [], catalogue.problems
        plugins = [built.registry.get(name) for name in BUILT_INS]
    tools = {tool.name: tool for plugin in plugins for tool in plugin.tools}
    assert len(tools) >= 40
    return tools


def _loose(schema: typing.Any) -> typing.Any:
    if not isinstance(schema, dict):
        return schema
    found: dict[str, typing.Any] = {"enum": schema["enum"]} if "enum" in schema else {"type": schema.get("type")}
    if "properties" in schema:
        found["properties"] = {key: _loose(value) for key, value in schema["properties"].items()}
        found["required"] = sorted(schema.get("required", []))
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            found[key] = _loose(schema[key])
    if "description" in schema:
        found["description"] = schema["description"]
    return found


def test_every_built_in_tool_schema_comes_from_its_annotations(built_in_tools):
    for name, tool in built_in_tools.items():
        function = inspect.unwrap(tool.function)
        described = schemas.describe(function, name)
        assert dict(tool.input_schema) == described.schema, name
        assert _plain(tool.output_schema) == described.output, name


def _plain(value: typing.Any) -> typing.Any:
    return None if value is None else json.loads(json.dumps(value, default=dict))


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_each_output_shape_says_what_its_hand_written_schema_said(built_in_tools, name):
    assert _loose(_plain(built_in_tools[name].output_schema)) == _loose(HAND_WRITTEN[name])


def test_every_built_in_declares_its_settings_as_one_pydantic_class(tmp_path, monkeypatch):
    from pydantic import BaseModel

    for key, value in home_environment(tmp_path).items():
        monkeypatch.setenv(key, value)
    built = _all_on(tmp_path)
    built.catalogue()
    for name in BUILT_INS:
        model = built.registry.get(name).settings_model
        assert isinstance(model, type) and issubclass(model, BaseModel), name


_SETTING = re.compile(r"\bSetting\(|import[^\n]*\bSetting\b")
_BY_HAND = re.compile(r"output_schema\s*=")


def _lines(*folders: Path) -> list[tuple[str, str]]:
    found = []
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.suffix in (".py", ".md") and "__pycache__" not in path.parts:
                found += [(f"{path.relative_to(ROOT)}:{n}", line.strip())
                          for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)]
    return found


def test_neither_setting_nor_a_hand_written_output_schema_comes_back():
    assert not hasattr(gateway, "Setting") and "Setting" not in gateway.__all__
    everywhere = _lines(ROOT / "gateway", ROOT / "plugins", ROOT / "contrib", ROOT / "docs")
    assert [f"{place}: {line}" for place, line in everywhere if _SETTING.search(line)] == []
    # Plugins and the guide: the core alone carries a tool's output schema, made from its annotation.
    outside_the_core = _lines(ROOT / "plugins", ROOT / "contrib", ROOT / "docs")
    assert [f"{place}: {line}" for place, line in outside_the_core if _BY_HAND.search(line)] == []


def test_an_unannotated_parameter_turns_its_plugin_off_naming_the_plugin_the_tool_and_the_parameter(gateway_home):
    def greet(name, times: int = 1) -> str:  # noqa: ANN001 (the point of the test)
        return f"Hello, {name}" * times

    def fine() -> str:
        return "fine"

    built = make_gateway([inline_plugin("loose", tools=[greet]), inline_plugin("tidy", tools=[fine])],
                         home=gateway_home)
    catalogue = built.catalogue()
    (problem,) = catalogue.problems
    assert problem.startswith("plugin loose: ") and "tool greet: parameter 'name' has no type annotation" in problem
    assert "loose" not in catalogue.plugin_order and built.list_tools() == ["fine"]


def test_a_settings_hook_returning_the_old_list_turns_the_plugin_off_with_what_to_return(gateway_home):
    from gateway import hookimpl

    class Old:
        @staticmethod
        @hookimpl
        def register_settings(gateway):
            return [("greeting", "Hello")]

    (problem,) = make_gateway([("old", Old())], home=gateway_home).catalogue().problems
    assert "plugin old" in problem and "return one pydantic model class" in problem


def test_doctor_names_a_broken_mail_account_that_once_passed_it(gateway_home, tmp_path):
    # Before the settings were a class, a list of records was not checked: doctor said no problem.
    maildir = tmp_path / "Mail"
    write_config(gateway_home, {"gateway": {"plugins": ["mail"]}, "plugins": {"mail": {"accounts": [
        {"name": "home", "maildir": str(maildir)}, {"name": "work", "maildr": str(maildir)}]}}})
    run = subprocess.run(gateway_command("doctor"), capture_output=True, text=True, timeout=120,
                         env={"PATH": "/usr/bin:/bin", **home_environment(gateway_home)})
    assert run.returncode != 0
    assert "[plugins.mail] accounts[1]: missing 'maildir' (required)" in run.stdout
    assert "[plugins.mail] accounts[1]: unknown key 'maildr'" in run.stdout


def test_a_served_call_of_a_plugin_whose_settings_are_wrong_says_where_and_never_runs(gateway_home, tmp_path):
    # The sentence names the place and the rule, never the value: a secret pasted into the wrong key stays home.
    wrong = ["Hi", "pw-Kq8vT2xLmN4pR7sW"]
    write_config(gateway_home, {"gateway": {"plugins": ["hello"]}, "plugins": {"hello": {"greeting": wrong}}})

    async def session():
        async with serve_client(gateway_home) as client:
            listed = await client.list_tools()
            called = await client.call_tool("hello", {"name": "Ada"})
            return listed, called

    listed, called = anyio.run(session)
    hello = next(tool for tool in listed.tools if tool.name == "hello")
    assert hello.output_schema == {"type": "object", "required": ["greeting", "name", "times"], "properties": {
        "greeting": {"type": "string"}, "name": {"type": "string"}, "times": {"type": "integer"}}}
    assert called.is_error and "[plugins.hello] greeting: must be a string, not list" in called.content[0].text
    assert "Hi, Ada" not in called.content[0].text and "Kq8vT2xLmN4pR7sW" not in called.content[0].text


def test_the_output_shapes_written_without_pydantic_are_pydantics(built_in_tools, monkeypatch):
    # A TypedDict of plain fields is described directly at start (a TypeAdapter costs milliseconds each): what
    # hosts see must be exactly what pydantic, made portable, writes.
    returns = {name: schemas._hints(inspect.unwrap(tool.function), name).get("return")
               for name, tool in built_in_tools.items()}
    fast = {name: schemas.output_schema(annotation, name) for name, annotation in returns.items()}
    assert sum(schema is not None for schema in fast.values()) >= len(HAND_WRITTEN)
    monkeypatch.setattr(schemas, "FAST_SCHEMAS", False)
    assert fast == {name: schemas.output_schema(annotation, name) for name, annotation in returns.items()}


def test_a_plugins_own_validator_is_said_at_its_place_in_its_own_words(gateway_home, tmp_path):
    accounts = [{"name": "home", "maildir": str(tmp_path / "a")}, {"name": "home", "maildir": str(tmp_path / "b")}]
    built = make_gateway(entrypoints=True, home=gateway_home,
                         config={"gateway": {"plugins": ["mail"]}, "plugins": {"mail": {"accounts": accounts}}})
    (problem,) = built.catalogue().problems
    assert "[plugins.mail] accounts: the account name 'home' is used twice" in problem
