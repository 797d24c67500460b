"""Which events the consent gate lets through: decided per (app, URL, file path), the traits routes use.

A browser's window title repeats the title of the page shown, often without its URL (ActivityWatch's
window watcher records none): an event whose title begins with the title of a page the gate kept back is
kept back too, so a closed project's page does not come back through the window list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from gateway import Gate

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

