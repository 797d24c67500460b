"""An example plugin: greets people, remembers a motto, and offers a prompt. Copy it to start your own.

Everything a plugin needs comes from ``gateway``; the gateway checks the arguments against the schema built
from the type hints, passes the consent gate in ``ctx``, masks secrets in the answer, and logs the call.
"""

from __future__ import annotations

from gateway import Answer, Prompt, PromptArgument, Resource, Setting, Tool, ToolError, hookimpl

__version__ = "0.1.0"


def hello(ctx, name: str, times: int = 1) -> Answer:
    """Greet someone by name (others' words: the name is kept on one line)."""
    if not 1 <= times <= 5:
        raise ToolError("times must be between 1 and 5")
    who = ctx.one_line(name, limit=80)
    if not who:
        raise ToolError("name is required: say who to greet")
    greeting = ctx.settings["greeting"]
    lines = [f"{greeting}, {who}!" for _ in range(times)]
    return Answer(text="\n".join(lines), data={"greeting": greeting, "name": who, "times": times})


def echo(ctx, text: str) -> Answer:
    """Give a text back, framed as data and masked (shows what the gateway does with others' words)."""
    return Answer(text=ctx.frame(ctx.mask(text)), data={"length": len(text)})


def whose(ctx, path: str) -> Answer:
    """Say which project a path of this computer belongs to (refused when that project is closed to agents)."""
    owners = ctx.gate.owners_of(path=path)
    ctx.gate.check_read(owners, f"the path {ctx.one_line(path, 200)}")
    names = sorted(ctx.gate.project(owner).label for owner in owners)
    text = f"{path} belongs to: {', '.join(names)}" if names else f"{path} is in no project"
    return Answer(text=text, data={"projects": names})


def motto(ctx) -> str:
    return f"Our motto: {ctx.settings['motto']}"


def greet_prompt(ctx, name: str) -> str:
    return f"Write a short, warm greeting for {ctx.one_line(name, 80)}, then call the hello tool with that name."


@hookimpl
def register_settings(gateway):
    return [
        Setting("greeting", "Hello", "the word the hello tool greets with"),
        Setting("motto", "Small tools, well made.", "the text of the hello://motto resource"),
    ]


@hookimpl
def register_tools(gateway):
    return [
        Tool.from_function(hello, title="Say hello", read_only=True,
                           output_schema={"type": "object", "properties": {
                               "greeting": {"type": "string"}, "name": {"type": "string"},
                               "times": {"type": "integer"}}, "required": ["greeting", "name", "times"]}),
        Tool.from_function(echo, title="Echo a text", read_only=True, private_arguments=["text"]),
        Tool.from_function(whose, title="Whose is this path", read_only=True),
    ]


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
