"""What each route of the manifest takes right now, counted from every plugin's census, for the person.

`gateway access list` prints the counts; `gateway doctor` reads them for its warnings (a route that takes
nothing, a folder route naming no folder, a place a closed project's `paths` route covers only in part).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING

from attrs import define, field

from gateway.gate.traits import Traits, folder_route_takes

if TYPE_CHECKING:
    from gateway.engine.config import Snapshot
    from gateway.engine.core import Gateway
    from gateway.gate.access import Gate

RouteKey = tuple[str, str, str]  # project id, kind, route
# The places a thing sits in, whole: a route that takes some of one's things and not others is worth a look.
PLACES = (("account", "account"), ("list", "task list"), ("calendar", "calendar"), ("addressbook", "address book"))


@define
class Tally:
    """What the census found: things per source, what each route took per source, every mail folder seen, and
    per closed project's `paths` route the places it took only some of."""

    things: Counter[str] = field(factory=Counter)
    taken: dict[RouteKey, Counter[str]] = field(factory=lambda: defaultdict(Counter))
    folders: set[tuple[str, str]] = field(factory=set)
    # (place kind, place name) -> things in it; (route, place kind, place name) -> of them taken by the route.
    in_place: Counter[tuple[str, str]] = field(factory=Counter)
    taken_in_place: Counter[tuple[RouteKey, str, str]] = field(factory=Counter)
    failures: list[str] = field(factory=list)

    @property
    def total(self) -> int:
        return sum(self.things.values())

    def partly_covered(self) -> list[tuple[RouteKey, str, str, int, int]]:
        """(route, place kind, place name, taken, of) for each place a route takes some but not all of."""
        found = []
        for (route, kind, name), taken in sorted(self.taken_in_place.items()):
            every = self.in_place[(kind, name)]
            if 0 < taken < every:
                found.append((route, kind, name, taken, every))
        return found


def tally(gateway: Gateway, snapshot: Snapshot) -> Tally:
    """Count, for every thing of every enabled plugin's census, which routes take it."""
    gate = snapshot.gate
    result = Tally()
    for plugin, source, traits in gateway.census(snapshot):
        if traits is None:
            result.failures.append(f"{plugin}: {source}")
            continue
        count(gate, source, traits, result)
    return result


def count(gate: Gate, source: str, traits: Traits, result: Tally) -> None:
    """Add one thing's routes to the tally."""
    result.things[source] += 1
    if traits.folder:
        result.folders.add((traits.account, traits.folder))
    places = [(kind, getattr(traits, attribute)) for attribute, kind in PLACES if getattr(traits, attribute)]
    for place in places:
        result.in_place[place] += 1
    for reason in gate.explain(traits):
        if not reason.took:
            continue
        key = (reason.project, reason.kind, reason.route)
        result.taken[key][source] += 1
        project = gate.project(reason.project)
        if reason.kind == "paths" and project is not None and not project.ai:
            for kind, name in places:
                result.taken_in_place[(key, kind, name)] += 1


def names_a_folder(route: str, folders: set[tuple[str, str]]) -> bool:
    """Does a folder route take any folder seen (as `account/folder`, or a bare name in any account)?"""
    return any(folder_route_takes(route, account, folder) for account, folder in folders)
