"""Which events the consent gate lets through: decided per app, URL, file path and window title.

A window title routes through the paths it names (see `title_paths`, `TitleFolders`): an editor's or a
terminal's title saying `~/work/secret-client/src` or `settings.py — secret-client — Visual Studio Code` is that
folder's project's. Every verdict is the gate's (`Gate.owners`, `Gate.allows`) on one value; SQL only looks
up the values the gate named. Private-window events (`private_rows`) are not the gate's: they are dropped
without being counted, as the importers drop them.

A browser's window title repeats the title of the page shown, often without its URL (ActivityWatch's
window watcher records none): an event whose title begins with the title of a page the gate kept back is
kept back too, so a closed project's page does not come back through the window list.

The projects an app, URL or path belongs to depend only on the manifest: they are remembered per gate (the
manifest and `outside_projects`, which change rarely) across calls, so a day's few thousand distinct URLs are
matched against the routes once, not on every call.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import frozen

from gateway import Gate, GateMemo
from gateway import Traits as Described
from gateway_timeline.envelope import is_private_app, is_private_title

if TYPE_CHECKING:
    from gateway_timeline.store import StoreReader as Store

T = TypeVar("T")
Traits = tuple[str | None, str | None, str | None, str | None]  # app, url, path, label
MIN_TITLE = 8  # shorter page titles ("Home", "Inbox") say too little to hide every window beginning with them...
# ...so a window repeats a shorter one only whole: alone (Safari) or before a browser's separator and name.
_AFTER_TITLE = (" - ", " — ", " – ", " | ", " · ")


def repeats(label: str, title: str) -> bool:
    """Whether a window's title repeats a page's title: begins with it, or (a title shorter than MIN_TITLE) is it,
    alone or followed by a separator (`Z short - Mozilla Firefox`)."""
    return PageTitles.of((title,)).repeated_by(label)


@frozen
class PageTitles:
    """The titles of pages kept back, as what a window title repeating one of them begins with or equals."""

    prefixes: tuple[str, ...] = ()
    whole: frozenset[str] = frozenset()

    @classmethod
    def of(cls, titles: Iterable[str]) -> PageTitles:
        found = {title for title in titles if title and title.strip()}
        short = {title for title in found if len(title) < MIN_TITLE}
        prefixes = [title for title in found if title not in short]
        prefixes += [title + after for title in short for after in _AFTER_TITLE]
        return cls(tuple(sorted(prefixes)), frozenset(short))

    def __bool__(self) -> bool:
        return bool(self.prefixes)

    def repeated_by(self, label: str) -> bool:
        return label in self.whole or label.startswith(self.prefixes)


# Where a path begins in a title: `/` or `~/` at the start or after a space, bracket, quote, `:` or `=`
# (`user@host:~/src`, `(/srv/x)`), never inside a word (`ada/gateway`) nor a URL's `//`.
_PATH_START = re.compile(r"(?:^|(?<=[\s(\[{<:=\"'`]))(?:~/|/)(?=[^\s/])")
# Where it surely ends: quotes, brackets, a bar, an editor's dash between spaces, a tab. A space may be inside
# a folder's name, so every shorter candidate ending at a space is tried too.
_PATH_END = re.compile(r"[\"'`|()\[\]{}<>\t]|\s[—–·]\s")
_PATH_TRAILING = " .,:;!?…"
# The parts of a title an editor or a terminal puts a project's folder name in: between its separators
# (" — ", " – ", " - ", " | ", " · "), in brackets, or after "host: ".
_SEGMENTS = re.compile(r"\s[—–|·-]\s|[()\[\]]|:\s")
_EDITOR_SEPARATOR = re.compile(r"\s[—–-]\s")
_PATH_WORDS = ("/", "~")


def title_paths(title: str) -> list[str]:
    """The absolute and `~/` paths a title may name, each with its shorter forms ending at a space."""
    found: list[str] = []
    for start in _PATH_START.finditer(title):
        run = _PATH_END.split(title[start.start():start.start() + 1000], maxsplit=1)[0]
        ends = [index for index, char in enumerate(run) if char == " "] + [len(run)]
        for end in ends:
            candidate = run[:end].rstrip(_PATH_TRAILING)
            if len(candidate) > 1 and candidate not in found:
                found.append(candidate)
    return found


class TitleFolders:
    """The last folder names of the manifest's path routes, found in titles as an editor shows them."""

    def __init__(self, gate: Gate) -> None:
        self.routes: dict[str, list[str]] = {}
        for project in gate.projects:
            for route in project.paths:
                name = os.path.basename(route.rstrip("/"))
                if len(name) >= 2 and name not in ("~", "..") and not any(ch in name for ch in "*?["):
                    self.routes.setdefault(name.casefold(), []).append(route)
        names = sorted(self.routes, key=len, reverse=True)
        self._pattern = re.compile(
            r"(?<![\w.-])(?:" + "|".join(map(re.escape, names)) + r")(?![\w.-])", re.IGNORECASE
        ) if names else None

    def routes_named(self, title: str) -> list[str]:
        """Routes whose folder a title names: a whole part of it (between separators or brackets), or a whole
        word after an editor's " — " separator (`settings.py — secret-client — Visual Studio Code`)."""
        if self._pattern is None:
            return []
        named: set[str] = set()
        for segment in _SEGMENTS.split(title):
            key = segment.strip().casefold()
            if key in self.routes:
                named.add(key)
        parts = _EDITOR_SEPARATOR.split(title, maxsplit=1)
        if len(parts) == 2:
            named.update(match.group(0).casefold() for match in self._pattern.finditer(parts[1]))
        return [route for key in sorted(named) for route in self.routes.get(key, ())]


