"""Test only: the fixtures the official MCP conformance suite calls by name, each answering what the suite's own
scenario code expects. Off unless ``[plugins.conformance] enabled = true``; never named by ``gateway setup``.

Every item here is invented and belongs to no project; each still asks the gate, as any plugin's items do, so a
person who closed things outside projects is not answered by it either.
"""

from __future__ import annotations

import json
import time

from gateway import (
    Context,
    PluginHost,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    Tool,
    ToolError,
    Traits,
    hookimpl,
)

__version__ = "0.1.0"

NO_ARGUMENTS = {"type": "object", "properties": {}}
# The suite checks that these keywords reach the host untouched (SEP-1613).
JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}},
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}


def _open(ctx: Context, what: str) -> None:
    """Refuse when the gate keeps things in no project (the fixtures' place) from agents."""
    ctx.gate.check_read(ctx.gate.owners(Traits()), what)


def simple_text(ctx: Context) -> str:
    _open(ctx, "the fixture test_simple_text")
    return "This is a simple text response for testing."


def error_handling(ctx: Context) -> str:
    raise ToolError("This tool intentionally returns an error for testing")


def tool_with_progress(ctx: Context) -> str:
    _open(ctx, "the fixture test_tool_with_progress")
    for done in (0, 50, 100):
        ctx.progress(done, 100)
        if done < 100:
            time.sleep(0.15)  # the suite asks for ~50 ms; the gateway spaces notifications 100 ms apart
    return "Progress reported: 0, 50 and 100 of 100."


MAX_STEPS = 300


def slow_work(ctx: Context, steps: int = 5) -> str:
    """Not the suite's: long work for the gateway's own tests of progress and tasks, a tenth of a second a step,
    each step reported with a card number in its message (which the gateway must mask)."""
    _open(ctx, "the fixture test_slow_work")
    if not 0 < steps <= MAX_STEPS:
        raise ToolError(f"steps must be between 1 and {MAX_STEPS}; it was {steps}.")
    for done in range(1, steps + 1):
        if ctx.deadline.passed():
            raise ToolError("Stopped at the call's deadline.")
        time.sleep(0.1)
        ctx.progress(done, steps, f"Step {done} of {steps}, paid with 4111 1111 1111 1111")
    return f"Did {steps} steps."


def schema_2020_12(ctx: Context, **arguments: object) -> str:
    _open(ctx, "the fixture json_schema_2020_12_tool")
    return f"Received {len(arguments)} arguments."


@hookimpl
def register_settings(gateway: PluginHost) -> type:
    from pydantic import BaseModel, Field

    class FixturesSettings(BaseModel):
        enabled: bool = Field(False, description="serve the conformance suite's fixtures (for the test that runs "
                                                 "the suite)")

    return FixturesSettings


@hookimpl
def register_tools(gateway: PluginHost) -> list[Tool]:
    return [
        Tool(name="test_simple_text", function=simple_text, input_schema=NO_ARGUMENTS, read_only=True,
             description="Answers a fixed line of text (conformance fixture)."),
        Tool(name="test_error_handling", function=error_handling, input_schema=NO_ARGUMENTS, read_only=True,
             description="Always answers a tool error (conformance fixture)."),
        Tool(name="test_tool_with_progress", function=tool_with_progress, input_schema=NO_ARGUMENTS,
             read_only=True, description="Reports progress 0, 50 and 100 of 100 (conformance fixture)."),
        Tool.from_function(slow_work, name="test_slow_work", read_only=True,
                           description="Long work in steps, each reported as progress (the gateway's tests)."),
        Tool(name="json_schema_2020_12_tool", function=schema_2020_12, input_schema=JSON_SCHEMA_2020_12,
             read_only=True, description="Tool with JSON Schema 2020-12 features (conformance fixture)."),
    ]


def _static_text(ctx: Context) -> str:
    _open(ctx, "the resource test://static-text")
    return "This is the content of the static text resource."


def _watched(ctx: Context) -> str:
    _open(ctx, "the resource test://watched-resource")
    return "A resource a host may subscribe to."


def _template_data(ctx: Context, id: str) -> str:  # noqa: A002 (the suite's parameter name)
    _open(ctx, "a resource of test://template/{id}/data")
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@hookimpl
def register_resources(gateway: PluginHost) -> list[Resource]:
    return [
        Resource(uri="test://static-text", name="static_text", read=_static_text, mime_type="text/plain",
                 description="A fixed text (conformance fixture)."),
        Resource(uri="test://watched-resource", name="watched_resource", read=_watched, mime_type="text/plain",
                 description="A resource to subscribe to (conformance fixture)."),
    ]


@hookimpl
def register_resource_templates(gateway: PluginHost) -> list[ResourceTemplate]:
    return [ResourceTemplate(uri_template="test://template/{id}/data", name="template_data", read=_template_data,
                             mime_type="application/json", description="Data for an id (conformance fixture).")]


def _simple_prompt(ctx: Context) -> str:
    return "This is a simple prompt for testing."


def _prompt_with_arguments(ctx: Context, arg1: str, arg2: str) -> str:
    return f"Prompt with arguments: arg1='{ctx.one_line(arg1, 200)}', arg2='{ctx.one_line(arg2, 200)}'"


def _complete_arg(ctx: Context, argument: str, value: str) -> list[str]:
    return [word for word in ("paris", "park", "party") if argument == "arg1" and word.startswith(value)]


@hookimpl
def register_prompts(gateway: PluginHost) -> list[Prompt]:
    return [
        Prompt(name="test_simple_prompt", render=_simple_prompt, description="A simple prompt (conformance fixture)."),
        Prompt(name="test_prompt_with_arguments", render=_prompt_with_arguments, complete=_complete_arg,
               description="A prompt with two arguments (conformance fixture).",
               arguments=[PromptArgument("arg1", "First test argument", required=True),
                          PromptArgument("arg2", "Second test argument", required=True)]),
    ]
