"""`gateway access why` and `gateway access list`: for the person, what keeps a thing from agents and where to change it.

Agents are told only that a thing is kept; these commands, run by the person, name the project, the manifest
file and the lines to change. The thing is asked for in-process through the same gate as a host's call
(and audited as the CLI's), and the refusal's owners are read from the answer, never from its text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import anyio

from gateway.access import Gate, place_of
from gateway.core import Caller, Gateway, NotFound
from gateway.items import Answer

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
    gate = snapshot.gate
    closed = gate.closed_by(answer.refused_by)
    if closed:
        manifest = snapshot.config.projects_path
        text = _text_of(manifest)
        every = " (it is in each of them: all must be open for agents to see it)" if len(closed) > 1 else ""
        say(f"{address} is kept from agents by {'these projects' if len(closed) > 1 else 'the project'}{every}:")
        for project in closed:
            place = place_of(text, project.id)
            say(f"  {project.id} ({project.name or 'no name'}): [[project]] at {manifest}:{place.entry or '?'}")
            if place.ai:
                say(f"    ai = false at line {place.ai}: set it to ai = true to open the project to agents")
            else:
                say("    it has no ai line (closed by default): add ai = true to its entry to open it to agents")
        return 1
    config = snapshot.config.path or gateway.source.path
    line = _line_of(_text_of(config), r"^\s*outside_projects\s*=")
    where = f"{config}:{line}" if line else f"the [access] table of {config}"
    say(f"{address} is in no open project, and things outside projects are closed to agents ({where}).")
    say("  Set outside_projects = true there to open them all, or add a project (ai = true) with a route that takes it.")
    return 1


def list_projects(gate: Gate, manifest: Path | None, say: Callable[[str], None]) -> None:
    """Every project, open or closed, with its routes and its line in the manifest."""
    text = _text_of(manifest)
    if not gate.projects:
        say(f"No projects ({manifest} {'lists none' if manifest and manifest.exists() else 'does not exist'}).")
    for project in gate.projects:
        place = place_of(text, project.id)
        state = "open to agents" if project.ai else "closed"
        say(f"{project.id} ({project.name or 'no name'}): {state}  [{manifest}:{place.entry or '?'}]")
        for kind, routes in project.routes.items():
            say(f"  {kind}: {', '.join(routes)}")
    say(f"Things outside projects: {'open to agents' if gate.outside_projects else 'closed'}.")


def _text_of(path: Path | None) -> str:
    try:
        return path.read_text(encoding="utf-8") if path else ""
    except (OSError, UnicodeDecodeError):
        return ""


def _line_of(text: str, pattern: str) -> int:
    found = re.compile(pattern)
    return next((number for number, line in enumerate(text.splitlines(), start=1) if found.search(line)), 0)
