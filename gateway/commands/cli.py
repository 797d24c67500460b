"""The `gateway` command: serve hosts, show what is installed, call a tool, read the audit log, set up a host."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import attrs
import click

from gateway.api.items import ToolError
from gateway.api.kit import plural
from gateway.engine import startup
from gateway.engine.core import Caller, Gateway, NotFound, make_gateway_from_environment
from gateway.engine.log import said_elsewhere
from gateway.engine.tokens import token as token_commands

CLI = Caller("gateway-cli", "", "cli")
# Logged by the core when a plugin is off; the commands that show plugins say it themselves, once.
CATALOGUE_PROBLEM = "catalogue problem"


@attrs.define
class Session:
    """What one run of `gateway` shares between its commands: the config chosen, the gateway built on first use."""

    config_file: Path | None = None
    _gateway: Gateway | None = None
    # Every enabled plugin's commands by name, once all were asked (`PluginCommands.plugin_commands`).
    _plugin_commands: dict[str, click.Command] | None = None
    # What each plugin asked so far gave (its register_commands is called once a run, whichever way asked it).
    _given: dict[str, list[click.Command]] = attrs.field(factory=dict)
    # Per command name asked for: the command of the enabled plugin of that name, or None (`own_command`).
    _own: dict[str, click.Command | None] = attrs.field(factory=dict)

    def gateway(self) -> Gateway:
        if self._gateway is None:
            self._gateway = make_gateway_from_environment(config_file=self.config_file)
        return self._gateway


def session_of(ctx: click.Context) -> Session:
    """The run's Session, made from the top command's `--config` the first time it is asked for.

    Click resolves a sub-command before the group's own callback runs, so the session cannot wait for it: the
    options are parsed by then, and the session is made from them here.
    """
    root = ctx.find_root()
    if not isinstance(root.obj, Session):
        root.obj = Session(root.params.get("config_file"))
    return root.obj


def _gateway() -> Gateway:
    return session_of(click.get_current_context()).gateway()


class PluginCommands(click.Group):
    """The built-in commands, then those the enabled plugins add (``gateway sessions import``...).

    Which command a name gives: a built-in command's name is always the built-in's. Otherwise, when an enabled
    plugin has that very name and its `register_commands` gives a command of that name, the command is that
    plugin's own (`gateway spam ...` is the spam plugin's, whatever the plugins before it give). Any other name is
    the command of the first enabled plugin, in the config's order, that gives one of that name.

    So `gateway NAME ...`, where NAME is an enabled plugin's, loads and asks that plugin alone (its settings and its
    commands, never the catalogue of tools: a plugin's command is given its settings and folders, not the other
    plugins' tools); the others are neither imported nor asked, so one that is broken, slow to import or exits
    while importing changes nothing for it. Every other name, and `gateway --help`, asks every enabled plugin, in
    the config's order, by the same rule. A plugin's `register_commands` is called at most once a run.
    """

    def own_command(self, ctx: click.Context, name: str) -> click.Command | None:
        """The command `name` of the enabled plugin named `name`, loading that plugin alone; None when there is no
        such plugin or it gives no command of that name (the config unusable, the plugin off or broken)."""
        session = session_of(ctx)
        if name in self.commands:
            return None  # a built-in command's name is the built-in's
        if name in session._own:
            return session._own[name]
        found = None
        try:
            gateway = session.gateway()
            snapshot = gateway.snapshot()
            if snapshot.error is None and name in gateway.enabled(snapshot.config):
                found = next((c for c in self._given_by(ctx, [name])[name] if c.name == name), None)
        except Exception:  # noqa: BLE001 - the long way (plugin_commands) meets it again and says it
            found = None
        session._own[name] = found
        return found

    def _given_by(self, ctx: click.Context, names: list[str]) -> dict[str, list[click.Command]]:
        """What each named enabled plugin's `register_commands` gives, each plugin loaded and asked once a run."""
        session = session_of(ctx)
        gateway = session.gateway()
        snapshot = gateway.snapshot()
        asked = [name for name in names if name not in session._given]
        for name in asked:
            gateway.registry.get(name, snapshot.config.table(name))
        for name in asked:
            session._given[name] = []
        for plugin, commands in gateway.registry.call_each(
            "register_commands", asked, lambda n: snapshot.config.table(n)
        ):
            session._given[plugin].extend(command for command in commands or [] if command.name)
        return {name: session._given[name] for name in names}

    def plugin_commands(self, ctx: click.Context) -> dict[str, click.Command]:
        """Every enabled plugin's commands by name, by the rule of the class's docstring (all plugins loaded)."""
        session = session_of(ctx)
        if session._plugin_commands is None:
            first: dict[str, click.Command] = {}
            own: dict[str, click.Command] = {}
            try:
                gateway = session.gateway()
                snapshot = gateway.snapshot()
                names = gateway.enabled(snapshot.config) if snapshot.error is None else []
                for plugin, commands in self._given_by(ctx, names).items():
                    for command in commands:
                        if command.name in self.commands:
                            continue
                        if command.name == plugin:
                            own.setdefault(plugin, command)
                        first.setdefault(command.name, command)
            except Exception as error:  # a broken plugin must not take the whole CLI down
                click.echo(f"warning: plugin commands unavailable: {error}", err=True)
            session._plugin_commands = {**first, **own}
        return session._plugin_commands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return super().list_commands(ctx) + sorted(self.plugin_commands(ctx))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return (super().get_command(ctx, name) or self.own_command(ctx, name)
                or self.plugin_commands(ctx).get(name))

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name = click.utils.make_str(args[0]) if args else None
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            gateway = session_of(ctx).gateway()
            snapshot = gateway.snapshot()
            if snapshot.error is not None:
                # The plugins that would add it cannot be known while the config is unusable: say that, not a typo.
                ctx.fail(f"No such command {name!r} while the config cannot be used: {snapshot.error}")
            if name in gateway.registry.candidates and name not in gateway.enabled(snapshot.config):
                where = snapshot.config.path or gateway.source.path
                ctx.fail(f"No such command {name!r}: the plugin {name} is off; add it to [gateway] plugins in {where}")
            if name in gateway.registry.candidates and not (plugin := gateway.registry.get(name)).ok:
                ctx.fail(f"No such command {name!r}: the plugin {name} {plugin.error}")
        return super().resolve_command(ctx, args)


