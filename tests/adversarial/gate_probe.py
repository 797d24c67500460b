"""A probe plugin, installed as pip would leave it so that a real `gateway serve` loads it.

Every way it gives something (a tool per trait, a resource template, a resource listing, a prompt) asks the
gate about the item first, then answers with CANARY: a closed item's CANARY must never reach an agent.
"""

from __future__ import annotations

from pathlib import Path

from gateway.testing import installed_plugin

CANARY = "KEPT-WORDS-7f3a9c"

SOURCE = '''
from pydantic import BaseModel

from gateway import Prompt, PromptArgument, ResourcePage, ResourceTemplate, Tool, hookimpl

CANARY = "{canary}"


def _give(ctx, what, **trait):
    ctx.gate.check_read(ctx.gate.owners_of(**trait), what)
    return f"{{what}}: {{CANARY}}"


def probe_path(ctx, path: str) -> str:
    """The item at a file path."""
    return _give(ctx, "the file", path=path)


def probe_url(ctx, url: str) -> str:
    """The page at a web address."""
    return _give(ctx, "the page", url=url)


def probe_app(ctx, app: str) -> str:
    """The window of an app."""
    return _give(ctx, "the window", app=app)


def read_item(ctx, path: str) -> str:
    return probe_path(ctx, "/" + path)


def listing(ctx, cursor, limit):
    closed = ctx.settings["closed_path"]
    kept = ctx.gate.keep([closed], lambda path: ctx.gate.owners_of(path=path))
    return ResourcePage([{{"uri": "probe://items" + p, "name": "item", "title": CANARY}} for p in kept.items])


def recall(ctx, path: str) -> str:
    return probe_path(ctx, path)


class ProbeSettings(BaseModel):
    closed_path: str = "/nowhere"


@hookimpl
def register_settings(gateway):
    return ProbeSettings


@hookimpl
def register_tools(gateway):
    return [Tool.from_function(f, read_only=True) for f in (probe_path, probe_url, probe_app)]


@hookimpl
def register_resource_templates(gateway):
    return [ResourceTemplate("probe://items/{{path}}", "item", read_item, listing=listing)]


@hookimpl
def register_prompts(gateway):
    return [Prompt("recall", recall, arguments=[PromptArgument("path", required=True)])]
'''


def install_probe(site: Path) -> dict[str, str]:
    """Install the probe in `site`; returns the environment that lets `gateway serve` find it."""
    return installed_plugin(site, "probe", SOURCE.format(canary=CANARY))


def given(result: object) -> str:
    """All a host receives from one tool call: the text blocks and the structured content."""
    import json

    texts = [getattr(block, "text", "") for block in getattr(result, "content", [])]
    return "\n".join(texts) + json.dumps(getattr(result, "structured_content", None) or {})
