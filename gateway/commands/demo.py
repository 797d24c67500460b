"""`gateway demo`: a home of invented data, and a tour of it through a real MCP client session."""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import anyio
import click

from gateway.api.context import home_environment
from gateway.api.items import ToolError
from gateway.api.kit import plural

# Invented projects (reserved domains only): one open to agents, one closed, to show what the gate does.
DEMO_PROJECTS = """\
[[project]]
id = "garden"
name = "Community garden"
ai = true
paths = ["~/projects/garden", "~/Notes/garden"]
senders = ["@garden.example.org"]
apps = ["Garden Planner"]
urls = ["garden.example.org"]

[[project]]
id = "lawsuit"
name = "Neighbour dispute (private)"
ai = false
paths = ["~/projects/lawsuit"]
senders = ["@law.example.net"]
urls = ["law.example.net"]
"""


def own_command() -> str:
    """How to run `gateway` from here: the script beside this Python (`.venv/bin/gateway` from a clone, which is
    not on the PATH unless the venv is activated), or `python -m gateway`."""
    script = Path(sys.executable).parent / "gateway"
    if script.is_file():
        return shlex.quote(str(script))
    return f"{shlex.quote(sys.executable)} -m gateway"


def _show(text: str, limit: int = 16) -> None:
    """An answer as a person can read it: a JSON answer laid out, long lines wrapped (never cut), the first
    `limit` lines and how many more there are."""
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict | list):
        text = json.dumps(parsed, indent=1, ensure_ascii=False)
    lines: list[str] = []
    for line in text.splitlines() or [""]:
        lines += textwrap.wrap(line, 110, subsequent_indent="  ", break_on_hyphens=False) or [""]
    for line in lines[:limit]:
        click.echo("    " + line)
    if len(lines) > limit:
        click.echo(f"    (and {plural(len(lines) - limit, 'more line')})")


# Left in every demo home: a folder holding anything else was not made by the demo and is never used as one.
MARKER = ".gateway-demo"


def demo_home(directory: Path | None) -> Path:
    """The folder to fill: a new temporary one, an empty or absent one, or one an earlier demo made.

    Anything else is refused: the demo points HOME there and writes a manifest, a config and stores, so a
    person's real home (or any folder of theirs) must never become a demo home by a slip of the keyboard.
    """
    if directory is None:
        home = Path(tempfile.mkdtemp(prefix="gateway-demo-")).resolve()
    else:
        home = directory.expanduser().resolve()
        if home.exists() and not home.is_dir():
            raise ToolError(f"{home} is a file; give the demo an empty or new folder")
        if home.is_dir() and any(home.iterdir()) and not (home / MARKER).is_file():
            raise ToolError(
                f"{home} already holds files the demo did not make; give it an empty or new folder "
                "(or none, for a temporary one)"
            )
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    (home / MARKER).write_text("A home of invented data made by `gateway demo`; safe to delete.\n")
    return home


def run_demo(directory: Path | None) -> Path:
    home = demo_home(directory)
    env = home_environment(home)
    os.environ.update(env)
    os.environ.pop("GATEWAY_CONFIG", None)
    from gateway.engine.core import make_gateway_from_environment

    gateway = make_gateway_from_environment()
    gateway.folders.config.mkdir(parents=True, exist_ok=True)
    manifest = gateway.folders.config / "projects.toml"
    if not manifest.exists():
        manifest.write_text(DEMO_PROJECTS)
    snapshot = gateway.snapshot()
    catalogue = gateway.catalogue(snapshot)
    click.echo(f"Demo home: {home} (invented people, reserved domains)")
    for problem in catalogue.problems:
        click.echo(f"  note: {problem}")
    calls: list[tuple[str, str, dict[str, Any]]] = []
    for plugin, demo_calls in gateway.registry.call_each(
        "register_demo", catalogue.plugin_order, lambda n: gateway.settings_of(gateway.registry.get(n), snapshot.config)
    ):
        for tool, arguments in demo_calls or []:
            calls.append((plugin, tool, dict(arguments)))
    anyio.run(_tour, home, calls)
    # HOME too: the demo manifest's `~` routes and every default path must point into the demo home, never
    # at the person's own.
    program = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    click.echo("\nTo point a host at this demo home:")
    # -u GATEWAY_CONFIG: a config of the person's own, named in their environment, must not be read instead.
    click.echo(f"  env -u GATEWAY_CONFIG {program} {shlex.quote(sys.executable)} -m gateway serve")
    click.echo("Every call of the tour is in the demo's own audit log:")
    click.echo(f"  env -u GATEWAY_CONFIG {program} {shlex.quote(sys.executable)} -m gateway audit")
    click.echo(f"To point a host at your own data: {own_command()} setup --host claude-code --write   (or "
               "claude-desktop, cursor, vscode, codex, gemini; without --write it prints what it would write)")
    return home


async def _tour(home: Path, calls: list[tuple[str, str, dict[str, Any]]]) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp_types import Implementation

    from gateway.served import gateway_command

    env = {"PATH": os.environ.get("PATH", ""), **home_environment(home)}
    command = gateway_command()
    params = StdioServerParameters(command=command[0], args=[*command[1:], "serve"], env=env)
    async with Client(params, mode="legacy", client_info=Implementation(name="gateway-demo", version="1")) as client:
        info = client.server_info
        click.echo(f"\n→ initialize: {info.name if info else '?'} {info.version if info else ''}, "
                   f"protocol {client.protocol_version}")
        tools = (await client.list_tools()).tools
        click.echo(f"→ tools/list: {plural(len(tools), 'tool')}: {', '.join(t.name for t in tools)}")
        resources = (await client.list_resources()).resources
        click.echo(f"→ resources/list: {len(resources)} on the first page")
        for plugin, tool, arguments in calls:
            click.echo(f"\n→ tools/call {tool} {arguments}   [{plugin}]")
            result = await client.call_tool(tool, arguments)
            text = "\n".join(getattr(c, "text", "") for c in result.content)
            _show(("(error) " if result.is_error else "") + text)
