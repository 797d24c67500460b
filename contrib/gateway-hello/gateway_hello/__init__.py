"""An example plugin: greets people, remembers a motto, and offers a prompt. Copy it to start your own.

Everything a plugin needs comes from ``gateway``: the type hints are the schema (descriptions and bounds in
``Annotated``), the gateway checks the arguments against it, passes the consent gate in ``ctx``, checks the
data against the output schema, masks secrets in the answer, and logs the call.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from gateway import Answer, Context, Prompt, PromptArgument, Resource, Setting, ToolError, hookimpl, tool

__version__ = "0.1.0"

# The shape of hello's data, checked by the gateway after each call (a mismatch is this plugin's fault).
HELLO_OUTPUT = {
    "type": "object",
    "properties": {"greeting": {"type": "string"}, "name": {"type": "string"}, "times": {"type": "integer"}},
    "required": ["greeting", "name", "times"],
}


@tool(title="Say hello", read_only=True, output_schema=HELLO_OUTPUT)
def hello(
    ctx: Context,
    name: str,  # a plain type needs no Annotated; the check below refuses a blank name in words
    times: Annotated[int, Field(ge=1, le=5, description="how many times to say it")] = 1,
) -> Answer:
    """Greet someone by name (others' words: the name is kept on one line)."""
    who = ctx.one_line(name, limit=80)
    if not who.strip():
        raise ToolError("name is required: say who to greet")
    greeting = ctx.settings["greeting"]
    lines = [f"{greeting}, {who}!" for _ in range(times)]
    return Answer(text="\n".join(lines), data={"greeting": greeting, "name": who, "times": times})


@tool(title="Echo a text", read_only=True, private_arguments=["text"])
def echo(ctx: Context, text: Annotated[str, "the text to give back"]) -> Answer:
    """Give a text back, framed as data and masked (shows what the gateway does with others' words)."""
    return Answer(text=ctx.frame(ctx.mask(text)), data={"length": len(text)})


@tool(title="Whose is this path", read_only=True)
def whose(ctx: Context, path: Annotated[str, "a path on this computer"]) -> Answer:
    """Say which project a path of this computer belongs to (refused when that project is closed to agents)."""
    owners = ctx.gate.owners_of(path=path)
    ctx.gate.check_read(owners, f"the path {ctx.one_line(path, 200)}")
    names = sorted(ctx.gate.project(owner).label for owner in owners)
    text = f"{path} belongs to: {', '.join(names)}" if names else f"{path} is in no project"
    return Answer(text=text, data={"projects": names})


def motto(ctx: Context) -> str:
    return f"Our motto: {ctx.settings['motto']}"


def greet_prompt(ctx: Context, name: str) -> str:
    return f"Write a short, warm greeting for {ctx.one_line(name, 80)}, then call the hello tool with that name."


@hookimpl
def register_settings(gateway):
    return [
        Setting("greeting", "Hello", "the word the hello tool greets with"),  # a str: a number here is refused
        Setting("motto", "Small tools, well made.", "the text of the hello://motto resource"),
    ]


@hookimpl
def register_tools(gateway):
    # Bare functions: each becomes Tool.from_function(function, **its @tool options).
    return [hello, echo, whose]


@hookimpl
def register_resources(gateway):
    return [Resource(uri="hello://motto", name="motto", read=motto, description="The plugin's motto.",
                     mime_type="text/plain")]


@hookimpl
def register_prompts(gateway):
    return [Prompt(name="greet", render=greet_prompt, description="Greet someone warmly.",
                   arguments=[PromptArgument("name", "who to greet", required=True)])]


@hookimpl
def register_demo(gateway):
    return [("hello", {"name": "Ada Example"}), ("echo", {"text": "Your verification code is 482913."})]
