"""`gateway doctor`: every check a person needs before pointing a host at the gateway."""

from __future__ import annotations

import stat
from collections.abc import Callable

from attrs import frozen

from gateway.api.kit import plural
from gateway.engine.config import Snapshot
from gateway.engine.core import Caller, Gateway
from gateway.engine.faults import plugin_failed, said


@frozen
class Findings:
    """How many problems (the gate or a store unusable: exit non-zero) and warnings (worth reading) were said."""

    problems: int = 0
    warnings: int = 0


def run_checks(gateway: Gateway, say: Callable[[str], None]) -> Findings:
    """Say what is fine, what deserves a look and what is wrong; return how many of each."""
    problems = warnings = 0

    def problem(text: str) -> None:
        nonlocal problems
        problems += 1
        say(f"PROBLEM  {text}")

    def warning(text: str) -> None:
        nonlocal warnings
        warnings += 1
        say(f"WARNING  {text}")

    snapshot = gateway.snapshot()
    path = gateway.source.path
    if snapshot.error:
        problem(snapshot.error)
    elif path.exists():
        say(f"ok       config {path}")
    else:
        say(f"ok       no config at {path}: every installed plugin is on, with its defaults")
    manifest = snapshot.config.projects_path
    if snapshot.error is None and manifest is not None:
        projects = snapshot.gate.projects
        opened = sum(p.ai for p in projects)
        if manifest.exists():
            say(f"ok       projects {manifest}: {plural(len(projects), 'project')}, {opened} open to agents, "
                f"{len(projects) - opened} closed")
        else:
            say(f"ok       no projects manifest at {manifest}: no projects yet (a fresh install)")
        say(f"ok       things outside projects are {'open' if snapshot.gate.outside_projects else 'closed'}")
        if opened == len(projects) and snapshot.gate.outside_projects:
            warning(
                "every project and everything outside projects is open to agents: whatever the plugins read "
                f"can be given. To keep something from them, list it as a [[project]] (closed unless ai = true) "
                f"in {manifest}, or set outside_projects = false in the [access] table of {path}"
            )
    if snapshot.error is None:
        # A config error is the catalogue's only "problem" then: said once, above.
        catalogue = gateway.catalogue(snapshot)
        for name in catalogue.plugin_order:  # the plugins serving; each one off is a problem below
            plugin = gateway.registry.get(name)
            tools = sum(1 for listed in catalogue.tools if listed.tool.plugin == name)
            say(f"ok       plugin {name} {plugin.version} ({plugin.origin}): {plural(tools, 'tool')}")
        for text in catalogue.problems:
            problem(text)
        for text in say_sources(gateway, say, warning):
            problem(text)
        for text in _ways_out():
            warning(text)
        if not ((snapshot.config.path or path).parent / "tools.lock").exists():
            say("-        no tools.lock: every tool is given as its plugin defines it now; `gateway lock` pins them, "
                "so that a changed description is withheld until you accept it")
        for text in route_warnings(gateway, snapshot):
            warning(text)
    audit = gateway.audit.folder
    # Modes first: writing a line (the check below) makes the folder the person's alone again.
    if audit.is_dir():
        mode = stat.S_IMODE(audit.stat().st_mode)
        if mode & 0o077:
            problem(f"the audit folder {audit} is open to others (mode {mode:o}); run: chmod 700 {audit}")
        for log_file in audit.glob("*.jsonl"):
            file_mode = stat.S_IMODE(log_file.lstat().st_mode)
            if file_mode & 0o077:
                problem(f"the audit file {log_file} is readable by others; run: chmod 600 {log_file}")
    unlogged = gateway.audit.problem()
    if unlogged is not None:
        problem(f"{unlogged}: agents are refused every call until it can be; check that the folder is yours, a "
                "folder, and on a disk with room")
    else:
        say(f"ok       audit log in {audit}")
    return Findings(problems, warnings)


