"""Sessions from the minute summary: runs of minutes where one app held the person's attention.

Each minute goes to the app with the most of it (seconds its events cover, plus a second per event);
an app keeps the minutes after a focus event until another app takes over, the person goes idle, or
half an hour passes with nothing. A one-minute switch between two stretches of the same app is folded
into them and noted.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
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


def app_key(name: str | None) -> str:
    """One key for the names an app goes by across watchers ("Google Chrome", "Google-chrome", "chrome.exe")."""
    if not name:
        return ""
    key = "".join(ch for ch in name.lower().removesuffix(".exe") if ch.isalnum())
    return _ALIASES.get(key, key)


@define
class Row:
    """One summary row: events of one kind in one minute (see Store.summary)."""

    minute: int
    type: str
    app: str | None
    bundle_id: str | None
    label: str | None
    url: str | None
    path: str | None
    n: int
    first_ms: int
    last_ms: int


@define
class Session:
    start_ms: int
    end_ms: int
    app: str
    bundle_id: str | None = None
    events: int = 0
    labels: Counter = field(factory=Counter)
    pages: dict[str, tuple[str, float]] = field(factory=dict)  # url -> (label, weight)
    files: Counter = field(factory=Counter)
    counts: Counter = field(factory=Counter)
    also: list[str] = field(factory=list)

    @property
    def title(self) -> str:
        for label, _weight in self.labels.most_common():
            if label:
                return label
        if self.files:
            return self.files.most_common(1)[0][0].rsplit("/", 1)[-1]
        return ""


def _idle_spans(rows: Sequence[Row], until_ms: int) -> list[tuple[int, int]]:
    """Idle stretches: an idle event with a duration, or an idle mark until the next sign of activity."""
    spans, open_at = [], None
    for row in sorted(rows, key=lambda r: r.first_ms):
        if row.type in IDLE_TYPES:
            if row.last_ms > row.first_ms:
                spans.append((row.first_ms, row.last_ms))
            elif open_at is None:
                open_at = row.first_ms
        elif open_at is not None and (row.type in ACTIVE_TYPES or (row.app and row.first_ms > open_at)):
            spans.append((open_at, row.first_ms))
            open_at = None
    if open_at is not None:
        spans.append((open_at, until_ms))
    return spans


def _idle_ms(spans: Sequence[tuple[int, int]], start: int, end: int) -> int:
    return sum(max(0, min(e, end) - max(s, start)) for s, e in spans)


def _primary_apps(rows: Sequence[Row], since_ms: int, until_ms: int) -> dict[int, str]:
    """minute -> the key of the app that held it; idle and empty minutes are absent."""
    by_minute: dict[int, list[Row]] = defaultdict(list)
    for row in rows:
        by_minute[row.minute].append(row)
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
        latest_focus = None
        for row in by_minute.get(minute, ()):
            if not row.app or row.type in IDLE_TYPES or row.type in ACTIVE_TYPES or row.type.startswith(INSIDE_PREFIXES):
                continue
            key = app_key(row.app)
            covered = max(0, min(row.last_ms, end) - max(row.first_ms, start))
            scores[key] += covered + 1000 * row.n
            if row.last_ms > end:
                carried[key] = max(carried.get(key, 0), row.last_ms)
            if row.type.startswith(FOCUS_PREFIXES) and (latest_focus is None or row.last_ms >= latest_focus[1]):
                latest_focus = (key, row.last_ms)
        if 2 * _idle_ms(idle, start, end) > end - start:
            held = None
            carried.clear()
            continue
        if latest_focus is not None:
            held = latest_focus
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


def build(rows: Iterable[tuple[Any, ...]], since_ms: int, until_ms: int) -> list[Session]:
    """The sessions in [since, until) from summary rows the gate kept, oldest first."""
    first_minute = since_ms // MINUTE_MS
    # Spans begun before the range (clipped by the store) count from its first minute.
    rows = [Row(max(row[0], first_minute), *row[1:]) for row in rows]
    primary = _primary_apps(rows, since_ms, until_ms)
    by_minute: dict[int, list[Row]] = defaultdict(list)
    for row in rows:
        by_minute[row.minute].append(row)
    sessions = []
    for key, first, last, also in _runs(primary):
        session = Session(
            start_ms=max(first * MINUTE_MS, since_ms),
            end_ms=min((last + 1) * MINUTE_MS, until_ms),
            app="",
        )
        names: Counter = Counter()
        also_names: set[str] = set()
        earliest = None
        for minute in range(first, last + 1):
            for row in by_minute.get(minute, ()):
                if row.type in IDLE_TYPES or row.type in ACTIVE_TYPES:
                    continue
                row_key = app_key(row.app)
                if row.app and row_key != key and not row.type.startswith(INSIDE_PREFIXES):
                    if row_key in also:
                        also_names.add(row.app)
                    continue
                weight = max(0, min(row.last_ms, session.end_ms) - max(row.first_ms, since_ms)) + 1000 * row.n
                if row_key == key:
                    names[row.app] += weight + (0 if row.type.startswith("browser.") else 1)
                    if row.bundle_id and not session.bundle_id:
                        session.bundle_id = row.bundle_id
                    if row.n and (earliest is None or row.first_ms < earliest):
                        earliest = row.first_ms
                session.events += row.n
                if row.n:
                    session.counts[row.type] += row.n
                if row.label and not row.type.startswith(INSIDE_PREFIXES):
                    session.labels[row.label] += weight
                if row.url:
                    label, before = session.pages.get(row.url, (row.label or "", 0))
                    session.pages[row.url] = (label or row.label or "", before + weight)
                if row.path:
                    session.files[row.path] += weight
        session.app = names.most_common(1)[0][0] if names else key
        session.also = sorted(also_names)
        if earliest is not None and earliest > session.start_ms:
            session.start_ms = min(earliest, session.end_ms)
        sessions.append(session)
    return sessions
