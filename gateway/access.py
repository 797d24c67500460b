"""The consent gate: which projects are open to agents, and what of a plugin's items may be given.

A plugin says which projects an item belongs to (``gate.owners_of(path=..., sender=...)`` matches the
manifest's routes for it); the gate decides. Closed until opened; an item in two projects needs both open;
items in no project follow ``outside_projects``.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from attrs import field, frozen

from gateway.items import ToolError

T = TypeVar("T")

ROUTE_KINDS = ("paths", "senders", "subjects", "folders", "apps", "urls")
_PROJECT_KEYS = {"id", "name", "ai", "client", *ROUTE_KINDS}


class ManifestError(ValueError):
    """The projects manifest cannot be read or says something we cannot take."""


@frozen
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

    @property
    def label(self) -> str:
        return self.name or self.id


@frozen
class Manifest:
    projects: tuple[Project, ...] = ()

    @classmethod
    def from_file(cls, path: Path) -> Manifest:
        """Read a manifest; a missing file is an empty manifest, a broken one a ManifestError saying where."""
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return cls()
        except OSError as error:
            raise ManifestError(f"the projects manifest {path} cannot be read: {error.strerror}") from error
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise ManifestError(f"the projects manifest {path} is not valid TOML: {error}") from error
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "the projects manifest") -> Manifest:
        unknown = set(data) - {"project"}
        if unknown:
            raise ManifestError(f"{source}: unknown key(s) {', '.join(sorted(unknown))}; only [[project]] tables")
        projects = []
        seen: set[str] = set()
        for index, entry in enumerate(data.get("project", [])):
            where = f"{source}, project #{index + 1}"
            if not isinstance(entry, Mapping) or not isinstance(entry.get("id"), str) or not entry["id"]:
                raise ManifestError(f"{where}: every [[project]] needs an id (a string)")
            bad = set(entry) - _PROJECT_KEYS
            if bad:
                raise ManifestError(
                    f"{where}: unknown key(s) {', '.join(sorted(bad))}; known: {', '.join(sorted(_PROJECT_KEYS))}"
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


@functools.lru_cache(maxsize=4096)
def _norm_path(value: str) -> str:
    return os.path.normpath(os.path.expanduser(value)).rstrip("/") or "/"


def _path_matches(route: str, path: str) -> bool:
    route, path = _norm_path(route), _norm_path(path)
    if any(ch in route for ch in "*?["):
        return fnmatch.fnmatchcase(path, route) or fnmatch.fnmatchcase(path, route.rstrip("/") + "/*")
    # Inside the route's folder, or the folder itself: "/a/b" takes "/a/b/c", never "/a/bc".
    return path == route or path.startswith(route if route == "/" else route + "/")


def _sender_matches(route: str, sender: str) -> bool:
    route, sender = route.strip().lower(), sender.strip().lower()
    if "@" in route.lstrip("@"):
        return sender == route
    domain = route.lstrip("@")
    host = sender.rpartition("@")[2]
    return host == domain or host.endswith("." + domain)


def _url_matches(route: str, url: str) -> bool:
    route_parts = urlsplit(route if "//" in route else "//" + route)
    url_parts = urlsplit(url if "//" in url else "//" + url)
    route_host, url_host = (route_parts.hostname or ""), (url_parts.hostname or "")
    if not route_host or not (url_host == route_host or url_host.endswith("." + route_host)):
        return False
    return url_parts.path.startswith(route_parts.path or "/") or not route_parts.path


_MATCHERS: dict[str, Callable[[str, str], bool]] = {
    "paths": _path_matches,
    "senders": _sender_matches,
    "subjects": lambda route, subject: route.casefold() in subject.casefold(),
    "folders": lambda route, folder: folder == route or folder.startswith(route.rstrip("/") + "/"),
    "apps": lambda route, app: route.casefold() == app.casefold(),
    "urls": _url_matches,
}


@frozen
class Gate:
    """The rule of who may see what, for one call (built from the manifest and `outside_projects`)."""

    manifest: Manifest = Manifest()
    outside_projects: bool = True

    @property
    def projects(self) -> tuple[Project, ...]:
        return self.manifest.projects

    def project(self, project_id: str) -> Project | None:
        return next((p for p in self.projects if p.id == project_id), None)

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
        """The projects whose routes take an item with these traits (any one route of a project suffices)."""
        traits = {"paths": path, "senders": sender, "subjects": subject, "folders": folder, "apps": app, "urls": url}
        owners = set()
        for project in self.projects:
            for kind, value in traits.items():
                if value and any(_MATCHERS[kind](route, value) for route in getattr(project, kind)):
                    owners.add(project.id)
                    break
        return frozenset(owners)

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

    def refusal(self, owners: Iterable[str], what: str = "this item") -> str:
        """The sentence that says why `what` is kept, and how the person can open it."""
        closed = [p for p in (self.project(o) for o in owners) if p is not None and not p.ai]
        if closed:
            names = ", ".join(f"{p.label!r} ({p.id})" for p in closed)
            return (
                f"{what} belongs to a project closed to AI agents: {names}. Only the person can open it, by "
                f"setting ai = true on its entry in the projects manifest; ask them if it is needed."
            )
        return (
            f"{what} is in no project, and things outside projects are closed to AI agents. Only the person "
            f"can change that, with outside_projects = true in the [access] table of the gateway's config."
        )

    def check_read(self, owners: Iterable[str], what: str = "this item") -> None:
        """Raise ToolError with the refusal unless an item owned by `owners` may be given."""
        owners = list(owners)
        if not self.allows(owners):
            raise ToolError(self.refusal(owners, what))

    def check_write(self, owners: Iterable[str], what: str = "this change") -> None:
        """Raise ToolError unless something may be written into (or outside) these projects."""
        self.check_read(owners, what)

    def open_projects(self) -> Sequence[Project]:
        return [p for p in self.projects if p.ai]