def _set_log_level(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    # Eager: set before any plugin is loaded (plugin commands are found before the group's callback runs).
    if value:
        from gateway.engine.log import configure

        configure(value)
    return value


@click.group(cls=PluginCommands)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar="GATEWAY_CONFIG",
    is_eager=True,  # known before `--help` lists the commands of this config's plugins
    help="The config file to use (default: config.toml in the gateway's config folder). A file named here "
    "or in GATEWAY_CONFIG must exist: while it does not, nothing is given to agents.",
)
@click.option(
    "--log-level",
    default=None,
    is_eager=True,
    expose_value=False,
    callback=_set_log_level,
    help="How much to log on stderr: debug, info, warning (default), error.",
)
@click.pass_context
def main(ctx: click.Context, config_file: Path | None) -> None:
    """One MCP server for what you keep on this computer, behind one consent gate, privacy masks and an audit log.

    Point your AI host at `gateway serve` (`gateway setup --host NAME` does it), or try `gateway demo`.
    Give each host only what it needs with a [profiles.NAME] table (over HTTP, a token per host: `gateway token
    add`), and check that the gate holds on your own setup with `gateway selftest`.
    """
    # Whatever this process creates (stores, their journals, exports) is the person's alone, whichever
    # plugin creates it.
    os.umask(0o077)
    session_of(ctx)
    if ctx.invoked_subcommand != "serve":  # serve lets it run once its plugins are loaded (the Lifecycle's start)
        startup.release()


def _config_problem(gateway: Gateway) -> None:
    """Stop with the config's problem as one sentence (exit 1) when the config cannot be used."""
    snapshot = gateway.snapshot()
    if snapshot.error is not None:
        raise click.ClickException(f"the config cannot be used: {snapshot.error}")


def _say_problems(problems: list[str]) -> None:
    """Plugins that are off because of a problem: one line each on stderr, then exit 1."""
    for problem in problems:
        click.echo(f"problem: {problem}", err=True)
    if problems:
        sys.exit(1)


