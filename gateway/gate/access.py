"""The consent gate: which projects are open to agents, and what of a plugin's items may be given.

A plugin describes each item by its traits (`gateway.gate.traits.Traits`: its files, people, words, place) and
the gate decides which projects' routes take it (``gate.owners(traits)``), the same way for every plugin. Closed until opened; an item in two
projects needs both open; items in no project follow ``outside_projects``. A refusal names nothing: which
project keeps an item is for the person (``gateway access why ADDRESS``), never for the agent.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from attrs import field, frozen

from gateway.api.errors import Refused
from gateway.gate.traits import Person, Reason, Traits, explain, owners

T = TypeVar("T")

ROUTE_KINDS = ("paths", "senders", "subjects", "folders", "apps", "urls", "accounts", "lists", "calendars",
               "addressbooks")
_PROJECT_KEYS = {"id", "name", "ai", "client", *ROUTE_KINDS}


class ManifestError(ValueError):
    """The projects manifest cannot be read or says something we cannot take."""


@frozen(cache_hash=True)
class Project:
    """One `[[project]]` of the manifest; `ai` is False unless the person opened it to agents."""

    id: str
    name: str = ""
    ai: bool = False
    client: str = ""
    paths: tuple[str, ...] = field(default=(), converter=tuple)
    senders: tuple[str, ...] = field(default=(), converter=tuple)
    subjects: tuple[str, ...] = field(default=(), converter=tuple)
    folders: tuple[str, ...] = field(default=(), converter=tuple)
    apps: tuple[str, ...] = field(default=(), converter=tuple)
    urls: tuple[str, ...] = field(default=(), converter=tuple)
    accounts: tuple[str, ...] = field(default=(), converter=tuple)
    lists: tuple[str, ...] = field(default=(), converter=tuple)
    calendars: tuple[str, ...] = field(default=(), converter=tuple)
    addressbooks: tuple[str, ...] = field(default=(), converter=tuple)

    @property
    def label(self) -> str:
        return self.name or self.id

    @property
    def routes(self) -> dict[str, tuple[str, ...]]:
        return {kind: getattr(self, kind) for kind in ROUTE_KINDS if getattr(self, kind)}


# A gate is a key of every plugin's memo (`GateMemo`), hashed several times a call: with fifty projects hashing
# the manifest field by field costs a quarter of a millisecond each time, so each value keeps its hash.
@frozen(cache_hash=True)
class Manifest:
    projects: tuple[Project, ...] = ()

    @classmethod
    def from_file(cls, path: Path) -> Manifest:
        """Read a manifest file; one that is missing, unreadable or broken is a ManifestError saying where."""
        try:
            raw = path.read_bytes()
        except OSError as error:
            raise ManifestError(f"the projects manifest {path} cannot be read: {error.strerror}") from error
        return cls.from_bytes(raw, path)

    @classmethod
    def from_bytes(cls, raw: bytes, path: Path) -> Manifest:
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise ManifestError(f"the projects manifest {path} is not valid TOML: {error}") from error
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "the projects manifest") -> Manifest:
        unknown = set(data) - {"project"}
        if unknown:
            raise ManifestError(f"{source}: unknown {_keys(unknown)} {', '.join(sorted(unknown))}; only [[project]] tables")
        projects = []
        seen: set[str] = set()
        for index, entry in enumerate(data.get("project", [])):
            where = f"{source}, project #{index + 1}"
            if not isinstance(entry, Mapping) or not isinstance(entry.get("id"), str) or not entry["id"]:
                raise ManifestError(f"{where}: every [[project]] needs an id (a string)")
            bad = set(entry) - _PROJECT_KEYS
            if bad:
                raise ManifestError(
                    f"{where}: unknown {_keys(bad)} {', '.join(sorted(bad))}; known: {', '.join(sorted(_PROJECT_KEYS))}"
                )
            if entry["id"] in seen:
                raise ManifestError(f"{where}: the id {entry['id']!r} is used twice")
            seen.add(entry["id"])
            if not isinstance(entry.get("ai", False), bool):
                raise ManifestError(f"{where}: ai must be true or false")
            routes = {}
            for kind in ROUTE_KINDS:
                value = entry.get(kind, [])
                if isinstance(value, str):
                    value = [value]
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise ManifestError(f"{where}: {kind} must be a list of strings")
                routes[kind] = value
            projects.append(
                Project(
                    id=entry["id"],
                    name=str(entry.get("name", "")),
                    ai=entry.get("ai", False),
                    client=str(entry.get("client", "")),
                    **routes,
                )
            )
        return cls(tuple(projects))


@frozen
class Kept:
    """What a list may show, and how many it left out (never which)."""

    items: list[Any]
    left_out: int


@frozen(cache_hash=True)
class Gate:
    """The rule of who may see what, for one call (built from the manifest and `outside_projects`)."""

    manifest: Manifest = Manifest()
    outside_projects: bool = True
    # Which reading of the config and manifest made this gate: each reading makes a gate of its own, so what
    # plugins remember per gate starts afresh whenever links were resolved again (see gateway.gate.routes).
    reading: int = 0

    @property
    def projects(self) -> tuple[Project, ...]:
        return self.manifest.projects

    def project(self, project_id: str) -> Project | None:
        return next((p for p in self.projects if p.id == project_id), None)

    def owners(self, traits: Traits) -> frozenset[str]:
        """The projects whose routes take a thing with these traits: the one decision for every plugin."""
        return owners(self, traits)

    def explain(self, traits: Traits) -> list[Reason]:
        """For the person: each route that took the thing, and each that could not apply, with why."""
        return explain(self, traits)

    def owners_of(
        self,
        *,
        path: str | None = None,
        sender: str | None = None,
        subject: str | None = None,
        folder: str | None = None,
        app: str | None = None,
        url: str | None = None,
    ) -> frozenset[str]:
        """One value per trait, as plugins asked before `Traits`: a sender given here counts as proven (callers
        passed only authenticated senders); kept working for plugins written against it."""
        return owners(self, Traits(
            paths=path, people=(Person(sender, proven=True),) if sender else (), words=subject,
            folder=folder or "", apps=app, urls=url))

    def allows(self, owners: Iterable[str]) -> bool:
        """May an item owned by these projects be given? Every owner must be open; none: `outside_projects`."""
        # An owner missing from the manifest was taken out of it: its things are in no project.
        known = [project for project in map(self.project, owners) if project is not None]
        if not known:
            return self.outside_projects
        return all(project.ai for project in known)

    def keep(self, items: Iterable[T], owners: Callable[[T], Iterable[str]]) -> Kept:
        """Leave out what may not be given; count it."""
        kept, left_out = [], 0
        for item in items:
            if self.allows(owners(item)):
                kept.append(item)
            else:
                left_out += 1
        return Kept(kept, left_out)

    def refusal(self, owners: Iterable[str] = (), what: str = "this item", address: str | None = None) -> str:
        """The sentence that says `what` is kept and that only the person can open it; it names no project.

        The same sentence whatever keeps the item (a closed project, several, or outside_projects), so that
        a refusal says nothing of where the item lives. With `address` (what the agent asked for, as your
        ``traits_of`` reads it) it names the exact command the person runs. `owners` is accepted for callers'
        convenience.
        """
        command = f"`gateway access why {address}`" if address else "`gateway access why` with its address"
        return (
            f"{what} is closed to AI agents; only the person can open it. {command} "
            "shows them what keeps it and which line to change (ai = true in the projects manifest, or "
            "outside_projects = true in the config); ask them if it is needed."
        )

    def refused(self, owners: Iterable[str], what: str = "this item", address: str | None = None) -> Refused:
        """The exception to raise for a kept item: the refusal as its message, the owners kept for the person."""
        owners = frozenset(owners)
        return Refused(self.refusal(owners, what, address), owners)

    def check_read(self, owners: Iterable[str], what: str = "this item", address: str | None = None) -> None:
        """Raise Refused (a ToolError naming nothing) unless an item owned by `owners` may be given."""
        owners = frozenset(owners)
        if not self.allows(owners):
            raise self.refused(owners, what, address)

    def check_write(self, owners: Iterable[str], what: str = "this change", address: str | None = None) -> None:
        """Raise Refused unless something may be written into (or outside) these projects."""
        self.check_read(owners, what, address)

    def closed_by(self, owners: Iterable[str]) -> list[Project]:
        """The person's answer to "why is it kept": the closed projects among `owners` (none: outside_projects)."""
        return [p for p in map(self.project, owners) if p is not None and not p.ai]

    def open_projects(self) -> Sequence[Project]:
        return [p for p in self.projects if p.ai]


