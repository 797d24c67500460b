"""Tool.from_function: every parameter described by its type hints, in the portable subset hosts take."""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Annotated, Any, Literal

import pytest
from annotated_types import Ge, Le, MaxLen
from pydantic import BaseModel, Field

from gateway import Answer, Context, Tool, ToolError, tool
from gateway.api.schemas import portable
from gateway.testing import inline_plugin, make_gateway


def _keys(schema: Any, found: set[str]) -> set[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            found.add(key)
            _keys(value, found)
    elif isinstance(schema, list):
        for value in schema:
            _keys(value, found)
    return found


def assert_portable(schema: dict[str, Any]) -> None:
    """No ``$ref``/``$defs``, no pydantic titles, no type arrays, no null options: what every validator takes."""
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text and '"null"' not in text
    for node in _walk(schema):
        assert not isinstance(node.get("type"), list), node
        assert "title" not in node, node


def _walk(schema: Any):
    if isinstance(schema, dict):
        yield schema
        for key, value in schema.items():
            if key in ("properties", "patternProperties"):
                for sub in value.values():
                    yield from _walk(sub)
            elif isinstance(value, dict | list):
                yield from _walk(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _walk(value)


def plan(
    ctx: Context,
    city: Annotated[str, "the city, as its people write it"],
    days: Annotated[int, Ge(1), Le(14)] = 3,
    units: Literal["metric", "imperial"] = "metric",
    note: Annotated[str, Field(description="a short note", max_length=80)] = "",
    tags: Annotated[list[str], MaxLen(5)] | None = None,
    start: date | None = None,
    at: datetime | None = None,
) -> Answer:
    """Plan a trip.

    The model reads this paragraph too.

    Args:
        city: for people reading the code only.
    """
    return Answer(text="ok", data={
        "city": city, "days": days, "units": units, "tags": tags,
        "start": type(start).__name__, "at": type(at).__name__,
        "weekday": start.strftime("%A") if start else None, "offset": str(at.utcoffset()) if at else None,
    })


def test_every_parameter_is_described_by_its_annotations():
    schema = Tool.from_function(plan).input_schema
    props = schema["properties"]
    assert list(props) == ["city", "days", "units", "note", "tags", "start", "at"]
    assert schema["required"] == ["city"] and schema["additionalProperties"] is False
    assert props["city"] == {"type": "string", "description": "the city, as its people write it"}
    assert props["days"] == {"type": "integer", "minimum": 1, "maximum": 14, "default": 3}
    assert props["units"] == {"type": "string", "enum": ["metric", "imperial"], "default": "metric"}
    assert props["note"] == {"type": "string", "description": "a short note", "maxLength": 80, "default": ""}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}, "maxItems": 5}
    assert props["start"] == {"type": "string", "format": "date"}
    assert props["at"] == {"type": "string", "format": "date-time"}
    assert_portable(dict(schema))


def test_the_description_is_the_docstring_without_its_args_section():
    assert Tool.from_function(plan).description == "Plan a trip.\n\nThe model reads this paragraph too."


def test_the_context_is_found_by_its_type_whatever_its_name_or_place(gateway_home):
    def where(city: str, context: Context) -> str:
        return f"{city} for {context.plugin}"

    made = Tool.from_function(where)
    assert list(made.input_schema["properties"]) == ["city"]
    gateway = make_gateway([inline_plugin("trips", tools=[made])], home=gateway_home)
    assert gateway.call("where", {"city": "Lyon"}).text == "Lyon for trips"


def test_a_first_parameter_named_ctx_without_annotation_is_still_the_context(gateway_home):
    def legacy(ctx, word: str) -> str:
        return f"{word} {ctx.plugin}"

    assert list(Tool.from_function(legacy).input_schema["properties"]) == ["word"]
    gateway = make_gateway([inline_plugin("old", tools=[Tool.from_function(legacy)])], home=gateway_home)
    assert gateway.call("legacy", {"word": "hi"}).text == "hi old"


def test_dates_arrive_parsed_after_the_check(gateway_home):
    gateway = make_gateway([inline_plugin("trips", tools=[Tool.from_function(plan, read_only=True)])],
                           home=gateway_home)
    answer = gateway.call("plan", {"city": "Lyon", "start": "2026-12-07", "at": "2026-12-07T09:30:00+01:00"})
    assert not answer.is_error, answer.text
    assert answer.data["start"] == "date" and answer.data["weekday"] == "Monday"
    assert answer.data["at"] == "datetime" and answer.data["offset"] == "1:00:00"