class ServeCommand(click.Command):
    """`serve`, whose help names this person's own token file (the path depends on their folders)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from gateway.api.context import Folders
        from gateway.wire.http import TOKEN_FILE

        formatter.write_paragraph()
        formatter.write_text(
            "Over HTTP, every request must carry the header `Authorization: Bearer TOKEN`, where TOKEN is the line "
            "kept in this file (made on first use, readable by you alone; delete it to make a new token):"
        )
        # On a line of its own, never wrapped: a path to copy.
        formatter.write(f"{'':>{formatter.current_indent + 2}}{Folders.from_environment().state / TOKEN_FILE}\n")
        formatter.write_paragraph()
        formatter.write_text(
            "That token gives what --profile names (or everything, without it). To give a host one profile only, "
            "make it a token of its own: `gateway token add NAME --profile PROFILE` (`gateway token --help`)."
        )


@main.command(cls=ServeCommand)
@click.option("--http", "http", metavar="HOST:PORT", help="Serve Streamable HTTP on this address (loopback only).")
@click.option("--profile", default="", envvar="GATEWAY_PROFILE", metavar="NAME",
              help="Give this host only what [profiles.NAME] of the config allows (plugins, tools, projects).")
def serve(http: str | None, profile: str) -> None:
    """Serve MCP on stdin/stdout (what a host runs), or over HTTP with --http 127.0.0.1:PORT."""
    gateway = _gateway()
    gateway.profile = profile.strip()
    if http:
        from gateway.wire.http import AddressInUse, serve_http

        try:
            serve_http(gateway, http)
        except AddressInUse as error:
            raise click.ClickException(str(error)) from None
        return
    from gateway.wire.server import serve_stdio

    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(serve_stdio, gateway)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Everything each plugin registered (hooks, tools, resources, "
              "prompts, settings with their types and defaults), origin and error, as JSON.")
def plugins(as_json: bool) -> None:
    """Every plugin found: on or off, version, where it comes from, its tools, or why it failed to load.

    Exits 1 when the config cannot be used or a plugin that should be on is off because of a problem.
    """
    from gateway.commands.show import plugin_lines, plugin_views

    with said_elsewhere(CATALOGUE_PROBLEM):
        views, problems = plugin_views(_gateway())
    if as_json:
        click.echo(json.dumps({"plugins": views, "problems": problems}, indent=2, ensure_ascii=False))
    else:
        for view in views:
            for line in plugin_lines(view):
                click.echo(line)
    # Each plugin's own error is on its line already; the rest (the config, a refused tool name) is said here.
    shown = {f"plugin {v['name']}: {v['error']}" for v in views} | {v["error"] for v in views} if not as_json else set()
    _say_problems([problem for problem in problems if problem not in shown])
    if problems:
        sys.exit(1)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the tools/list result as JSON, as a host receives it.")
def tools(as_json: bool) -> None:
    """The merged tools/list, exactly as a host sees it. Exits 1 when a plugin is off because of a problem."""
    gateway = _gateway()
    _config_problem(gateway)
    with said_elsewhere(CATALOGUE_PROBLEM):
        listing = anyio.run(_host_view, gateway)
    if as_json:
        click.echo(json.dumps(listing, indent=2, ensure_ascii=False))
    else:
        for tool in listing["tools"]:
            hint = " (read-only)" if tool.get("annotations", {}).get("readOnlyHint") else ""
            first = (tool.get("description") or "").strip().splitlines()[:1]
            click.echo(f"{tool['name']}{hint}: {first[0] if first else ''}")
        if not listing["tools"]:
            click.echo("(no tools: no plugin is serving; see `gateway plugins`)", err=True)
    _say_problems(gateway.catalogue().problems)


async def _host_view(gateway: Gateway) -> dict[str, Any]:
    from mcp import Client

    from gateway.wire.server import build_server

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


def _json_object(arguments: str, example: str) -> dict[str, Any]:
    try:
        parsed = json.loads(arguments)
    except ValueError as error:
        raise click.UsageError(f"ARGUMENTS must be a JSON object, e.g. '{example}' ({error})") from None
    if not isinstance(parsed, dict):
        raise click.UsageError(f"ARGUMENTS must be a JSON object, e.g. '{example}'")
    return parsed


@main.command()
@click.argument("tool")
@click.argument("arguments", required=False, default="{}")
@click.option("--json", "as_json", is_flag=True, help="Print the structured answer as JSON.")
def call(tool: str, arguments: str, as_json: bool) -> None:
    """Call TOOL with ARGUMENTS (a JSON object) through the same gate, masks and audit as a host's call."""
    parsed = _json_object(arguments, '{"limit": 5}')
    gateway = _gateway()
    try:
        answer = anyio.run(gateway.call_tool, tool, parsed, CLI)
    except NotFound as error:
        names = ", ".join(listed.name for listed in gateway.catalogue().tools)
        raise click.ClickException(f"{error}. Tools: {names or '(none)'}") from None
    if as_json and answer.data is not None:
        click.echo(json.dumps(dict(answer.data), indent=2, ensure_ascii=False))
    else:
        click.echo(answer.text)
    if answer.is_error:
        sys.exit(1)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="resources/list and resources/templates/list as JSON.")