def route_warnings(gateway: Gateway, snapshot: Snapshot) -> list[str]:
    """What the census shows of the manifest's routes: one that takes nothing in any source, a folder route
    naming no folder of any account, a place (account, task list, calendar, address book) that a closed
    project's `paths` route covers only in part. Said only when some plugin reports what it holds."""
    from gateway.gate.census import names_a_folder, tally

    if not snapshot.gate.projects:
        return []
    counted = tally(gateway, snapshot)
    found = [f"plugin {failure}: what its routes take is not counted" for failure in counted.failures]
    if not counted.total:
        return found
    manifest = snapshot.config.projects_path
    for project in snapshot.gate.projects:
        for kind, routes in project.routes.items():
            for route in routes:
                where = f"project {project.id}'s {kind} route {route!r} ({manifest})"
                if kind == "folders" and counted.folders and not names_a_folder(route, counted.folders):
                    examples = ", ".join(sorted({f"{a}/{f}" if a else f for a, f in counted.folders})[:3])
                    found.append(f"{where} names no folder of any account; folders are written as the tools print "
                                 f"them (account/folder, e.g. {examples}), or as a bare name for that folder in "
                                 "every account")
                elif not counted.taken.get((project.id, kind, route)):
                    found.append(f"{where} takes nothing in any source now ({counted.total:,} things looked at); "
                                 "check its spelling with `gateway access list`")
    for (project_id, kind, route), place, name, taken, every in counted.partly_covered():
        found.append(f"the closed project {project_id}'s {kind} route {route!r} takes {taken:,} of the {every:,} "
                     f"things of the {place} {name}; the others are not kept by it. To close the whole "
                     f"{place}, add {name!r} to its {_name_route(place)} route (or widen the path)")
    return found


def _name_route(place: str) -> str:
    return {"account": "accounts", "task list": "lists", "calendar": "calendars", "address book": "addressbooks"}[place]


def say_sources(gateway: Gateway, say: Callable[[str], None],
                warning: Callable[[str], None] | None = None) -> list[str]:
    """Where each plugin found its sources (or looked for them), which ones its store is behind on, and whether
    `gateway watch` is keeping them fresh; the next call reads what is stale. Files a plugin could read only in
    part are said through `warning` (counted by doctor). Returns the problems: each source the config names that
    does not exist (a typo, a disk not mounted), said with the key to fix."""
    missing: list[str] = []
    warning = warning or (lambda text: say(f"WARNING  {text}"))
    import time

    from gateway.commands.watch import read_heartbeat

    snapshot = gateway.snapshot()
    caller = Caller(client="gateway doctor", transport="cli")
    for name in gateway.catalogue(snapshot).plugin_order:
        for refresh in gateway.registry.get(name).refreshes:
            try:
                sources = refresh.sources(gateway.context(name, snapshot, caller))
            except BaseException as error:  # a plugin's sys.exit() too (gateway.engine.faults)
                if not plugin_failed(error):
                    raise
                say(f"WARNING  {name}: its sources cannot be listed ({said(error)})")
                continue
            for source in sources:
                if not source.found and source.setting:
                    missing.append(f"{name}: the {source.what}, {source.path}, does not exist: {source.setting} "
                                   "in the config names it (fix the path there, or mount the disk it is on)")
                elif not source.found:
                    say(f"-        {name}: no {source.what} at {source.path}")
                elif source.stale:
                    say(f"stale    {name}: {source.what} at {source.path}: {source.stale} (the next call reads it)")
                else:
                    say(f"ok       {name}: {source.what} at {source.path}")
                if source.found and source.unreadable:
                    warning(f"{name}: {source.what} at {source.path}: {source.unreadable}")
    from gateway.api.changes import availability, watch_limit

    why = availability()
    if why:
        say(f"-        file notifications unavailable ({why}): each call stats its sources to see what changed")
    else:
        limit = watch_limit()
        room = f"; up to {limit:,} watched folders a user" if limit else ""
        say(f"ok       file notifications (inotify): a call whose sources did not change reads nothing{room}")
    beat = read_heartbeat(gateway)
    if beat and isinstance(beat.get("at_ms"), int):
        ago = max(0, int(time.time() - beat["at_ms"] / 1000))
        say(f"ok       gateway watch ({beat.get('how', '?')}) last refreshed {ago}s ago")
    else:
        say("-        gateway watch is not running (optional: each call refreshes what it reads)")
    return missing


def _ways_out() -> list[str]:
    """A warning for each server a host runs beside the gateway that can carry data out (gateway.commands.hosts)."""
    from gateway.commands.hosts import WayOut, ways_out

    said = []
    for found in ways_out():
        if not isinstance(found, WayOut):
            continue  # a host's config we cannot read is the host's business, not a risk we can name
        said.append(
            f"{found.host} runs the gateway beside the server {found.server!r} ({found.config}), which "
            f"{found.how}: an agent in that host, misled by a message or a page, could read your things through "
            f"the gateway and send them out through {found.server}. Run one of the two in another host, or turn "
            "off the tools of it you do not need, or open fewer projects to agents")
    return said
