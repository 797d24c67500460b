"""Sessions from the minute summary: runs of minutes where one app held the person's attention.

Each minute goes to the app with the most of it (seconds its events cover, plus a second per event);
an app keeps the minutes after a focus event until another app takes over, the person goes idle, or
half an hour passes with nothing. A one-minute switch between two stretches of the same app is folded
into them and noted.

Finding sessions needs only (minute, type, app) counts; what happened inside one (titles, pages, files)
is read afterwards, for the sessions actually shown (`fill`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from attrs import define, field

MINUTE_MS = 60_000
FOCUS_HOLD_MS = 30 * MINUTE_MS
IDLE_TYPES = ("user.idle",)
ACTIVE_TYPES = ("user.active",)
FOCUS_PREFIXES = ("app.", "window.", "browser.")
# Kinds that describe what happened inside the focused window rather than which window had focus.
INSIDE_PREFIXES = ("editor.",)
FOCUS_CHANGE_TYPES = ("app.focus", "window.focus")
_ALIASES = {"chrome": "googlechrome", "navigator": "firefox", "firefoxesr": "firefox", "msedge": "microsoftedge"}

# A summary row is a tuple: (minute, type, app, bundle_id, label, url, path, n, first_ms, last_ms, timed);
# `timed` is 1 when the events carry durations (ActivityWatch), so their span ends where they end.
MINUTE, TYPE, APP, BUNDLE, LABEL, URL, PATH, N, FIRST, LAST, TIMED = range(11)
Row = tuple[Any, ...]


@lru_cache(maxsize=4096)
def app_key(name: str | None) -> str:
    """One key for the names an app goes by across watchers ("Google Chrome", "Google-chrome", "chrome.exe")."""
    if not name:
        return ""
    key = "".join(ch for ch in name.lower().removesuffix(".exe") if ch.isalnum())
    return _ALIASES.get(key, key)


@define
class Session:
    start_ms: int
    end_ms: int
    app: str
    key: str = ""
    first_minute: int = 0
    last_minute: int = 0
    also_keys: tuple[str, ...] = ()
    bundle_id: str | None = None
    events: int = 0
    labels: Counter = field(factory=Counter)
    pages: dict[str, tuple[str, float]] = field(factory=dict)  # url -> (label, weight)
    files: Counter = field(factory=Counter)
    counts: Counter = field(factory=Counter)
    also: list[str] = field(factory=list)

    @property
    def title(self) -> str:
        """What the session was about: the title seen longest, else the file most worked on."""
        best = max((item for item in self.labels.items() if item[0]), key=lambda item: item[1], default=None)
        if best is not None:
            return best[0]
        if self.files:
            return max(self.files.items(), key=lambda item: item[1])[0].rsplit("/", 1)[-1]
        return ""


_MARKERS = frozenset(IDLE_TYPES + ACTIVE_TYPES)


def _is_marker(kind: str) -> bool:
    return kind in _MARKERS


def _idle_spans(rows: Sequence[Row], until_ms: int) -> list[tuple[int, int]]:
    """Idle stretches: an idle event with a duration, or an idle mark until the next sign of activity."""
    spans, open_at = [], None
    for row in sorted((r for r in rows if r[APP] or _is_marker(r[TYPE])), key=lambda r: r[FIRST]):
        kind = row[TYPE]
        if kind in IDLE_TYPES:
            if row[LAST] > row[FIRST]:
                spans.append((row[FIRST], row[LAST]))
            elif open_at is None:
                open_at = row[FIRST]
        elif open_at is not None and (kind in ACTIVE_TYPES or row[FIRST] > open_at):
            spans.append((open_at, row[FIRST]))
            open_at = None
    if open_at is not None:
        spans.append((open_at, until_ms))
    return spans


def _idle_ms(spans: Sequence[tuple[int, int]], start: int, end: int) -> int:
    return sum(max(0, min(e, end) - max(s, start)) for s, e in spans if s < end and e > start)


def _primary_apps(rows: Sequence[Row], since_ms: int, until_ms: int) -> dict[int, str]:
    """minute -> the key of the app that held it; idle and empty minutes are absent."""
    by_minute: dict[int, list[Row]] = defaultdict(list)
    for row in rows:
        by_minute[row[MINUTE]].append(row)
    idle = _idle_spans(rows, until_ms)
    carried: dict[str, int] = {}  # app key -> when its long event ends
    held: tuple[str, int] | None = None  # (app key, last focus ms)
    primary: dict[int, str] = {}
    for minute in range(since_ms // MINUTE_MS, -(-until_ms // MINUTE_MS)):
        start = max(minute * MINUTE_MS, since_ms)
        end = min((minute + 1) * MINUTE_MS, until_ms)
        scores: dict[str, float] = defaultdict(float)
        for app, until in list(carried.items()):
            if until <= start:
                del carried[app]
            else:
                scores[app] += min(until, end) - start
        latest_focus, timed_focus = None, False
        for row in by_minute.get(minute, ()):
            kind = row[TYPE]
            if not row[APP] or _is_marker(kind) or kind.startswith(INSIDE_PREFIXES):
                continue
            key = app_key(row[APP])
            first, last = row[FIRST], row[LAST]
            scores[key] += max(0, min(last, end) - max(first, start)) + 1000 * row[N]
            if last > end:
                carried[key] = max(carried.get(key, 0), last)
            if kind.startswith(FOCUS_PREFIXES):
                if len(row) > TIMED and row[TIMED]:
                    timed_focus = True  # an event with a duration: it holds exactly as long as it lasts
                elif latest_focus is None or last >= latest_focus[1]:
                    latest_focus = (key, last)
        if idle and 2 * _idle_ms(idle, start, end) > end - start:
            held = None  # a window event that goes on after the person is back still counts (carried)
            continue
        if latest_focus is not None:
            held = latest_focus
        elif timed_focus:
            held = None
        if not scores and held is not None and start - held[1] < FOCUS_HOLD_MS:
            scores[held[0]] = 1
        if scores:
            primary[minute] = max(scores, key=lambda a: (scores[a], a))
    return primary


def _runs(primary: dict[int, str]) -> list[list[Any]]:
    """[app key, first minute, last minute, also] for each stretch, folding one-minute switches."""
    runs: list[list[Any]] = []
    for minute in sorted(primary):
        app = primary[minute]
        if runs and runs[-1][0] == app and runs[-1][2] == minute - 1:
            runs[-1][2] = minute
        else:
            runs.append([app, minute, minute, []])
    folded: list[list[Any]] = []
    index = 0
    while index < len(runs):
        run = runs[index]
        if (
            folded
            and index + 1 < len(runs)
            and run[1] == run[2]
            and folded[-1][0] == runs[index + 1][0]
            and folded[-1][2] + 1 == run[1]
            and run[2] + 1 == runs[index + 1][1]
        ):
            following = runs[index + 1]
            folded[-1][2] = following[2]
            folded[-1][3] = [*folded[-1][3], run[0], *following[3]]
            index += 2
            continue
        folded.append(run)
        index += 1
    return folded


def _clip(rows: Iterable[Row], since_ms: int) -> list[Row]:
    # Spans begun before the range (clipped by the store) count from its first minute.
    first_minute = since_ms // MINUTE_MS
    return [row if row[MINUTE] >= first_minute else (first_minute, *row[1:]) for row in rows]


def spans(rows: Iterable[Row], since_ms: int, until_ms: int) -> list[Session]:
    """The sessions in [since, until), oldest first, without their contents (see `fill`)."""
    found = []
    for key, first, last, also in _runs(_primary_apps(_clip(rows, since_ms), since_ms, until_ms)):
        found.append(
            Session(
                start_ms=max(first * MINUTE_MS, since_ms),
                end_ms=min((last + 1) * MINUTE_MS, until_ms),
                app=key,
                key=key,
                first_minute=first,
                last_minute=last,
                also_keys=tuple(sorted(set(also) - {key})),
            )
        )
    return found


def fill(session: Session, rows: Iterable[Row], since_ms: int) -> Session:
    """Give a session its contents from the detailed rows of its minutes (other rows are ignored)."""
    names: dict[str, float] = {}
    also_names: set[str] = set()
    earliest = None
    key, also_keys = session.key, session.also_keys
    first_minute = max(session.first_minute, since_ms // MINUTE_MS)
    last_minute, end_ms = session.last_minute, session.end_ms
    counts, labels, pages, files = session.counts, session.labels, session.pages, session.files
    keys: dict[str | None, str] = {}
    events = 0
    start_ms = max(session.start_ms, since_ms)
    for row in rows:
        minute, kind, app, bundle, label, url, path, n, first, last = row[:TIMED]
        if minute < first_minute:
            if last <= start_ms:
                continue
            # A span begun before the session that goes on into it (a window event started at :42 holds most of
            # the next minute, whose session may be its app's): its time and title count here, its event where
            # it began.
            minute, n = first_minute, 0
        if not first_minute <= minute <= last_minute or kind in _MARKERS:
            continue
        row_key = keys.get(app)
        if row_key is None:
            row_key = keys[app] = app_key(app)
        inside = kind.startswith(INSIDE_PREFIXES)
        if app and row_key != key and not inside:
            if row_key in also_keys:
                also_names.add(app)
            continue
        covered = (last if last < end_ms else end_ms) - (first if first > start_ms else start_ms)
        weight = (covered if covered > 0 else 0) + 1000 * n
        if row_key == key:
            names[app] = names.get(app, 0) + weight + (0 if kind.startswith("browser.") else 1)
            if bundle and not session.bundle_id:
                session.bundle_id = bundle
            if n and (earliest is None or first < earliest):
                earliest = first
        if n:
            events += n
            counts[kind] = counts.get(kind, 0) + n
        if label and not inside:
            labels[label] = labels.get(label, 0) + weight
        if url:
            before = pages.get(url)
            pages[url] = (label or "", weight) if before is None else (before[0] or label or "", before[1] + weight)
        if path:
            files[path] = files.get(path, 0) + weight
    session.events += events
    session.app = max(names.items(), key=lambda item: item[1])[0] if names else key
    session.also = sorted(also_names)
    if earliest is not None and earliest > session.start_ms:
        session.start_ms = min(earliest, session.end_ms)
    return session


def build(rows: Iterable[Row], since_ms: int, until_ms: int) -> list[Session]:
    """The sessions in [since, until) with their contents, from detailed summary rows, oldest first."""
    rows = list(rows)
    return [fill(session, rows, since_ms) for session in spans(rows, since_ms, until_ms)]