def resources(as_json: bool) -> None:
    """Every resource a host can list, then the templates of those it can read by address.

    Asked as a host asks (the gate, the masks, and a line in the audit log per page), all pages.
    """
    gateway = _gateway()
    _config_problem(gateway)
    found: list[dict[str, Any]] = []
    cursor: str | None = None
    try:
        with said_elsewhere(CATALOGUE_PROBLEM):
            while True:
                page, cursor = gateway.list_resources(cursor, CLI)
                found.extend(page)
                if not cursor:
                    break
            templates = gateway.list_templates(CLI)
    except ToolError as error:
        raise click.ClickException(str(error)) from None
    if as_json:
        listing = {
            "resources": found,
            "resource_templates": [
                {"uri_template": t.uri_template, "name": t.name, "title": t.title, "description": t.description,
                 "mime_type": t.mime_type, "plugin": t.plugin}
                for t in templates
            ],
        }
        click.echo(json.dumps(listing, indent=2, ensure_ascii=False, default=str))
    else:
        for item in found:
            title = item.get("title") or item.get("name") or ""
            click.echo(f"{item['uri']}  {title} ({item.get('mime_type') or '?'})")
        click.echo(f"({plural(len(found), 'resource')} listed)", err=True)
        for template in templates:
            click.echo(f"{template.uri_template}  {template.title or template.name} ({template.mime_type}; read "
                       f"with `gateway read URI`)")
    _say_problems(gateway.catalogue().problems)


@main.command()
@click.argument("uri")
def read(uri: str) -> None:
    """Read the resource URI as a host would (gate, masks, audit); exit 1 when it is refused or fails."""
    gateway = _gateway()
    try:
        answer, mime_type = anyio.run(gateway.read_resource, uri, CLI)
    except NotFound as error:
        templates = ", ".join(t.uri_template for t in gateway.catalogue().templates)
        fixed = ", ".join(r.uri for r in gateway.catalogue().resources)
        known = "; ".join(filter(None, [fixed, templates])) or "(none: no plugin serves resources)"
        raise click.ClickException(f"{error}. Served: {known}") from None
    if answer.is_error:
        raise click.ClickException(answer.text)
    text = answer.text
    if not text and answer.data is not None:
        text = json.dumps(dict(answer.data), indent=2, ensure_ascii=False)
    click.echo(text)
    click.echo(f"({mime_type})", err=True)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="prompts/list as JSON.")
def prompts(as_json: bool) -> None:
    """Every prompt a host can list, with its arguments (`gateway prompt NAME` shows one)."""
    gateway = _gateway()
    _config_problem(gateway)
    try:
        with said_elsewhere(CATALOGUE_PROBLEM):
            listed = gateway.list_prompts(CLI)
    except ToolError as error:
        raise click.ClickException(str(error)) from None
    rows = [
        {"name": name, "title": prompt.title, "description": prompt.description, "plugin": prompt.plugin,
         "arguments": [{"name": a.name, "description": a.description, "required": a.required}
                       for a in prompt.arguments]}
        for name, prompt in listed
    ]
    if as_json:
        click.echo(json.dumps({"prompts": rows}, indent=2, ensure_ascii=False))
    else:
        for row in rows:
            arguments = " ".join(a["name"] if a["required"] else f"[{a['name']}]" for a in row["arguments"])
            first = (row["description"] or "").strip().splitlines()[:1]
            click.echo(f"{row['name']} {arguments}".rstrip() + (f": {first[0]}" if first else ""))
        if not rows:
            click.echo("(no prompts)", err=True)
    _say_problems(gateway.catalogue().problems)


@main.command()
@click.argument("name")
@click.argument("arguments", required=False, default="{}")
def prompt(name: str, arguments: str) -> None:
    """The prompt NAME with ARGUMENTS (a JSON object), as a host would get it (masks, audit)."""
    parsed = _json_object(arguments, '{"hours": "4"}')
    gateway = _gateway()
    try:
        answer = anyio.run(gateway.get_prompt, name, parsed, CLI)
    except NotFound as error:
        names = ", ".join(gateway.catalogue().prompts)
        raise click.ClickException(f"{error}. Prompts: {names or '(none)'}") from None
    except ToolError as error:
        raise click.ClickException(str(error)) from None
    if answer.is_error:
        raise click.ClickException(answer.text)
    click.echo(answer.text)


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