@pytest.mark.parametrize(("arguments", "words"), [
    ({"city": "Lyon", "start": "next monday"}, "must be a date, e.g. 2026-11-30"),
    ({"city": "Lyon", "at": "2026-12-07T09:30:00"}, "with its offset"),
    ({"city": "Lyon", "days": 20}, "'days'"),
    ({"city": "Lyon", "units": "kelvin"}, "must be one of 'metric', 'imperial'"),
    ({"city": "Lyon", "tags": ["a", "b", "c", "d", "e", "f"]}, "'tags'"),
])
def test_a_value_outside_the_annotation_is_refused_with_a_sentence(gateway_home, arguments, words):
    gateway = make_gateway([inline_plugin("trips", tools=[Tool.from_function(plan, read_only=True)])],
                           home=gateway_home)
    answer = gateway.call("plan", arguments)
    assert answer.is_error and words in answer.text


def test_an_impossible_date_that_matches_the_format_is_refused_not_a_fault(gateway_home):
    gateway = make_gateway([inline_plugin("trips", tools=[Tool.from_function(plan, read_only=True)])],
                           home=gateway_home)
    answer = gateway.call("plan", {"city": "Lyon", "start": "2026-02-30"})
    assert answer.is_error and "'start'" in answer.text and "fault" not in answer.text


class Opaque:
    pass


def test_a_type_no_schema_describes_is_refused_at_registration_naming_tool_and_parameter():
    def gauge(reading: Opaque) -> str:
        return ""

    with pytest.raises(TypeError, match=r"tool gauge: parameter 'reading' has the type Opaque"):
        Tool.from_function(gauge)


def test_a_plugin_with_such_a_tool_is_reported_not_served(gateway_home):
    def gauge(reading: Opaque) -> str:
        return ""

    plugin = ("meter", type("M", (), {"register_tools": staticmethod(_hook(lambda: [Tool.from_function(gauge)]))})())
    gateway = make_gateway([plugin], home=gateway_home)
    problems = gateway.catalogue().problems
    assert any("parameter 'reading'" in p and "meter" in p for p in problems)


def _hook(make):
    from gateway import hookimpl

    return hookimpl(lambda gateway: make())


def test_a_fixed_length_tuple_is_refused_as_not_portable():
    def pair(point: tuple[int, int]) -> str:
        return ""

    with pytest.raises(TypeError, match="parameter 'point'.*fixed-length tuple"):
        Tool.from_function(pair)


class Place(BaseModel):
    city: str
    country: Literal["FR", "DE"] | None = None


def test_models_are_inlined_and_arrive_as_models(gateway_home):
    def visit(places: list[Place]) -> str:
        return ", ".join(f"{p.city}/{p.country}" for p in places)

    made = Tool.from_function(visit)
    assert_portable(dict(made.input_schema))
    item = made.input_schema["properties"]["places"]["items"]
    assert item["properties"]["country"] == {"type": "string", "enum": ["FR", "DE"]}
    gateway = make_gateway([inline_plugin("trips", tools=[made])], home=gateway_home)
    assert gateway.call("visit", {"places": [{"city": "Lyon", "country": "FR"}]}).text == "Lyon/FR"


def test_portable_turns_type_arrays_and_null_options_into_one_type():
    assert portable({"type": ["string", "null"], "title": "X"}) == {"type": "string"}
    assert portable({"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}) == {"type": "integer"}
    assert portable({"const": "a"}) == {"enum": ["a"]}
    assert portable({"type": "string", "format": "path"}) == {"type": "string"}


def test_a_hand_written_schema_is_kept_as_given():
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": False}

    def search(ctx: Context, q: Opaque) -> str:  # the type could not be said: the schema is given by hand
        return ""

    assert dict(Tool.from_function(search, input_schema=schema).input_schema) == schema


def test_async_functions_stay_async_when_wrapped(gateway_home):
    async def later(day: date, context: Context) -> str:
        return day.isoformat()

    made = Tool.from_function(later)
    import inspect

    assert inspect.iscoroutinefunction(made.function)
    gateway = make_gateway([inline_plugin("cal", tools=[made])], home=gateway_home)
    assert gateway.call("later", {"day": "2026-12-24"}).text == "2026-12-24"


@tool(read_only=True, title="Say the time")
def clock(city: Annotated[str, "where"]) -> str:
    """The time somewhere."""
    return f"noon in {city}"


def shout(words: str) -> str:
    return words.upper()


def test_register_tools_takes_bare_functions(gateway_home):
    from gateway import hookimpl

    class Plugin:
        @staticmethod
        @hookimpl
        def register_tools(gateway):
            return [clock, shout]

    gateway = make_gateway([("bare", Plugin())], home=gateway_home)
    tools = {listed.name: listed.tool for listed in gateway.catalogue().tools}
    assert tools["clock"].read_only and tools["clock"].title == "Say the time"
    assert tools["clock"].input_schema["properties"]["city"]["description"] == "where"
    assert tools["shout"].read_only is False  # a bare function without @tool is a writing tool
    assert gateway.call("clock", {"city": "Lyon"}).text == "noon in Lyon"


def test_a_wrapped_function_refuses_what_it_cannot_convert_with_a_tool_error():
    def on(day: date) -> str:
        return str(day)

    made = Tool.from_function(on)
    with pytest.raises(ToolError, match="'day'"):
        made.function(day="not a date")
