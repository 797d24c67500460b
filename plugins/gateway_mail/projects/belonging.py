"""What ties say of projects: which projects each address is tied to, read once per call from the tie store."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from gateway import Gate
from gateway_mail.mail.gating import Tied
from gateway_mail.projects.ties import FILE_NAME, Ties, ident_of


def tied_projects(ties: Ties, gate: Gate) -> dict[str, frozenset[str]]:
    """Each address tied to a project of the manifest, and those projects (a tie to an unknown id owns nothing)."""
    known = {p.id for p in gate.projects}
    found: dict[str, set[str]] = defaultdict(set)
    for a, b in ties.all():
        for project_end, other in ((a, b), (b, a)):
            project = ident_of(project_end, "project")
            if project is not None and project in known and ident_of(other, "project") is None:
                found[other].add(project)
    return {address: frozenset(projects) for address, projects in found.items()}


_mail_ties: dict[str, tuple[Any, Tied]] = {}


def mail_ties(data_folder: Path) -> Tied:
    """The projects each message is tied to (`mid:` addresses), read again only when the tie store's files change
    (two stats a call); no store yet: none (nothing is created to find that out)."""
    path = data_folder / FILE_NAME
    signature = tuple(_signature(Path(f"{path}{suffix}")) for suffix in ("", "-wal"))
    if signature[0] is None:
        return Tied()
    cached = _mail_ties.get(str(path))
    if cached is not None and cached[0] == signature:
        return cached[1]
    found: dict[str, set[str]] = defaultdict(set)
    with Ties.at(path) as ties:
        for a, b in ties.all():
            for project_end, other in ((a, b), (b, a)):
                project = ident_of(project_end, "project")
                message = other[len("mid:"):] if other.startswith("mid:") else ""
                if project is not None and message:
                    found[message].add(project)
        version = ties.version()
    tied = Tied({message: frozenset(projects) for message, projects in found.items()}, version)
    if len(_mail_ties) > 8:
        _mail_ties.clear()
    _mail_ties[str(path)] = (signature, tied)
    return tied


def _signature(path: Path) -> tuple[int, int] | None:
    try:
        status = path.stat()
    except FileNotFoundError:
        return None
    return status.st_size, status.st_mtime_ns