@frozen
class Place:
    """Where a project is written in the manifest (1-based line numbers; 0 when not found)."""

    entry: int = 0
    ai: int = 0


_PROJECT_HEADER = re.compile(r"^\[\[\s*project\s*\]\]\s*(#.*)?$")
_KEY = re.compile(r"^(id|ai)\s*=")
_HEADER = re.compile(r"^\[\[?[^\]\"',]+\]\]?\s*(#.*)?$")


def place_of(text: str, project_id: str) -> Place:
    """Which lines of a manifest's text hold this project's `[[project]]` entry and its `ai` key."""
    blocks: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("["):
            blocks.append({"entry": number} if _PROJECT_HEADER.match(stripped) else {})
            continue
        key = _KEY.match(stripped)
        if key and blocks and blocks[-1]:
            try:
                blocks[-1][key.group(1)] = (tomllib.loads(stripped)[key.group(1)], number)
            except (tomllib.TOMLDecodeError, KeyError):
                continue
    for block in blocks:
        if block.get("id", (None, 0))[0] == project_id:
            return Place(block["entry"], block.get("ai", (None, 0))[1])
    # Written some other way (an inline table): the line that names the id, at least.
    named = re.compile(r"\bid\s*=\s*[\"']" + re.escape(project_id) + r"[\"']")
    return Place(next((n for n, line in enumerate(text.splitlines(), start=1) if named.search(line)), 0), 0)


def route_line(text: str, project_id: str, kind: str, route: str) -> int:
    """The line of a manifest's text that writes this route of this project (its kind's line, else the entry's)."""
    start = place_of(text, project_id).entry
    if not start:
        return 0
    lines = text.splitlines()
    key = re.compile(r"^\s*" + re.escape(kind) + r"\s*=")
    kind_line = 0
    for number in range(start + 1, len(lines) + 1):
        line = lines[number - 1]
        if _HEADER.match(line.strip()):
            break  # the next table: this project's entry ended
        if key.match(line):
            kind_line = number
        if kind_line and (f'"{route}"' in line or f"'{route}'" in line):
            return number
    return kind_line or start


def _keys(names: Any) -> str:
    return "key" if len(names) == 1 else "keys"
