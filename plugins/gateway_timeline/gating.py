"""Which events the consent gate lets through: decided per (app, URL, file path), the traits routes use.

A browser's window title repeats the title of the page shown, often without its URL (ActivityWatch's
window watcher records none): an event whose title begins with the title of a page the gate kept back is
kept back too, so a closed project's page does not come back through the window list.

The projects an app, URL or path belongs to depend only on the manifest: they are remembered per gate (the
manifest and `outside_projects`, which change rarely) across calls, so a day's few thousand distinct URLs are
matched against the routes once, not on every call.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import frozen

from gateway import Gate

if TYPE_CHECKING:
    from gateway_timeline.store import Store

T = TypeVar("T")
Traits = tuple[str | None, str | None, str | None, str | None]  # app, url, path, label
MIN_TITLE = 8  # shorter page titles ("Home", "Inbox") say too little to hide every window beginning with them


class _Memo:
    """What one gate said about single values: their owners, and whether the value alone keeps an event back."""

    def __init__(self) -> None:
        self.owners: dict[tuple[str, str], frozenset[str]] = {}
        self.shut: dict[tuple[str, str], bool] = {}


_MEMOS: dict[Any, _Memo] = {}  # per gate (the manifest and outside_projects)
_MEMOS_LOCK = threading.Lock()
_GATES_REMEMBERED = 8
_VALUES_REMEMBERED = 200_000


def _memo_of(gate: Gate) -> _Memo:
    """The memo of this gate (a fresh one, not kept, if the gate cannot be a key)."""
    try:
        hash(gate)
    except TypeError:
        return _Memo()
    with _MEMOS_LOCK:
        memo = _MEMOS.get(gate)
        if memo is None or len(memo.owners) > _VALUES_REMEMBERED:
            if len(_MEMOS) >= _GATES_REMEMBERED:
                _MEMOS.clear()
            memo = _MEMOS[gate] = _Memo()
        return memo


@frozen
class Closed:
    """What the gate keeps back in a range, as values of the store's columns: an event is kept back when its
    app, URL or path is one of these, or its title (label) is."""

    apps: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()

    def condition(self) -> tuple[str, list[Any]]:
        """An SQL condition (0 or 1, never NULL) on the columns app, url, path, label, with its parameters."""
        parts: list[str] = []
        params: list[Any] = []
        for column, values in (("app", self.apps), ("url", self.urls), ("path", self.paths), ("label", self.labels)):
            if values:
                parts.append(f"IFNULL({column} IN (SELECT value FROM json_each(?)), 0)")
                params.append(json.dumps(list(values)))
        return "(" + " OR ".join(parts) + ")", params


class Gatekeeper:
    """The gate's verdicts for one call, remembered per trait triple (a day holds few distinct ones)."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate
        # Without an apps, urls or paths route no event belongs to a project: one verdict for all.
        self.routed = any(p.apps or p.urls or p.paths for p in gate.projects)
        self.default = gate.allows(())
        self._verdicts: dict[tuple[str | None, str | None, str | None], bool] = {}
        self._memo = _memo_of(gate) if self.routed else _Memo()

    def owners_by(self, kind: str, value: str | None) -> frozenset[str]:
        """The projects whose `kind` routes (app, url, path) take this value; remembered per gate."""
        if not value:
            return frozenset()
        owners = self._memo.owners.get((kind, value))
        if owners is None:
            owners = self._memo.owners[(kind, value)] = self.gate.owners_of(**{kind: value})
        return owners

    def _shuts(self, kind: str, value: str) -> bool:
        """Does this value alone keep an event back (it belongs to a closed project)? For outside_projects true."""
        shut = self._memo.shut.get((kind, value))
        if shut is None:
            shut = self._memo.shut[(kind, value)] = not self.gate.allows(self.owners_by(kind, value))
        return shut

    @property
    def uniform(self) -> bool:
        return not self.routed

    def owners(self, app: str | None, url: str | None, path: str | None) -> frozenset[str]:
        # A project owns an item when any one of its routes takes any one of the item's traits: the union.
        return self.owners_by("app", app) | self.owners_by("url", url) | self.owners_by("path", path)

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

    def closed(self, store: Store, since_ms: int, until_ms: int, reach_back: bool = False) -> Closed | None:
        """The values of the events the gate keeps back in the range (None when it keeps none back).

        Decided per distinct app, URL and file path (few, where events are many): with things outside projects
        open, an event is kept back exactly when one of its traits belongs to a closed project, or its title
        begins with the title of a page kept back (a page: an event with a URL, in the whole minutes around the
        range). The apps, URLs and paths named may include some the range does not hold; with `reach_back`,
        they include those of the spans begun in the hour before it (which the timeline's summary reads). Only for
        `outside_projects = true`; otherwise every event without an owner is kept back too, and the caller
        screens rows one by one (`screen`).
        """
        if not self.routed or not self.gate.outside_projects:
            raise ValueError("closed() is for a routed gate with things outside projects open")
        projects = self.gate.projects
        found: dict[str, tuple[str, ...]] = {}
        for column, wanted in (("app", any(p.apps for p in projects)),
                               ("url", any(p.urls for p in projects)),
                               ("path", any(p.paths for p in projects))):
            values: Sequence[str] = store.trait_values(column, since_ms, until_ms, reach_back) if wanted else ()
            found[column] = tuple(value for value in values if self._shuts(column, value))
        if not any(found.values()):
            return None
        titles = tuple(title for title in store.page_titles(since_ms, until_ms, found["app"], found["url"],
                                                            found["path"]) if len(title) >= MIN_TITLE)
        # The prefix test runs once per distinct title of the range; SQL then only looks titles up.
        labels = tuple(store.labels_beginning(titles, since_ms, until_ms)) if titles else ()
        return Closed(apps=found["app"], urls=found["url"], paths=found["path"], labels=labels)

    def exclusion(self, store: Store, since_ms: int, until_ms: int) -> tuple[str, list[Any]] | None:
        """`closed()` as an SQL condition true for the events kept back, with its parameters; None for none."""
        closed = self.closed(store, since_ms, until_ms)
        return None if closed is None else closed.condition()
