"""What ties say of projects: which projects each address is tied to, read once per call from the tie store."""

from __future__ import annotations

from collections import defaultdict

from gateway import Gate
from gateway_mail.ties import Ties, ident_of


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