@main.group(invoke_without_command=True)
@click.option("--since", help="Only calls after this: 30m, 2h, 3d, 1w, or an ISO date/time.")
@click.option("--tool", help="Only calls of this tool (or resource URI, or prompt).")
@click.option("--client", help="Only calls from hosts whose client name holds these letters (any case): cli, claude-code, cursor.")
@click.option("--project", metavar="ID", help="Only what agents were given of this project (each address given is "
                                              "placed as the gate places it now).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line, as stored.")
@click.pass_context
def audit(ctx: click.Context, since: str | None, tool: str | None, client: str | None, project: str | None,
          as_json: bool) -> None:
    """Read the audit log back: what was given to which host, when. `gateway audit verify` checks its chain."""
    if ctx.invoked_subcommand is not None:
        return
    gateway = _gateway()
    moment = parse_since(since) if since else None
    ours = _of_project(gateway, project) if project else None
    count = 0
    for entry in gateway.audit.read(since=moment, tool=tool, client=client):
        if ours is not None:
            mine = [address for address in entry.get("given") or [] if ours(address)]
            if not mine:
                continue
            entry = {**entry, "given": mine}
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
        filtered = since is not None or tool is not None or client is not None or project is not None
        click.echo("(no calls match)" if filtered else "(no calls logged)", err=True)


def _of_project(gateway: Gateway, project: str) -> Callable[[str], bool]:
    """Whether an address an agent was given belongs to `project`: its traits (the plugins' traits_of), placed
    by the gate as it is now; remembered per address for the run."""
    snapshot = gateway.snapshot()
    if snapshot.error is not None:
        raise click.ClickException(f"the projects cannot be read now: {snapshot.error}")
    if snapshot.gate.project(project) is None:
        ids = ", ".join(p.id for p in snapshot.gate.projects) or "none"
        raise click.BadParameter(f"no project {project!r} in the manifest (its projects: {ids})",
                                 param_hint="--project")
    known: dict[str, bool] = {}

    def ours(address: str) -> bool:
        if address not in known:
            known[address] = any(project in snapshot.gate.owners(traits)
                                 for _plugin, traits in gateway.traits_of(address, snapshot))
        return known[address]

    return ours


@audit.command("verify")
def audit_verify() -> None:
    """Check that no line of the audit log was edited, removed, reordered or cut since it was written.

    Each line carries the hash of the line before it; this walks the chain and names the first line where it
    breaks. The head it verified is kept beside the log, so a log rewritten whole (or cut back) since the last
    verification is caught too. Exits 1 when the chain does not hold.
    """
    gateway = _gateway()
    problems = gateway.audit.verify()
    for problem in problems:
        click.echo(f"BROKEN   {problem}")
    if problems:
        raise SystemExit(1)
    lines = sum(1 for _ in gateway.audit.read())
    click.echo(f"The audit chain holds: {plural(lines, 'line')}, none edited, removed, reordered or cut.")


main.add_command(token_commands)


@main.command()
@click.option("--keep", is_flag=True, help="Keep the scratch folder afterwards (it holds invented items only), to "
                                           "look at what was planted.")
def selftest(keep: bool) -> None:
    """Check that the gate holds on your own setup, without touching your data.

    Copies your config and projects manifest into a scratch folder (your project ids and routes, none of your
    mail, notes or other sources), writes invented items there that each route takes, serves that copy with a
    real `gateway serve` and attacks it as the test suite does: a closed project's word asked for through every
    tool, resource and prompt; a card number searched by its digits; the manifest emptied mid-call; an
    oversized query. Prints one line per probe (held or FAILED) and exits 1 when one failed. The scratch folder
    is removed at the end.
    """
    from gateway.api.context import Folders
    from gateway.commands import selftest as probes
    from gateway.engine.config import ConfigSource, config_choice
    from gateway.engine.lock import LOCK_FILE

    given = session_of(click.get_current_context()).config_file
    path, explicit = (given, True) if given else config_choice(Folders.from_environment().config)
    snapshot = ConfigSource(path, explicit=explicit).current()
    if snapshot.error is not None:
        raise click.ClickException(f"nothing can be tested while the config cannot be used: {snapshot.error}")
    config_text = path.read_text(encoding="utf-8") if path.is_file() else None
    terminal = sys.stderr.isatty()
    code = probes.run(snapshot, config_text, path.parent / LOCK_FILE, click.echo,
                      lambda line: click.echo(f"... {line}", err=True) if terminal else None, keep=keep)
    sys.exit(code)


