"""A tool's data is checked against the shape its return annotation says: a mismatch is the plugin's fault, logged,
never sent; the shape may be a TypedDict, a dataclass, an attrs class or a pydantic model, and so may the data."""

from __future__ import annotations

import dataclasses

import anyio
import attrs
import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from gateway import Answer, Tool, tool
from gateway.testing import (
    inline_plugin,
    installed_plugin,
    make_gateway,
    read_audit,
    serve_client,
    write_config,
)


class Run(TypedDict):
    next_run: str


class Jobs(TypedDict):
    jobs: list[Run]
    count: int


OUTPUT = {
    "type": "object",
    "properties": {
        "jobs": {"type": "array", "items": {"type": "object", "properties": {"next_run": {"type": "string"}},
                                            "required": ["next_run"]}},
        "count": {"type": "integer"},
    },
    "required": ["jobs", "count"],
}


def jobs(broken: bool = False, bare: bool = False) -> Answer[Jobs]:
    if bare:
        return Answer(text="no data at all")
    runs = [{"next_run": "2026-12-01T09:00:00+00:00"}, {"next_run": None if broken else "2026-12-02T09:00:00+00:00"}]
    return Answer(text="2 jobs; secret-word-in-data", data={"jobs": runs, "count": 2}, given=("cron://a", "cron://b"))


def _gateway(home):
    tool = Tool.from_function(jobs, read_only=True)
    return make_gateway([inline_plugin("cron2", tools=[tool])], home=home)


def test_the_return_annotation_is_the_output_schema():
    assert Tool.from_function(jobs).output_schema == OUTPUT

    def plain() -> Answer:
        return Answer(text="")

    assert Tool.from_function(plain).output_schema is None


def test_output_schema_is_never_given_by_hand():
    with pytest.raises(TypeError, match="return annotation"):
        Tool.from_function(jobs, output_schema=OUTPUT)
    with pytest.raises(TypeError, match="return annotation"):
        tool(output_schema=OUTPUT)


@dataclasses.dataclass
class CountD:
    count: int


@attrs.define
class CountA:
    count: int


class CountP(BaseModel):
    count: int


@pytest.mark.parametrize("shape", [CountD, CountA, CountP])
def test_a_dataclass_attrs_or_pydantic_shape_gives_the_schema_and_its_instance_the_data(gateway_home, shape):
    def counted(broken: bool = False) -> Answer:
        return Answer(text="3", data={"count": "three"} if broken else shape(count=3))

    counted.__annotations__["return"] = Answer[shape]  # the shape is a parameter here, not a name of the module

    tool_made = Tool.from_function(counted, read_only=True)
    assert tool_made.output_schema == {"type": "object", "properties": {"count": {"type": "integer"}},
                                       "required": ["count"]}
    gateway = make_gateway([inline_plugin("counts", tools=[tool_made])], home=gateway_home)
    assert gateway.call("counted").data == {"count": 3}
    assert gateway.call("counted", {"broken": True}).is_error


def test_a_shape_that_is_not_an_object_is_refused_at_load():
    def listing() -> Answer[list[int]]:
        return Answer(text="")

    with pytest.raises(TypeError, match="object"):
        Tool.from_function(listing)


def test_data_that_matches_is_given(gateway_home):
    answer = _gateway(gateway_home).call("jobs")
    assert not answer.is_error and answer.data["count"] == 2


def test_data_that_breaks_the_schema_is_a_fault_never_sent(gateway_home, captured_logs):
    gateway = _gateway(gateway_home)
    answer = gateway.call("jobs", {"broken": True})
    assert answer.is_error and answer.data is None and answer.given == ()
    assert "fault of the plugin" in answer.text and "secret-word-in-data" not in answer.text
    (logged,) = [e for e in captured_logs if "output_schema" in e["event"]]
    assert logged["path"] == "jobs[1].next_run" and logged["tool"] == "jobs" and logged["plugin"] == "cron2"
    assert "secret-word" not in str(logged)
    (line,) = [e for e in read_audit(gateway_home) if e.get("tool") == "jobs"]
    assert line["outcome"] == "bad_output" and line["given"] == []


def test_no_data_when_a_schema_is_declared_is_a_fault_too(gateway_home):
    answer = _gateway(gateway_home).call("jobs", {"bare": True})
    assert answer.is_error and "does not match the shape it declares" in answer.text


def test_an_error_answer_is_not_checked(gateway_home):
    def failing() -> Answer[Jobs]:
        return Answer(text="the store is empty", is_error=True)

    made = Tool.from_function(failing, read_only=True)
    gateway = make_gateway([inline_plugin("cron3", tools=[made])], home=gateway_home)
    assert gateway.call("failing").text == "the store is empty"


PLUGIN = '''
from typing_extensions import TypedDict

from gateway import Answer, Tool, hookimpl

class Count(TypedDict):
    count: int

def count() -> Answer[Count]:
    """Count things (wrongly: a string where the schema says integer)."""
    return Answer(text="three", data={"count": "three"})

@hookimpl
def register_tools(gateway):
    return [Tool.from_function(count, read_only=True)]
'''


def test_through_a_real_server_the_host_gets_an_error_not_invalid_structured_content(gateway_home, tmp_path):
    env = installed_plugin(tmp_path / "site", "counter", PLUGIN)
    write_config(gateway_home, {"gateway": {"plugins": ["counter"]}})

    async def session():
        async with serve_client(gateway_home, extra_env=env) as client:
            return await client.call_tool("count", {})

    result = anyio.run(session)
    assert result.is_error and not result.structured_content
    assert "fault of the plugin" in result.content[0].text
