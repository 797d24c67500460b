"""The `gateway` command: serve hosts, show what is installed, call a tool, read the audit log, set up a host."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import click

from gateway.core import Caller, Gateway, NotFound, make_gateway_from_environment
from gateway.items import ToolError


def _gateway() -> Gateway:
    return make_gateway_from_environment()


class PluginCommands(click.Group):
    """The built-in commands, then those the enabled plugins add (``gateway sessions import``...)."""

    _found: dict[tuple[str | None, ...], dict[str, click.Command]] = {}

    def _plugin_commands(self) -> dict[str, click.Command]:
        # Keyed by the environment that chooses the config and folders, so a process (a test run) that
        # changes home sees that home's plugins.
        key = tuple(os.environ.get(k) for k in ("GATEWAY_CONFIG", "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"))
        if key not in self._found:
            found: dict[str, click.Command] = {}
            try:
                gateway = _gateway()
                snapshot = gateway.snapshot()
                gateway.catalogue(snapshot)
                names = gateway.enabled(snapshot.config) if snapshot.error is None else gateway.registry.names()
                for name in names:
                    gateway.registry.get(name, snapshot.config.table(name))
                for _plugin, commands in gateway.registry.call_each(
                    "register_commands", names, lambda n: snapshot.config.table(n)
                ):
                    for command in commands or []:
                        if command.name and command.name not in super().list_commands(click.Context(self)):
                            found.setdefault(command.name, command)
            except Exception as error:  # a broken plugin must not take the whole CLI down
                click.echo(f"warning: plugin commands unavailable: {error}", err=True)
            self._found[key] = found
        return self._found[key]

    def list_commands(self, ctx: click.Context) -> list[str]:
        return super().list_commands(ctx) + sorted(self._plugin_commands())

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return super().get_command(ctx, name) or self._plugin_commands().get(name)


@click.group(cls=PluginCommands)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="GATEWAY_CONFIG",
    help="The config file to use (default: config.toml in the gateway's config folder). A file named here "
    "or in GATEWAY_CONFIG must exist: while it does not, nothing is given to agents.",
)
@click.option("--log-level", default=None, help="How much to log on stderr: debug, info, warning (default), error.")
def main(config_file: Path | None, log_level: str | None) -> None:
    """One MCP server for what you keep on this computer, behind one consent gate, privacy masks and an audit log.

    Point your AI host at `gateway serve` (`gateway setup --host NAME` does it), or try `gateway demo`.
    """
    # Whatever this process creates (stores, their journals, exports) is the person's alone, whichever
    # plugin creates it.
    os.umask(0o077)
    if config_file is not None:
        os.environ["GATEWAY_CONFIG"] = str(config_file)
    if log_level:
        from gateway.log import configure

        configure(log_level)


@main.command()
@click.option("--http", "http", metavar="HOST:PORT", help="Serve Streamable HTTP on this address (loopback only).")
def serve(http: str | None) -> None:
    """Serve MCP on stdin/stdout (what a host runs), or over HTTP with --http 127.0.0.1:PORT."""
    gateway = _gateway()
    if http:
        from gateway.http import serve_http

        serve_http(gateway, http)
        return
    from gateway.server import serve_stdio

    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(serve_stdio, gateway)


@main.command()
def plugins() -> None:
    """Every plugin found: on or off, version, where it comes from, its tools, or why it failed to load."""
    gateway = _gateway()
    snapshot = gateway.snapshot()
    if snapshot.error:
        click.echo(f"config problem: {snapshot.error}", err=True)
    catalogue = gateway.catalogue(snapshot)
    enabled = set(gateway.enabled(snapshot.config)) if snapshot.error is None else set()
    names = list(dict.fromkeys(gateway.registry.names() + sorted(enabled)))
    for name in names:
        on = name in enabled
        plugin = gateway.registry.get(name, snapshot.config.table(name)) if on else None
        candidate = gateway.registry.candidates.get(name)
        origin = candidate.origin if candidate else "not installed"
        version = (plugin.version if plugin else "") or (candidate.version if candidate else "")
        state = "on" if on else "off"
        click.echo(f"{name} [{state}] {version} ({origin})".replace("  ", " "))
        if plugin is not None and not plugin.ok:
            click.echo(f"  error: {plugin.error}")
        elif plugin is not None:
            public = [listed.name for listed in catalogue.tools if listed.tool.plugin == name]
            click.echo(f"  tools: {', '.join(public) or '(none)'}")
    for problem in catalogue.problems:
        click.echo(f"problem: {problem}")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the tools/list result as JSON, as a host receives it.")
def tools(as_json: bool) -> None:
    """The merged tools/list, exactly as a host sees it."""
    listing = anyio.run(_host_view, _gateway())
    if as_json:
        click.echo(json.dumps(listing, indent=2, ensure_ascii=False))
        return
    for tool in listing["tools"]:
        hint = " (read-only)" if tool.get("annotations", {}).get("readOnlyHint") else ""
        first = (tool.get("description") or "").strip().splitlines()[:1]
        click.echo(f"{tool['name']}{hint}: {first[0] if first else ''}")


async def _host_view(gateway: Gateway) -> dict[str, Any]:
    from mcp import Client

    from gateway.server import build_server

    tools: list[dict[str, Any]] = []
    async with Client(build_server(gateway, "cli"), mode="legacy") as client:
        cursor = None
        while True:
            result = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
            tools.extend(t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in result.tools)
            cursor = result.next_cursor
            if not cursor:
                break
    return {"tools": tools}


@main.command()
@click.argument("tool")
@click.argument("arguments", required=False, default="{}")
@click.option("--json", "as_json", is_flag=True, help="Print the structured answer as JSON.")
def call(tool: str, arguments: str, as_json: bool) -> None:
    """Call TOOL with ARGUMENTS (a JSON object) through the same gate, masks and audit as a host's call."""
    try:
        parsed = json.loads(arguments)
    except ValueError as error:
        raise click.UsageError(f"ARGUMENTS must be a JSON object, e.g. '{{\"limit\": 5}}' ({error})") from None
    if not isinstance(parsed, dict):
        raise click.UsageError("ARGUMENTS must be a JSON object, e.g. '{\"limit\": 5}'")
    gateway = _gateway()
    try:
        answer = anyio.run(gateway.call_tool, tool, parsed, Caller("gateway-cli", "", "cli"))
    except NotFound as error:
        names = ", ".join(listed.name for listed in gateway.catalogue().tools)
        raise click.ClickException(f"{error}. Tools: {names or '(none)'}") from None
    if as_json and answer.data is not None:
        click.echo(json.dumps(dict(answer.data), indent=2, ensure_ascii=False))
    else:
        click.echo(answer.text)
    if answer.is_error:
        sys.exit(1)


