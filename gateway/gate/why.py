"""`gateway access why` and `gateway access list`: for the person, what keeps a thing from agents and where to change it.

Agents are told only that a thing is kept; these commands, run by the person, name the project, the manifest
file and the lines to change. `why` asks the plugins for the thing's traits (``traits_of``) and has the gate
explain them: each route that took it, each that could not apply and why. When no plugin knows the address
(or a tool and its arguments are given), the thing is asked for in-process through the same gate as a host's
call (and audited as the CLI's), and the refusal's owners are read from the answer, never from its text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import anyio

from gateway.api.items import Answer
from gateway.engine.config import Snapshot
from gateway.engine.core import Caller, Gateway, NotFound
from gateway.gate.access import Gate, place_of, route_line
from gateway.gate.census import Tally
from gateway.gate.traits import Traits

CALLER = Caller("gateway-access-why", "", "cli")
_URI = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def ask(gateway: Gateway, address: str, arguments: str | None) -> Answer:
    """The answer a host would get for ADDRESS: a resource URI, or a tool's name with its JSON arguments."""
    if arguments is None and _URI.match(address):
        answer, _mime = anyio.run(gateway.read_resource, address, CALLER)
        return answer
    parsed = json.loads(arguments or "{}")
    if not isinstance(parsed, dict):
        raise ValueError("the arguments must be a JSON object")
    return anyio.run(gateway.call_tool, address, parsed, CALLER)


def explain(gateway: Gateway, address: str, arguments: str | None, say: Callable[[str], None]) -> int:
    """Say what keeps ADDRESS from agents and which line to change; 0 when it is given, 1 when it is kept."""
    snapshot = gateway.snapshot()
    if snapshot.error is not None:
        say(f"Nothing is given to agents now: {snapshot.error}")
        return 1
    known = gateway.traits_of(address, snapshot) if arguments is None else []
    if known:
        kept = [explain_traits(snapshot, address, plugin, traits, say) for plugin, traits in known]
        return 1 if any(kept) else 0
    try:
        answer = ask(gateway, address, arguments)
    except NotFound as error:
        say(f"{error}: no enabled plugin serves it (`gateway plugins` lists them).")
        return 1
    if answer.refused_by is None:
        if answer.is_error:
            say(f"{address} is not kept by the gate; it was refused for another reason: {answer.text}")
            return 1
        say(f"{address} is open to agents: they are given it.")
        return 0
    return _say_kept(snapshot, address, answer.refused_by, say, gateway.source.path)


def explain_traits(snapshot: Snapshot, address: str, plugin: str, traits: Traits, say: Callable[[str], None]) -> bool:
    """Say, from a thing's traits, which routes took it and which could not, then whether agents are given it;
    True when it is kept."""
    gate = snapshot.gate
    manifest = snapshot.config.projects_path
    text = _text_of(manifest)
    owners = gate.owners(traits)
    reasons = gate.explain(traits)
    say(f"{address} ({plugin} plugin):")
    for reason in reasons:
        project = gate.project(reason.project)
        state = "open" if project is not None and project.ai else "closed"
        line = route_line(text, reason.project, reason.kind, reason.route) if reason.kind != "project" else 0
        where = f"  [{manifest}:{line or place_of(text, reason.project).entry or '?'}]"
        if reason.kind == "project":
            what = f"it names the project {reason.project} itself (a tie, a REFID, a category or a client key)"
        else:
            what = f"{reason.kind} route {reason.route!r}"
        if reason.took:
            say(f"  taken by {reason.project} ({state}): {what}{where}")
        else:
            say(f"  not taken by {reason.project} ({state}): {what}: {reason.why_not}{where}")
    if not reasons:
        say("  no route of any project takes it")
    if traits.held:
        say(f"  kept from agents by the {plugin} plugin itself, whatever the routes: {traits.held}")
        if gate.allows(owners):
            return True
    if gate.allows(owners):
        if owners:
            say(f"  open to agents: they are given it ({', '.join(sorted(owners))} {'is' if len(owners) == 1 else 'are'} open).")
        else:
            say(f"  open to agents: it is in no project, and things outside projects are open ({_outside_line(snapshot)}).")
        return False
    _say_kept(snapshot, address, owners, say, None, heading=False)
    return True