@main.command()
@click.option("--accept", is_flag=True, help="Take in the definitions that changed (of PLUGIN only, when named), "
                                            "after showing the difference.")
@click.argument("plugin", required=False)
def lock(accept: bool, plugin: str | None) -> None:
    """Pin the tools hosts are given: write tools.lock, or show what changed since and take it in with --accept.

    Once tools.lock exists, a tool, resource or prompt whose definition differs from it (a plugin upgraded,
    edited or newly installed) is withheld from hosts until you accept it here.
    """
    from gateway.engine import lock as pins

    gateway = _gateway()
    snapshot = gateway.snapshot()
    if snapshot.error is not None:
        raise click.ClickException(f"nothing can be pinned while the config cannot be used: {snapshot.error}")
    path = (snapshot.config.path or gateway.source.path).parent / pins.LOCK_FILE
    current = pins.definitions(gateway._merge(snapshot.config))  # as the plugins define them now, unpinned
    versions = {name: gateway.registry.get(name).version or "" for name in current}
    if plugin is not None and plugin not in current:
        raise click.BadParameter(f"no enabled plugin {plugin!r}; the plugins are: {', '.join(current)}",
                                 param_hint="PLUGIN")
    try:
        pinned = pins.Lock.read(path)
    except pins.LockError as error:
        if not accept:
            raise click.ClickException(str(error)) from None
        pinned = None  # unreadable: written anew from what the plugins define now
    if pinned is None:
        pins.write(path, current, versions)
        count = sum(len(kinds.get(k, {})) for kinds in current.values() for k in pins.KINDS)
        click.echo(f"Wrote {path}: {plural(count, 'definition')} of {', '.join(current)} pinned. A change to any "
                   "of them is withheld from hosts until you run `gateway lock --accept`.")
        return
    differs = pins.changed(pinned, current)
    names = [plugin] if plugin else sorted(differs)
    for name in names:
        if name in differs:
            click.echo(pins.difference(pinned, current, name))
    if not any(name in differs for name in names):
        click.echo(f"Nothing differs from {path}.")
        return
    if not accept:
        click.echo(f"\nWithheld from hosts until you accept: `gateway lock --accept {names[0] if len(names) == 1 else ''}`"
                   .rstrip() + ("  (name a plugin to accept only its changes)" if len(names) > 1 else ""))
        return
    for name in names:
        pins.write(path, current, versions, keep=pins.Lock.read(path), only=name)
    click.echo(f"Accepted: {', '.join(n for n in names if n in differs)} pinned as they are now in {path}.")


@main.command()
@click.option("--every", default=5.0, show_default=True, type=click.FloatRange(min=0.1),
              help="Seconds between rounds besides the system's change notifications.")
@click.option("--once", is_flag=True, help="One round of every plugin's refresh, then exit.")
@click.option("--polling", is_flag=True, help="Never use the system's notifications, only the rounds.")
def watch(every: float, once: bool, polling: bool) -> None:
    """Keep every plugin's store fresh (sessions, timeline, ...) until interrupted: optional, calls refresh anyway.

    Uses the system's file notifications when watchfiles is installed, else polls every few seconds; writes a
    heartbeat that `gateway doctor` reads.
    """
    from gateway.commands import watch as watching

    gateway = _gateway()
    say = functools.partial(click.echo, err=True)
    if once:
        watching.refresh_all(gateway, say, every_one=True)
        return
    with contextlib.suppress(KeyboardInterrupt):
        watching.watch(gateway, say, every=every, polling=polling)