_private_label = is_private_title  # remembered per title (envelope.py)


class _Memo:
    """What one gate said about single values: their owners, and whether the value alone keeps an event back."""

    def __init__(self) -> None:
        self.owners: dict[tuple[str, str], frozenset[str]] = {}
        self.shut: dict[tuple[str, str], bool] = {}
        self.folders: TitleFolders | None = None


_MEMOS: GateMemo[_Memo] = GateMemo(_Memo, gates=8)  # per gate (the manifest and outside_projects)
_VALUES_REMEMBERED = 200_000


def _memo_of(gate: Gate) -> _Memo:
    """The memo of this gate (a fresh one, not kept, if the gate cannot be a key); emptied when it grows too big."""
    memo = _MEMOS.of(gate)
    if len(memo.owners) > _VALUES_REMEMBERED:
        memo.owners.clear()
        memo.shut.clear()
    return memo


@frozen
class Closed:
    """What the gate keeps back in a range, as values of the store's columns: an event is kept back when its
    app, URL or path is one of these, or its title (label) is."""

    apps: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.apps or self.urls or self.paths or self.labels)

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
        self._verdicts: dict[tuple[str | None, str | None, str | None, str | None], bool] = {}
        self._memo = _memo_of(gate) if self.routed else _Memo()
        if self._memo.folders is None:
            self._memo.folders = TitleFolders(gate)
        self.folders = self._memo.folders
        self.titles_routed = any(p.paths for p in gate.projects)

    def owners_by(self, kind: str, value: str | None) -> frozenset[str]:
        """The projects whose `kind` routes (app, url, path) take this value, or (`title`) whose path routes take a
        path the title names; remembered per gate."""
        if not value:
            return frozenset()
        owners = self._memo.owners.get((kind, value))
        if owners is None:
            owners = self._title_owners(value) if kind == "title" else self.gate.owners(Described(**{kind + "s": (value,)}))
            self._memo.owners[(kind, value)] = owners
        return owners

    def _title_owners(self, title: str) -> frozenset[str]:
        if not self.titles_routed:
            return frozenset()
        owners: set[str] = set()
        for path in title_paths(title) if any(word in title for word in _PATH_WORDS) else ():
            owners |= self.owners_by("path", path)
        for route in self.folders.routes_named(title):
            owners |= self.owners_by("path", route)  # the gate decides, as for an item at the route's folder
        return frozenset(owners)

    def described(self, app: str | None, url: str | None, path: str | None, label: str | None) -> Described:
        """An event as the gate sees it, for the person (`gateway access why`, `access list`): its app, URL and
        path, and the paths its title names (a folder name an editor shows stands for the route's folder)."""
        paths = [path] if path else []
        if label and self.titles_routed:
            paths += title_paths(label) if any(word in label for word in _PATH_WORDS) else []
            paths += self.folders.routes_named(label)
        return Described(apps=(app,) if app else (), urls=(url,) if url else (), paths=tuple(dict.fromkeys(paths)))

    def _shuts(self, kind: str, value: str) -> bool:
        """Does this value alone keep an event back (it belongs to a closed project)? For outside_projects true."""
        shut = self._memo.shut.get((kind, value))
        if shut is None:
            shut = self._memo.shut[(kind, value)] = not self.gate.allows(self.owners_by(kind, value))
        return shut

    @property
    def uniform(self) -> bool:
        return not self.routed

    def owners(
        self, app: str | None, url: str | None, path: str | None, label: str | None = None
    ) -> frozenset[str]:
        # A project owns an item when any one of its routes takes any one of the item's traits: the union.
        return (self.owners_by("app", app) | self.owners_by("url", url) | self.owners_by("path", path)
                | self.owners_by("title", label))

    def allows(self, app: str | None, url: str | None, path: str | None, label: str | None = None) -> bool:
        if not self.routed:
            return self.default
        # Most titles name no route's path: those share the verdict of their (app, URL, path).
        named = label if label and self.titles_routed and self.owners_by("title", label) else None
        key = (app, url, path, named)
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._verdicts[key] = self.gate.allows(self.owners(app, url, path, named))
        return verdict

    def screen(self, items: Iterable[T], traits: Callable[[T], Traits]) -> tuple[list[T], list[T]]:
        """(kept, left out): by the items' own traits (their titles' paths among them), then by titles of the
        pages left out. Private-window items are in neither: they are dropped, uncounted."""
        kept, closed, closed_titles = [], [], set()
        for item in items:
            app, url, path, label = traits(item)
            if (label and _private_label(label)) or is_private_app(app):
                continue
            if self.allows(app, url, path, label):
                kept.append(item)
            else:
                closed.append(item)
                if url and label:
                    closed_titles.add(label)
        titles = PageTitles.of(closed_titles)
        if titles:
            still = []
            for item in kept:
                label = traits(item)[3]
                (closed if label and titles.repeated_by(label) else still).append(item)
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
        # Titles naming a closed route's path or folder, judged once per distinct title (remembered per gate).
        named = tuple(
            label for label in store.trait_values("label", since_ms, until_ms, reach_back)
            if self._shuts("title", label)
        ) if self.titles_routed else ()
        if not any(found.values()) and not named:
            return None
        titles = PageTitles.of(store.page_titles(since_ms, until_ms, found["app"], found["url"], found["path"], named))
        # The prefix test runs once per distinct title of the range; SQL then only looks titles up.
        labels = (*store.labels_beginning(titles.prefixes, since_ms, until_ms), *sorted(titles.whole)) if titles else ()
        return Closed(apps=found["app"], urls=found["url"], paths=found["path"],
                      labels=tuple(dict.fromkeys((*named, *labels))))

    def exclusion(self, store: Store, since_ms: int, until_ms: int) -> tuple[str, list[Any]] | None:
        """`closed()` as an SQL condition true for the events kept back, with its parameters; None for none."""
        closed = self.closed(store, since_ms, until_ms)
        return None if closed is None else closed.condition()


def private_rows(store: Store, since_ms: int, until_ms: int, reach_back: bool = False) -> Closed | None:
    """The titles and apps of private windows among the values the range's rows may hold (None for none).

    The importers drop these events; a store filled before they knew a form (or by another program) may still
    hold some, so they are left out at read time too, and counted nowhere (neither given nor `left_out`). A store
    whose titles table was marked with today's forms gives its private titles whole (a superset of the range's,
    and usually none); another is judged title by title over the range.
    """
    labels = tuple(store.private_labels() if store.private_labels_known else (
        label for label in store.trait_values("label", since_ms, until_ms, reach_back) if _private_label(label)))
    apps = tuple(app for app in store.trait_values("app", since_ms, until_ms, reach_back) if is_private_app(app))
    return Closed(apps=apps, labels=labels) if labels or apps else None


def without(where: str, params: Sequence[Any], *conditions: Closed | None) -> tuple[str, list[Any]]:
    """`where` (an SQL suffix) narrowed to the rows none of `conditions` holds."""
    params = list(params)
    for condition in conditions:
        if condition:
            sql, values = condition.condition()
            where, params = f"{where} AND NOT {sql}", [*params, *values]
    return where, params
