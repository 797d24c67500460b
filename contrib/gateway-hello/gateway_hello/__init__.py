"""An example plugin: greets people, keeps greeting cards, remembers a motto, and offers a prompt. Copy it to
start your own.

Everything a plugin needs comes from ``gateway``, and every type is an annotation: the parameters' hints are the
input schema (descriptions and bounds in ``Annotated``), the return annotation ``Answer[Hello]`` the output
schema, and the settings one pydantic class. The gateway checks the arguments, passes the consent gate in
``ctx``, checks the data against the output schema, masks secrets in the answer, and logs the call.

The cards show how a plugin that holds things keeps them behind the gate: it describes each card by its traits
(the file it lives in, the person it is written to) and asks the gate which projects take it (``ctx.gate.owners``);
it never decides itself which routes apply. ``traits_of`` and ``census`` tell the person the same
(``gateway access why hello://cards/NAME``, ``gateway access list``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # pydantic reads a TypedDict from here before Python 3.12

from gateway import (
    Answer,
    Context,
    Person,
    PluginHost,
    Prompt,
    PromptArgument,
    Resource,
    ResourceTemplate,
    ToolError,
    Traits,
    hookimpl,
    left_out_sentence,
    tool,
)

__version__ = "0.1.0"



# The shape of hello's data, checked by the gateway after each call (a mismatch is this plugin's fault). A
# docstring here would be published as the output schema's description.
class Hello(TypedDict):
    greeting: str
    name: str
    times: int


@tool(title="Say hello", read_only=True)
def hello(
    ctx: Context,
    name: str,  # a plain type needs no Annotated; the check below refuses a blank name in words
    times: Annotated[int, Field(ge=1, le=5, description="how many times to say it")] = 1,
) -> Answer[Hello]:
    """Greet someone by name (others' words: the name is kept on one line)."""
    who = ctx.one_line(name, limit=80)
    if not who.strip():
        raise ToolError("name is required: say who to greet")
    greeting = ctx.settings["greeting"]
    lines = [f"{greeting}, {who}!" for _ in range(times)]
    return Answer(text="\n".join(lines), data=Hello(greeting=greeting, name=who, times=times))


@tool(title="Echo a text", read_only=True, private_arguments=["text"])
def echo(ctx: Context, text: Annotated[str, "the text to give back"]) -> Answer:
    """Give a text back, framed as data and masked (shows what the gateway does with others' words)."""
    return Answer(text=ctx.frame(ctx.mask(text)), data={"length": len(text)})


@tool(title="Whose is this path", read_only=True)
def whose(ctx: Context, path: Annotated[str, "a path on this computer"]) -> Answer:
    """Say which project a path of this computer belongs to (refused when that project is closed to agents)."""
    owners = ctx.gate.owners(Traits(paths=[path]))
    ctx.gate.check_read(owners, f"the path {ctx.one_line(path, 200)}")
    names = sorted(ctx.gate.project(owner).label for owner in owners)
    text = f"{path} belongs to: {', '.join(names)}" if names else f"{path} is in no project"
    return Answer(text=text, data={"projects": names})


CARD_URI = "hello://cards/{name}"
_CARD_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,80}$")  # one file of the cards folder, never a path


def _cards_folder(holder: Context | PluginHost) -> Path:
    return holder.path_setting("cards", Path(holder.folders.data) / "cards")


def _card_traits(path: Path) -> Traits:
    """A card as the gate sees it: its file, and the person it is written to (its `To:` line). The person wrote
    the card, so the address is theirs to name: proven, as the recipients of one's own sent mail are."""
    first = path.read_text(encoding="utf-8", errors="replace").partition("\n")[0]
    to = first[3:].strip() if first.lower().startswith("to:") else ""
    return Traits(paths=[str(path)], people=[Person(to, proven=True)] if to else [])


def _cards(holder: Context | PluginHost) -> list[Path]:
    folder = _cards_folder(holder)
    return sorted(p for p in folder.glob("*.txt") if p.is_file()) if folder.is_dir() else []