@main.command()
def doctor() -> None:
    """Check the config, the projects manifest, the plugins and the audit folder; exit 1 on a problem.

    A config or manifest that is named but missing, unreadable or empty is a problem (the gateway then gives
    nothing); everything open to agents (no closed project, things outside projects open) is a warning.
    """
    from gateway.commands.doctor import run_checks

    with said_elsewhere(CATALOGUE_PROBLEM):
        found = run_checks(_gateway(), click.echo)
    if found.problems:
        click.echo(f"{plural(found.problems, 'problem')} found.")
        sys.exit(1)
    if found.warnings:
        above = "the warning above" if found.warnings == 1 else f"the {found.warnings} warnings above"
        click.echo(f"No problem found, but read {above}.")
    else:
        click.echo("All good.")


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

    ADDRESS is any address a tool hands out (`mid:...`, `rousseau://sessions/ID`, `timeline://events/ID`...):
    the plugin that knows it gives its traits, and each route that took it, or could not apply and why, is
    named with its line. An address no plugin knows, or a tool's name followed by its JSON arguments
    (`rousseau_read_session '{"id": "ID"}'`), is asked for once through the gate, as a host would (the audit
    log keeps that call). Exit 0 when agents are given it, 1 when it is kept.
    """
    from gateway.gate.why import explain

    try:
        code = explain(_gateway(), address, arguments, click.echo)
    except ValueError as error:
        raise click.UsageError(f"ARGUMENTS must be a JSON object, e.g. '{{\"id\": \"abc\"}}' ({error})") from None
    sys.exit(code)


@access.command("list")
@click.option("--no-counts", is_flag=True, help="Routes only: do not ask the plugins what each route takes now.")
def access_list(no_counts: bool) -> None:
    """Every project of the manifest, open or closed, with its routes, its line in the manifest, and how many
    things each route takes in each source now (from every plugin's census: a few seconds on a large store)."""
    from gateway.gate.census import tally
    from gateway.gate.why import list_projects

    gateway = _gateway()
    snapshot = gateway.snapshot()
    if snapshot.error is not None:
        raise click.ClickException(f"nothing is given to agents now: {snapshot.error}")
    counted = None if no_counts else tally(gateway, snapshot)
    list_projects(snapshot.gate, snapshot.config.projects_path, click.echo, counted)


@main.command()
@click.option("--host", "host", help="claude-code, claude-desktop, cursor, vscode, codex or gemini.")
@click.option("--detect", is_flag=True,
              help="Find what you already run (mbsync, offlineimap, notmuch, mu, vdirsyncer, khal, todoman, khard) "
                   "and print the gateway config that reads the same files; with --write, merge it into yours.")
@click.option("--write", is_flag=True, help="Merge into the config file instead of printing (the host's, or with "
                                            "--detect the gateway's).")
@click.option("--name", default="gateway", show_default=True, help="The server's name in the host's config.")
@click.option("--profile", default="", metavar="NAME", help="Start the host's gateway with --profile NAME: it is "
              "given only what [profiles.NAME] of the config allows.")
@click.option(
    "--scope",
    type=click.Choice(["user", "workspace"]),
    default="user",
    show_default=True,
    help="VS Code only: the user's mcp.json (every window) or .vscode/mcp.json in the current folder.",
)
def setup(host: str | None, detect: bool, write: bool, name: str, profile: str, scope: str) -> None:
    """Print (or with --write, merge into) a host's MCP config so that it starts `gateway serve`; or, with
    --detect, the gateway's own config for the mail, calendars, tasks and contacts you already keep.

    With --write, only the gateway's entry is added or replaced: comments, other servers and the file's
    layout stay as they were (JSON with comments is read as such). A file that cannot be merged into safely
    is left untouched, and the entry to paste by hand is printed instead. --detect --write never changes a
    key you already set: it adds what is missing and says what it left as it was.
    """
    from gateway.commands.setup import HOSTS, SetupError, config_file, entry_for, merge_into

    if detect:
        _detect(write)
        if host is None:
            return
        write = False  # --write went to the gateway's config; the host's entry is printed
    if host is None:
        raise click.UsageError("name a host with --host (or find your own data with --detect)")
    if host not in HOSTS:
        raise click.BadParameter(f"unknown host {host!r}; choose one of {', '.join(HOSTS)}", param_hint="--host")
    if scope == "workspace" and host != "vscode":
        raise click.BadParameter("only VS Code has a workspace config; leave --scope out", param_hint="--scope")
    session = session_of(click.get_current_context())
    try:
        if write:
            path = merge_into(host, name, scope, session.config_file, profile)
            click.echo(f"Added {name!r} to {path}. Restart the host to see the gateway's tools.")
        else:
            if host == "vscode":
                other = "workspace" if scope == "user" else "user"
                click.echo(f"# VS Code, {scope} config: {config_file(host, scope)} (--scope {other} for the other)")
            click.echo(entry_for(host, name, scope, session.config_file, profile))
    except SetupError as error:
        raise click.ClickException(str(error)) from None
    _first_config(session.gateway(), write)


def _detect(write: bool) -> None:
    """`setup --detect`: each installed plugin's findings, merged into the config (printed, or written)."""
    import tomllib

    from gateway.api.items import Detected
    from gateway.commands.setup import _atomic_write, merged_detection
    from gateway.engine.registry import BUILT_IN_ORDER

    gateway = session_of(click.get_current_context()).gateway()
    registry = gateway.registry
    names = registry.names()
    for plugin in names:
        registry.get(plugin, {})
    detected: dict[str, dict] = {}
    for plugin, result in registry.call_each("detect", names, lambda _n: {}):
        if isinstance(result, Detected):
            for line in result.found:
                click.echo(f"  {line}", err=True)
            if result.settings:
                detected.setdefault(plugin, {}).update(result.settings)
    built_in = [n for n in names if registry.candidates[n].origin == "built-in"]
    built_in.sort(key=lambda n: BUILT_IN_ORDER.index(n) if n in BUILT_IN_ORDER else len(BUILT_IN_ORDER))
    path = gateway.source.path
    try:
        raw = path.read_text(encoding="utf-8") if path.exists() else ""
        text, kept = merged_detection(raw, detected, built_in)
        tomllib.loads(text)
    except Exception as error:  # tomlkit's and tomllib's errors alike: the person's file stays as it is
        raise click.ClickException(f"{path} cannot be merged into ({error}); fix it first, nothing was changed") from None
    for line in kept:
        click.echo(f"  {line}", err=True)
    if not detected:
        click.echo("Nothing to add: no tool's config was found (see above).", err=True)
        return
    if write:
        _atomic_write(path, text)
        if not raw:
            os.chmod(path, 0o600)
        click.echo(f"Wrote {path}. `gateway doctor` checks it; `gateway tools` shows what a host gets.")
    else:
        click.echo(f"# {path} (run again with --write to merge this in; keys you set are never changed)")
        click.echo(text, nl=False)


def _first_config(gateway: Gateway, write: bool) -> None:
    """With no config, every installed plugin is on (the example plugin's toy tools too): --write makes one
    naming the built-in plugins; without it, say so. An existing config is never touched."""
    from gateway.commands.setup import starter_config, write_starter_config
    from gateway.engine.registry import BUILT_IN_ORDER

    path = gateway.source.path
    if path.exists():
        return
    names = gateway.registry.names()
    built_in = [n for n in names if gateway.registry.candidates[n].origin == "built-in"]
    built_in.sort(key=lambda n: BUILT_IN_ORDER.index(n) if n in BUILT_IN_ORDER else len(BUILT_IN_ORDER))
    others = [f"{n} ({gateway.registry.candidates[n].origin})" for n in names if n not in built_in]
    if write:
        if write_starter_config(path, starter_config(built_in, others)):
            click.echo(f"Wrote {path}: the plugins on are {', '.join(built_in) or 'none'}" +
                       (f"; off until you name them there: {', '.join(others)}." if others else "."))
        return
    if others:
        click.echo(
            f"Note: there is no config at {path}, so every installed plugin is on, {', '.join(others)} too. "
            "--write also writes a config naming the built-in plugins only; to turn a plugin off later, remove "
            "its name from [gateway] plugins there (or hide some of its tools with disabled_tools).",
            err=True,
        )


@main.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
def demo(directory: Path | None) -> None:
    """Make a home of invented data in DIRECTORY (default: a new temporary folder) and tour it as a host would."""
    from gateway.commands.demo import run_demo

    try:
        run_demo(directory)
    except ToolError as error:
        raise click.ClickException(str(error)) from None


@main.command()
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="FILE",
              help="where to write it (default: mcp-gateway-VERSION.mcpb in the current folder)")
def bundle(out: Path | None) -> None:
    """Build the MCP Bundle (.mcpb) that Claude Desktop installs in one click; its settings become a config."""
    from gateway.commands.bundle import __version__ as version
    from gateway.commands.bundle import build

    written = build(out or Path(f"mcp-gateway-{version}.mcpb"))
    click.echo(f"Wrote {written}: open it with Claude Desktop (or drag it onto its Extensions settings) to install "
               "the gateway; the Maildir root, vdir and notes folders it asks for become its bundle.toml.")
