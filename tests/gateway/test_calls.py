"""Calls through the core: argument checks, errors, merging order, collisions, prefixes, read-only, reloads."""

from __future__ import annotations

import os
import time

import pytest

from gateway import Answer, Tool, ToolError
from gateway.testing import inline_plugin, make_gateway, write_config


def double(x: int) -> str:
    """Twice x."""
    return str(x * 2)


def greet(name: str, loud: bool = False) -> str:
    return name.upper() if loud else name


def write_note(ctx, text: str) -> Answer:
    return Answer(text=f"kept {len(text)} characters", data={"length": len(text)}, given=("note:1",))


def boom() -> str:
    raise RuntimeError("secret internals: /home/someone/.ssh/id_rsa")


def refuse() -> str:
    raise ToolError("the store is empty: run the import first")


def tools_a():
    return [
        Tool.from_function(double, read_only=True),
        Tool.from_function(greet, read_only=True),
        Tool.from_function(write_note, private_arguments=["text"]),
        Tool.from_function(boom, read_only=True),
        Tool.from_function(refuse, read_only=True),
    ]


@pytest.fixture
def gateway(gateway_home):
    return make_gateway([inline_plugin("alpha", tools=tools_a())], home=gateway_home)


def test_a_good_call_answers_text_and_data(gateway):
    assert gateway.call("double", {"x": 21}).text == "42"
    answer = gateway.call("write_note", {"text": "hello"})
    assert answer.data == {"length": 5} and not answer.is_error


def test_unknown_argument_is_named_with_those_the_tool_takes(gateway):
    answer = gateway.call("greet", {"name": "Ada", "volume": 3})
    assert answer.is_error
    assert "'volume'" in answer.text and "name, loud" in answer.text


def test_wrong_type_names_the_argument_and_the_expected_type(gateway):
    answer = gateway.call("double", {"x": "three"})
    assert answer.is_error and "'x'" in answer.text and "an integer" in answer.text and "string" in answer.text


def test_missing_required_argument_is_named(gateway):
    answer = gateway.call("double", {})
    assert answer.is_error and "missing argument 'x'" in answer.text


def test_a_plugin_crash_answers_a_sentence_without_internals(gateway, capsys):
    answer = gateway.call("boom")
    assert answer.is_error
    assert "boom failed inside the alpha plugin" in answer.text
    assert "secret internals" not in answer.text and "id_rsa" not in answer.text
    # the server carries on
    assert gateway.call("double", {"x": 1}).text == "2"


def test_a_tool_error_is_answered_as_is(gateway):
    answer = gateway.call("refuse")
    assert answer.is_error and answer.text == "the store is empty: run the import first"


def test_unknown_tool_is_not_found(gateway):
    from gateway.engine.core import NotFound

    with pytest.raises(NotFound, match="nope"):
        gateway.call("nope")


def test_tools_follow_config_order_then_declared_order(gateway_home):
    a = inline_plugin("alpha", tools=[Tool.from_function(double), Tool.from_function(greet)])
    b = inline_plugin("beta", tools=[Tool.from_function(refuse)])
    gw = make_gateway([a, b], home=gateway_home, config={"gateway": {"plugins": ["beta", "alpha"]}})
    assert gw.list_tools() == ["refuse", "double", "greet"]
    write_config(gateway_home, {"gateway": {"plugins": ["alpha"]}})
    _touch_later(gw.source.path)
    assert gw.list_tools() == ["double", "greet"]


def _touch_later(path):
    # Make sure the stat differs even on filesystems with coarse timestamps.
    stamp = time.time() + 2
    os.utime(path, (stamp, stamp))


def test_a_second_tool_of_the_same_name_is_refused_naming_both_plugins(gateway_home):
    a = inline_plugin("alpha", tools=[Tool.from_function(double)])
    b = inline_plugin("beta", tools=[Tool.from_function(double), Tool.from_function(greet)])
    gw = make_gateway([a, b], home=gateway_home, config={"gateway": {"plugins": ["alpha", "beta"]}})
    assert gw.list_tools() == ["double", "greet"]
    problems = " ".join(gw.catalogue().problems)
    assert "'double' of plugin beta refused" in problems and "plugin alpha" in problems


def test_a_prefix_renames_a_plugins_tools(gateway_home):
    a = inline_plugin("alpha", tools=[Tool.from_function(double)])
    b = inline_plugin("beta", tools=[Tool.from_function(double)])
    gw = make_gateway(
        [a, b], home=gateway_home,
        config={"gateway": {"plugins": ["alpha", "beta"]}, "plugins": {"beta": {"prefix": "b_"}}},
    )
    assert gw.list_tools() == ["double", "b_double"]
    assert gw.call("b_double", {"x": 2}).text == "4"