def _say_kept(snapshot: Snapshot, address: str, owners: Iterable[str], say: Callable[[str], None],
              config_path: Path | None,
              heading: bool = True) -> int:
    """Which closed projects keep the thing (and the line to change), or the outside_projects line."""
    gate = snapshot.gate
    closed = gate.closed_by(owners)
    if closed:
        manifest = snapshot.config.projects_path
        text = _text_of(manifest)
        every = " (it is in each of them: all must be open for agents to see it)" if len(closed) > 1 else ""
        lead = f"{address} is kept" if heading else "  kept"
        say(f"{lead} from agents by {'these projects' if len(closed) > 1 else 'the project'}{every}:")
        for project in closed:
            place = place_of(text, project.id)
            say(f"  {project.id} ({project.name or 'no name'}): [[project]] at {manifest}:{place.entry or '?'}")
            if place.ai:
                say(f"    ai = false at line {place.ai}: set it to ai = true to open the project to agents")
            else:
                say("    it has no ai line (closed by default): add ai = true to its entry to open it to agents")
        return 1
    where = _outside_line(snapshot, config_path)
    lead = address if heading else "  it"
    say(f"{lead} is in no open project, and things outside projects are closed to agents ({where}).")
    say("  Set outside_projects = true there to open them all, or add a project (ai = true) with a route that takes it.")
    return 1


def _outside_line(snapshot: Snapshot, config_path: Path | None = None) -> str:
    config = snapshot.config.path or config_path
    if config is None:
        return "no config: the default"
    line = _line_of(_text_of(config), r"^\s*outside_projects\s*=")
    return f"{config}:{line}" if line else f"the [access] table of {config}"


def list_projects(gate: Gate, manifest: Path | None, say: Callable[[str], None], tally: Tally | None = None) -> None:
    """Every project, open or closed, with its routes, its line in the manifest and, with a `tally`, how many
    things each route takes in each source now."""
    text = _text_of(manifest)
    if not gate.projects:
        say(f"No projects ({manifest} {'lists none' if manifest and manifest.exists() else 'does not exist'}).")
    for project in gate.projects:
        place = place_of(text, project.id)
        state = "open to agents" if project.ai else "closed"
        say(f"{project.id} ({project.name or 'no name'}): {state}  [{manifest}:{place.entry or '?'}]")
        for kind, routes in project.routes.items():
            if tally is None:
                say(f"  {kind}: {', '.join(routes)}")
                continue
            for route in routes:
                say(f"  {kind} {route!r}{_reading(kind, route)}: {_counts(tally, (project.id, kind, route))}")
    say(f"Things outside projects: {'open to agents' if gate.outside_projects else 'closed'}.")
    if tally is not None:
        sources = len(tally.things)
        say(f"Counted now over {tally.total:,} things in {sources} source{'s' if sources != 1 else ''}"
            + (" (no enabled plugin reports what it holds)." if not sources else "."))
        for failure in tally.failures:
            say(f"  not counted: {failure}")


def _reading(kind: str, route: str) -> str:
    """How a route is read, where its spelling leaves a choice: a bare folder name is that folder everywhere."""
    if kind != "folders":
        return ""
    head, _, rest = route.strip().strip("/").partition("/")
    if rest:
        return (f" (folder {rest} of account {head}, and any folder {route.strip().strip('/')} in any account, with "
                "the folders inside)")
    return (f" (the folder {head} in every account, INBOX/{head} too, with the folders inside; write account/{head} "
            "for one account's)")


def _counts(tally: Tally, key: tuple[str, str, str]) -> str:
    taken = tally.taken.get(key)
    if not taken:
        return "takes nothing now"
    return ", ".join(f"{count:,} in {source}" for source, count in sorted(taken.items()))


def _text_of(path: Path | None) -> str:
    try:
        return path.read_text(encoding="utf-8") if path else ""
    except (OSError, UnicodeDecodeError):
        return ""


def _line_of(text: str, pattern: str) -> int:
    found = re.compile(pattern)
    return next((number for number, line in enumerate(text.splitlines(), start=1) if found.search(line)), 0)
