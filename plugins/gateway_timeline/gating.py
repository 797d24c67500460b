"""Which events the consent gate lets through: decided per (app, URL, file path), the traits routes use.

A browser's window title repeats the title of the page shown, often without its URL (ActivityWatch's
window watcher records none): an event whose title begins with the title of a page the gate kept back is
kept back too, so a closed project's page does not come back through the window list.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from gateway import Gate

if TYPE_CHECKING:
    from gateway_timeline.store import Store

T = TypeVar("T")
Traits = tuple[str | None, str | None, str | None, str | None]  # app, url, path, label
MIN_TITLE = 8  # shorter page titles ("Home", "Inbox") say too little to hide every window beginning with them


class Gatekeeper:
    """The gate's verdicts for one call, remembered per trait triple (a day holds few distinct ones)."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate
        # Without an apps, urls or paths route no event belongs to a project: one verdict for all.
        self.routed = any(p.apps or p.urls or p.paths for p in gate.projects)
        self.default = gate.allows(())
        self._verdicts: dict[tuple[str | None, str | None, str | None], bool] = {}

    @property
    def uniform(self) -> bool:
        return not self.routed

    def owners(self, app: str | None, url: str | None, path: str | None) -> frozenset[str]:
        return self.gate.owners_of(app=app or None, url=url or None, path=path or None)

    def allows(self, app: str | None, url: str | None, path: str | None) -> bool:
        if not self.routed:
            return self.default
        key = (app, url, path)
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._verdicts[key] = self.gate.allows(self.owners(app, url, path))
        return verdict

    def screen(self, items: Iterable[T], traits: Callable[[T], Traits]) -> tuple[list[T], list[T]]:
        """(kept, left out): by the items' own traits, then by titles of the pages left out."""
        kept, closed, closed_titles = [], [], set()
        for item in items:
            app, url, path, label = traits(item)
            if self.allows(app, url, path):
                kept.append(item)
            else:
                closed.append(item)
                if url and label and len(label) >= MIN_TITLE:
                    closed_titles.add(label)
        if closed_titles:
            titles = tuple(closed_titles)
            still = []
            for item in kept:
                label = traits(item)[3]
                (closed if label and label.startswith(titles) else still).append(item)
            kept = still
        return kept, closed


    def exclusion(self, store: Store, since_ms: int, until_ms: int) -> tuple[str, list[Any]] | None:
        """An SQL condition true for the events the gate keeps back in the range, with its parameters.

        Decided per distinct app, URL and file path of the range (few, where events are many): with things
        outside projects open, an event is kept back exactly when one of its traits belongs to a closed
        project, or its title begins with the title of a page kept back. None when nothing is kept back.
        Only for `outside_projects = true`; otherwise every event without an owner is kept back too, and
        the caller screens rows one by one (`screen`).
        """
        if not self.routed or not self.gate.outside_projects:
            raise ValueError("exclusion() is for a routed gate with things outside projects open")
        projects = self.gate.projects
        parts: list[str] = []
        params: list[Any] = []
        for column, kind, wanted in (("app", "app", any(p.apps for p in projects)),
                                     ("url", "url", any(p.urls for p in projects)),
                                     ("path", "path", any(p.paths for p in projects))):
            if not wanted:
                continue
            closed = [value for value in store.distinct(column, since_ms, until_ms)
                      if not self.gate.allows(self.gate.owners_of(**{kind: value}))]
            if closed:
                parts.append(f"IFNULL({column} IN (SELECT value FROM json_each(?)), 0)")
                params.append(json.dumps(closed))
        if not parts:
            return None
        condition = "(" + " OR ".join(parts) + ")"
        titles = tuple(t for t in store.distinct("label", since_ms, until_ms, f" AND url IS NOT NULL AND {condition}",
                                                 params) if len(t) >= MIN_TITLE)
        if titles:
            # The prefix test runs here, once per distinct title of the range; SQL then only looks titles up.
            labels = [label for label in store.distinct("label", since_ms, until_ms) if label.startswith(titles)]
            condition = f"({condition[1:-1]} OR IFNULL(label IN (SELECT value FROM json_each(?)), 0))"
            params = [*params, json.dumps(labels)]
        return condition, params