@tool(title="List greeting cards", read_only=True)
def list_cards(ctx: Context) -> Answer:
    """The greeting cards kept, by name (those in a project closed to agents are left out and counted)."""
    kept = ctx.gate.keep(_cards(ctx), lambda path: ctx.gate.owners(_card_traits(path)))
    names = [path.stem for path in kept.items]
    lines = names or ["(no cards)"]
    if kept.left_out:
        lines.append(left_out_sentence(kept.left_out, "card"))
    return Answer(text="\n".join(lines), data={"cards": names, "left_out": kept.left_out},
                  given=tuple(CARD_URI.format(name=name) for name in names), left_out=kept.left_out)


@tool(title="Read a greeting card", read_only=True)
def read_card(ctx: Context, name: Annotated[str, "the card's name, as list_cards gives it"]) -> Answer:
    """One greeting card's words (others' words: framed)."""
    path = _cards_folder(ctx) / f"{name}.txt"
    if not _CARD_NAME.match(name) or not path.is_file():
        raise ToolError(f"no card named {ctx.one_line(name, 80)!r} (list_cards gives their names)")
    address = CARD_URI.format(name=name)
    ctx.gate.check_read(ctx.gate.owners(_card_traits(path)), f"the card {name}", address=address)
    return Answer(text=ctx.frame(path.read_text(encoding="utf-8", errors="replace")), given=(address,))


def motto(ctx: Context) -> str:
    return f"Our motto: {ctx.settings['motto']}"


def greet_prompt(ctx: Context, name: str) -> str:
    return f"Write a short, warm greeting for {ctx.one_line(name, 80)}, then call the hello tool with that name."


class HelloSettings(BaseModel):
    """The keys of [plugins.hello]: a wrong value (greeting = 3) is named at load and by `gateway doctor`."""

    greeting: str = Field("Hello", description="the word the hello tool greets with")
    motto: str = Field("Small tools, well made.", description="the text of the hello://motto resource")
    # A path: written as the person wrote it ("" for the default), read with path_setting("cards").
    cards: str = Field("", description="the folder of greeting cards (NAME.txt, a first line `To: someone`); empty: "
                       "<data>/plugins/hello/cards", json_schema_extra={"format": "path"})


@hookimpl
def register_settings(gateway):
    return HelloSettings


@hookimpl
def register_tools(gateway):
    # Bare functions: each becomes Tool.from_function(function, **its @tool options).
    return [hello, echo, whose, list_cards, read_card]


@hookimpl
def register_resources(gateway):
    return [Resource(uri="hello://motto", name="motto", read=motto, description="The plugin's motto.",
                     mime_type="text/plain")]


@hookimpl
def register_resource_templates(gateway):
    return [ResourceTemplate(CARD_URI, "card", lambda ctx, name: read_card(ctx, name), title="A greeting card",
                             mime_type="text/plain")]


@hookimpl
def traits_of(gateway: PluginHost, address: str) -> Traits | None:
    """For `gateway access why hello://cards/NAME`: the card's traits, as the tools give them to the gate."""
    prefix = CARD_URI.split("{", 1)[0]
    name = address[len(prefix):] if address.startswith(prefix) else ""
    path = _cards_folder(gateway) / f"{name}.txt"
    return _card_traits(path) if _CARD_NAME.match(name) and path.is_file() else None


@hookimpl
def census(gateway: PluginHost) -> Iterator[tuple[str, Traits]]:
    """For `gateway access list`: every card, as the source `hello cards`."""
    for path in _cards(gateway):
        yield "hello cards", _card_traits(path)


@hookimpl
def register_prompts(gateway):
    return [Prompt(name="greet", render=greet_prompt, description="Greet someone warmly.",
                   arguments=[PromptArgument("name", "who to greet", required=True)])]


@hookimpl
def register_demo(gateway):
    return [("hello", {"name": "Ada Example"}), ("echo", {"text": "Your verification code is 482913."})]