_RELATIVE = re.compile(r"^(\d+)\s*([mhdw])$")


def parse_since(value: str) -> datetime:
    """`2h`, `3d`, `1w`, `30m` ago, or an ISO date/time (local time when no zone is given)."""
    found = _RELATIVE.match(value.strip())
    if found:
        amount, unit = int(found.group(1)), found.group(2)
        delta = {"m": timedelta(minutes=amount), "h": timedelta(hours=amount), "d": timedelta(days=amount),
                 "w": timedelta(weeks=amount)}[unit]
        return datetime.now(UTC) - delta
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter("use 30m, 2h, 3d, 1w or an ISO date such as 2026-11-30T08:00") from None
    return moment.astimezone(UTC) if moment.tzinfo is None else moment


@main.command()
@click.option("--since", help="Only calls after this: 30m, 2h, 3d, 1w, or an ISO date/time.")
@click.option("--tool", help="Only calls of this tool (or resource URI, or prompt).")
@click.option("--client", help="Only calls from this host (its client name, e.g. claude-code).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line, as stored.")
def audit(since: str | None, tool: str | None, client: str | None, as_json: bool) -> None:
    """Read the audit log back: what was given to which host, when."""
    gateway = _gateway()
    moment = parse_since(since) if since else None
    count = 0
    for entry in gateway.audit.read(since=moment, tool=tool, client=client):
        count += 1
        if as_json:
            click.echo(json.dumps(entry, ensure_ascii=False))
            continue
        what = entry.get("tool") or entry.get("uri") or entry.get("prompt") or entry.get("method") or "?"
        given = entry.get("given") or []
        shown = ", ".join(given[:3]) + (f" and {len(given) - 3} more" if len(given) > 3 else "")
        left = f" left_out={entry['left_out']}" if entry.get("left_out") else ""
        click.echo(
            f"{entry.get('time', '?')} {entry.get('client', '?')} {what} {entry.get('outcome', '?')} "
            f"length={entry.get('length', 0)}{left}{' given: ' + shown if shown else ''}"
        )
    if not count and not as_json:
        filtered = since is not None or tool is not None or client is not None
        click.echo("(no calls match)" if filtered else "(no calls logged)", err=True)