def test_disabled_tools_are_neither_listed_nor_called(gateway_home):
    from gateway.engine.core import NotFound

    gw = make_gateway([inline_plugin("alpha", tools=tools_a())], home=gateway_home,
                      config={"plugins": {"alpha": {"disabled_tools": ["greet"]}}})
    assert "greet" not in gw.list_tools()
    with pytest.raises(NotFound, match=r"greet is not offered: the person turned it off \(disabled_tools in "):
        gw.call("greet", {"name": "x"})


def test_read_only_hides_and_refuses_every_writing_tool(gateway_home):
    from gateway.engine.core import NotFound

    gw = make_gateway([inline_plugin("alpha", tools=tools_a())], home=gateway_home,
                      config={"gateway": {"read_only": True}})
    assert "write_note" not in gw.list_tools() and "double" in gw.list_tools()
    with pytest.raises(NotFound, match="write_note is not offered: it writes, and the gateway is read-only"):
        gw.call("write_note", {"text": "x"})


def test_the_listing_does_not_change_when_another_plugin_comes_or_goes(gateway_home):
    a = inline_plugin("alpha", tools=[Tool.from_function(double)])
    b = inline_plugin("beta", tools=[Tool.from_function(greet)])
    gw = make_gateway([a, b], home=gateway_home, config={"gateway": {"plugins": ["alpha", "beta"]}})
    before = gw.list_tools()
    write_config(gateway_home, {"gateway": {"plugins": ["alpha"]}})
    _touch_later(gw.source.path)
    assert gw.list_tools() == [n for n in before if n != "greet"]


def test_an_unreadable_config_is_said_on_each_call_never_taken_for_empty(gateway):
    assert gateway.call("double", {"x": 1}).text == "2"
    gateway.source.path.write_text("[gateway\nplugins = ")
    _touch_later(gateway.source.path)
    for _ in range(2):
        answer = gateway.call("double", {"x": 1})
        assert answer.is_error and "not valid TOML" in answer.text
    gateway.source.path.write_text("")
    _touch_later(gateway.source.path)
    assert gateway.call("double", {"x": 1}).text == "2"


def test_an_unknown_key_in_a_plugin_table_is_named_and_said_by_each_call_of_its_listed_tools(gateway_home):
    gw = make_gateway([inline_plugin("alpha", tools=tools_a())], home=gateway_home,
                      config={"plugins": {"alpha": {"colour": "red"}}})
    assert gw.list_tools() == [t.name for t in tools_a()] and gw.catalogue().plugin_order == []
    assert "unknown key in [plugins.alpha]: colour" in " ".join(gw.catalogue().problems)
    answer = gw.call("double", {"x": 1})
    assert answer.is_error and answer.text.startswith("double cannot answer now: plugin alpha: unknown key")


def test_an_unknown_key_in_the_gateway_table_is_an_error_naming_it(gateway):
    gateway.source.path.write_text("[gateway]\nplugin = ['alpha']\n")
    _touch_later(gateway.source.path)
    answer = gateway.call("double", {"x": 1})
    assert answer.is_error and "plugin" in answer.text and "plugins, read_only" in answer.text.split("Known:")[-1]


def test_secrets_in_an_answer_are_masked_by_the_core_whatever_the_plugin_did(gateway_home):
    leaked = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"

    def leak() -> Answer:
        return Answer(text=f"token {leaked}", data={"nested": [f"see {leaked}"]})

    gw = make_gateway([inline_plugin("alpha", tools=[Tool.from_function(leak)])], home=gateway_home)
    answer = gw.call("leak")
    assert leaked not in answer.text and leaked not in str(answer.data)


def test_settings_reach_the_tool_with_defaults_and_are_read_again(gateway_home):
    from pydantic import BaseModel

    class Colours(BaseModel):
        colour: str = "blue"

    def show(ctx) -> str:
        return ctx.settings["colour"]

    plugin = inline_plugin("alpha", tools=[Tool.from_function(show)], settings=Colours)
    gw = make_gateway([plugin], home=gateway_home)
    assert gw.call("show").text == "blue"
    write_config(gateway_home, {"plugins": {"alpha": {"colour": "green"}}})
    _touch_later(gw.source.path)
    assert gw.call("show").text == "green"


def test_each_tool_is_checked_against_its_own_schema_even_when_gateways_come_and_go(gateway_home):
    # Schemas of freed gateways may leave their memory addresses to new ones: the checks must not mix up.
    def takes_query(query: str) -> str:
        return query

    def takes_limit(limit: int = 5) -> str:
        return str(limit)

    for round_number in range(30):
        tool = Tool.from_function(takes_query if round_number % 2 else takes_limit, name="t")
        gw = make_gateway([inline_plugin("p", tools=[tool])], home=gateway_home)
        arguments = {"query": "x"} if round_number % 2 else {}
        assert not gw.call("t", arguments).is_error
        del gw, tool


def test_a_plugin_crash_is_logged_with_its_traceback(gateway, captured_logs):
    gateway.call("boom")
    (event,) = [e for e in captured_logs if e["event"] == "plugin failed"]
    assert event["plugin"] == "alpha" and "RuntimeError" in event["traceback"]
