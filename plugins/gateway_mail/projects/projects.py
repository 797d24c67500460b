"""What belongs to a project: the manifest's `[[project]]` entries, and the membership rules the plugin shares.

A task or an event belongs to a project by its `REFID` (RFC 9253; the value is the project's id, `project:<id>`
also taken), by a `project:<id>` category, or by a tie (ties.py); a step (RELATED-TO;RELTYPE=PARENT) also by its
bigger task's, all the way up. A note or a contact is placed by its own module with `belonging.tied_projects` and
the manifest (a folder the project names, its client). An id the manifest does not hold is in no project (the gate
treats a project taken out of the manifest that way).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from gateway import Context, Project

PROJECT = "sioul:project/"
CASE = "sioul:case/"  # the older name, still opens a project
CATEGORY = "project:"
_NONE: frozenset[str] = frozenset()


def address_of(project_id: str) -> str:
    from gateway_mail.projects.ties import address

    return address("project", project_id)


def id_of_address(address: str) -> str | None:
    """The project id in `sioul:project/<id>` or `sioul:case/<id>` (unescaped); None for any other address."""
    from gateway_mail.projects.ties import ident_of

    return ident_of(address, "project")


def project_named(ctx: Context, project: str) -> Project:
    """An open project given by an agent as its id or its address; unknown or closed is refused alike."""
    project_id = id_of_address(project) or project
    found = ctx.gate.project(project_id)
    if found is None or not found.ai:
        # The same refusal whether the id is unknown or closed: an agent cannot probe the manifest by it.
        raise ctx.gate.refused([project_id] if found else [], "this project")
    return found


def tagged(refids: Iterable[str] = (), categories: Iterable[str] = ()) -> frozenset[str]:
    """The projects an item names itself: REFID values and `project:<id>` categories."""
    ids = set()
    for value in refids:
        value = value.strip()
        value = value[len(CATEGORY):] if value.lower().startswith(CATEGORY) else value
        if value:
            ids.add(value)
    for category in categories:
        category = category.strip()
        if category.lower().startswith(CATEGORY) and len(category) > len(CATEGORY):
            ids.add(category[len(CATEGORY):])
    return frozenset(ids)


def tie_map(ctx: Context) -> Mapping[str, frozenset[str]]:
    """For every address tied to a project, the projects it is tied to (the tie store read again only when a tie
    was made since the last read: `belonging.tie_map_at`). Shared between calls: read it, never change it."""
    from gateway_mail.projects.belonging import tie_map_at
    from gateway_mail.projects.ties import FILE_NAME

    return tie_map_at(Path(ctx.folders.data) / FILE_NAME, ctx.gate)


def tied_projects(ctx: Context, address: str, ties: Mapping[str, frozenset[str]] | None = None) -> frozenset[str]:
    """The projects `address` is tied to."""
    return (tie_map(ctx) if ties is None else ties).get(address, frozenset())


def owners_with_parents(
    own: Mapping[str, frozenset[str]], parent_of: Callable[[str], str | None]
) -> Callable[[str], frozenset[str]]:
    """A function giving each uid's owners: its own and every ancestor's (RELATED-TO parents), cycles cut.

    `own` maps a uid to the projects it names or is tied to; `parent_of` gives a uid's bigger task, if any.
    """
    memo: dict[str, frozenset[str]] = {}

    def owners(uid: str) -> frozenset[str]:
        found = memo.get(uid)
        if found is not None:
            return found
        parent = parent_of(uid)
        if parent is None:  # most tasks are no step: their own owners, no chain to walk
            found = memo[uid] = own.get(uid, _NONE)
            return found
        chain, seen = [], set()
        current: str | None = uid
        while current is not None and current not in seen and current not in memo:
            seen.add(current)
            chain.append(current)
            current = parent_of(current)
        if current is None:
            inherited: frozenset[str] = frozenset()
        elif current in memo:
            inherited = memo[current]
        else:  # a cycle of steps: every task in it shares the cycle's owners
            inherited = frozenset().union(*(own.get(link, frozenset()) for link in chain[chain.index(current):]))
        for link in reversed(chain):
            inherited = inherited | own.get(link, frozenset())
            memo[link] = inherited
        return memo[uid]

    return owners