@main.command()
def doctor() -> None:
    """Check the config, the projects manifest, the plugins and the audit folder; exit 1 on a problem.

    A config or manifest that is named but missing, unreadable or empty is a problem (the gateway then gives
    nothing); everything open to agents (no closed project, things outside projects open) is a warning.
    """
    from gateway.doctor import run_checks

    found = run_checks(_gateway(), click.echo)
    if found.problems:
        click.echo(f"{found.problems} problem(s) found.")
        sys.exit(1)
    click.echo(f"No problem found, but read the {found.warnings} warning(s) above." if found.warnings else "All good.")


@main.group()
def access() -> None:
    """What is kept from agents, and why: the projects, open or closed, and what keeps a given thing.

    Agents are never told which project keeps a thing; these commands tell you, with the line to change.
    """


@access.command("why")
@click.argument("address")
@click.argument("arguments", required=False)
def access_why(address: str, arguments: str | None) -> None:
    """Which project (or setting) keeps ADDRESS from agents, and which line of which file to change.

    ADDRESS is what an agent asked for: a resource URI (`rousseau://sessions/ID`, `timeline://events/ID`),
    or a tool's name followed by its JSON arguments (`rousseau_read_session '{"id": "ID"}'`). It is asked
    for once through the gate, as a host would (the audit log keeps that call). Exit 0 when agents are
    given it, 1 when it is kept.
    """
    from gateway.why import explain

    try:
        code = explain(_gateway(), address, arguments, click.echo)
    except ValueError as error:
        raise click.UsageError(f"ARGUMENTS must be a JSON object, e.g. '{{\"id\": \"abc\"}}' ({error})") from None
    sys.exit(code)


@access.command("list")
def access_list() -> None:
    """Every project of the manifest, open or closed, with its routes and its line in the manifest."""
    from gateway.why import list_projects

    snapshot = _gateway().snapshot()
    if snapshot.error is not None:
        raise click.ClickException(f"nothing is given to agents now: {snapshot.error}")
    list_projects(snapshot.gate, snapshot.config.projects_path, click.echo)


@main.command()
@click.option("--host", "host", required=True, help="claude-code, claude-desktop, cursor, vscode, codex or gemini.")
@click.option("--write", is_flag=True, help="Merge the entry into the host's config file instead of printing it.")
@click.option("--name", default="gateway", show_default=True, help="The server's name in the host's config.")
@click.option(
    "--scope",
    type=click.Choice(["user", "workspace"]),
    default="user",
    show_default=True,
    help="VS Code only: the user's mcp.json (every window) or .vscode/mcp.json in the current folder.",
)
def setup(host: str, write: bool, name: str, scope: str) -> None:
    """Print (or with --write, merge into) a host's MCP config so that it starts `gateway serve`.

    With --write, only the gateway's entry is added or replaced: comments, other servers and the file's
    layout stay as they were (JSON with comments is read as such). A file that cannot be merged into safely
    is left untouched, and the entry to paste by hand is printed instead.
    """
    from gateway.setup import HOSTS, SetupError, config_file, entry_for, merge_into

    if host not in HOSTS:
        raise click.BadParameter(f"unknown host {host!r}; choose one of {', '.join(HOSTS)}", param_hint="--host")
    if scope == "workspace" and host != "vscode":
        raise click.BadParameter("only VS Code has a workspace config; leave --scope out", param_hint="--scope")
    try:
        if write:
            path = merge_into(host, name, scope)
            click.echo(f"Added {name!r} to {path}. Restart the host to see the gateway's tools.")
        else:
            if host == "vscode":
                other = "workspace" if scope == "user" else "user"
                click.echo(f"# VS Code, {scope} config: {config_file(host, scope)} (--scope {other} for the other)")
            click.echo(entry_for(host, name, scope))
    except SetupError as error:
        raise click.ClickException(str(error)) from None


@main.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
def demo(directory: Path | None) -> None:
    """Make a home of invented data in DIRECTORY (default: a new temporary folder) and tour it as a host would."""
    from gateway.demo import run_demo

    try:
        run_demo(directory)
    except ToolError as error:
        raise click.ClickException(str(error)) from None
