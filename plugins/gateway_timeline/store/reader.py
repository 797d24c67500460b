"""Reading the event store: events by range, their counts and groups, the values the gate judges, the summary."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Self

from gateway_timeline.envelope import PRIVATE_FORMS_VERSION
from gateway_timeline.rows import EVENT_COLUMNS as _EVENT_COLUMNS
from gateway_timeline.rows import EventRow
from gateway_timeline.store.schema import (
    _GROUP_COLUMNS,
    _TRAIT_INDEXES,
    MINUTE_MS,
    WHOLE_STORE_AFTER_MINUTES,
)


def type_clause(types: Sequence[str] | None) -> tuple[str, list[Any]]:
    """SQL for a list of exact types and `prefix.*` patterns (`*` alone is every type)."""
    if not types or "*" in types:
        return "", []
    parts, params = [], []
    for kind in types:
        if kind.endswith(".*"):
            prefix = kind[:-1]
            parts.append("(type >= ? AND type < ?)")
            params += [prefix, prefix[:-1] + "/"]  # '/' sorts right after '.'
        else:
            parts.append("type = ?")
            params.append(kind)
    return " AND (" + " OR ".join(parts) + ")", params


def filter_clause(
    types: Sequence[str] | None = None, app: str | None = None, bundle_id: str | None = None
) -> tuple[str, list[Any]]:
    sql, params = type_clause(types)
    if app:
        sql += " AND app = ? COLLATE NOCASE"
        params.append(app)
    if bundle_id:
        sql += " AND bundle_id = ?"
        params.append(bundle_id)
    return sql, params


class StoreReader:
    """One open store file, read; `StoreReader.reader(path)` opens it read-only for the tools (`Store` writes)."""


    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self.db = connection
        self.path = path
        self._touched: set[int] = set()
        self._indexed: bool | None = None
        self._has_labels: bool | None = None

    @property
    def indexed(self) -> bool:
        """Has the store schema 4's indexes (an older store, not yet upgraded by an import, has not)?"""
        if self._indexed is None:
            names = {row[0] for row in self.db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'minutes'")}
            self._indexed = all(name in names for name in _TRAIT_INDEXES)
        return self._indexed

    @property
    def has_labels(self) -> bool:
        """Has the store schema 5's table of titles (an older one, not yet upgraded by an import, has not)?"""
        if self._has_labels is None:
            self._has_labels = self.db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'labels'").fetchone() is not None
        return self._has_labels

    @property
    def private_labels_known(self) -> bool:
        """Are private windows' titles marked in the titles table with today's forms (an import of this version
        made or swept it)?"""
        return self.has_labels and self.meta("private_forms") == PRIVATE_FORMS_VERSION

    def private_labels(self) -> list[str]:
        """The titles marked private in the titles table (see `private_labels_known`)."""
        return [row[0] for row in self.db.execute("SELECT label FROM labels WHERE private = 1")]

    @classmethod
    def reader(cls, path: Path) -> Self | None:
        """Open read-only; None when nothing was ever imported (no file yet)."""
        if not path.exists():
            return None
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5, isolation_level=None)
        connection.execute("PRAGMA query_only = 1")
        try:
            connection.execute("SELECT 1 FROM events LIMIT 1")
        except sqlite3.OperationalError:
            connection.close()
            return None
        return cls(connection, path)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def meta(self, key: str, default: Any = None) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def events(
        self,
        since_ms: int,
        until_ms: int,
        where: str = "",
        params: Sequence[Any] = (),
        newest_first: bool = False,
    ) -> Iterator[EventRow]:
        """The events in [since, until) matching `where`, in time order."""
        order = "DESC" if newest_first else "ASC"
        return map(EventRow._make, self.db.execute(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE ts_ms >= ? AND ts_ms < ? AND private = 0{where} "
            f"ORDER BY ts_ms {order}, seq {order}",
            (since_ms, until_ms, *params),
        ))

    def _split(self, since_ms: int, until_ms: int) -> tuple[list[tuple[int, int]], tuple[int, int] | None]:
        """The range as its partial minutes (read from events) and its whole minutes (read from the summary)."""
        first_full = -(-since_ms // MINUTE_MS)
        last_full = until_ms // MINUTE_MS  # exclusive
        if first_full >= last_full:
            return [(since_ms, until_ms)], None
        edges = [(since_ms, first_full * MINUTE_MS), (last_full * MINUTE_MS, until_ms)]
        return [(a, b) for a, b in edges if a < b], (first_full, last_full)

    def count(self, since_ms: int, until_ms: int, where: str = "", params: Sequence[Any] = ()) -> int:
        """How many events in [since, until) match `where` (whole minutes counted from the summary)."""
        edges, full = self._split(since_ms, until_ms)
        total = 0
        for a, b in edges:
            total += self.db.execute(
                f"SELECT COUNT(*) FROM events WHERE ts_ms >= ? AND ts_ms < ? AND private = 0{where}", (a, b, *params)
            ).fetchone()[0]
        if full:
            table = "minutes" if where else "minute_apps"  # the same sums; the second has fewer rows
            total += self.db.execute(
                f"SELECT COALESCE(SUM(n), 0) FROM {table} WHERE minute >= ? AND minute < ?{where}", (*full, *params)
            ).fetchone()[0]
        return total

    def owner_groups(
        self, since_ms: int, until_ms: int, where: str = "", params: Sequence[Any] = ()
    ) -> list[tuple[str | None, str | None, str | None, str | None, int]]:
        """(app, url, path, label, count) of the events in the range: what the gate decides on, with how many."""
        edges, full = self._split(since_ms, until_ms)
        totals: dict[tuple[Any, ...], int] = {}
        queries = [
            (f"SELECT app, url, path, label, COUNT(*) FROM events WHERE ts_ms >= ? AND ts_ms < ? AND private = 0"
             f"{where} GROUP BY app, url, path, label", (a, b, *params))
            for a, b in edges
        ]
        if full:
            queries.append(
                (f"SELECT app, url, path, label, SUM(n) FROM minutes WHERE minute >= ? AND minute < ?{where} "
                 "GROUP BY app, url, path, label", (*full, *params))
            )
        for sql, values in queries:
            for *traits, n in self.db.execute(sql, values):
                totals[tuple(traits)] = totals.get(tuple(traits), 0) + n
        return [(*traits, n) for traits, n in totals.items()]

    def distinct(
        self, column: str, since_ms: int, until_ms: int, where: str = "", params: Sequence[Any] = ()
    ) -> list[Any]:
        """The distinct values of an events column in the range (from the summary, whole minutes around it)."""
        return [row[0] for row in self.db.execute(
            f"SELECT DISTINCT {column} FROM minutes WHERE minute >= ? AND minute <= ? AND {column} IS NOT NULL{where}",
            (since_ms // MINUTE_MS, until_ms // MINUTE_MS, *params),
        )]

    def trait_values(self, column: str, since_ms: int, until_ms: int, reach_back: bool = False) -> list[str]:
        """Values of `column` (app, url or path) that the rows read for [since, until) may hold, and maybe more.

        A superset is all the gate needs to name the closed ones: the values of the whole minutes around the
        range, and with `reach_back` of the hour before it too (`summary` gives the spans begun there that reach
        into the range); for a long range, URLs and paths are read from their indexes over the whole store (a few
        thousand values, read from the index alone) rather than from every row of the range.
        """
        low, high = since_ms // MINUTE_MS - (60 if reach_back else 0), until_ms // MINUTE_MS
        if column == "app":
            sql = "SELECT DISTINCT app FROM minute_apps WHERE minute >= ? AND minute <= ? AND app IS NOT NULL"
            return [row[0] for row in self.db.execute(sql, (low, high))]
        if column == "label" and high - low > WHOLE_STORE_AFTER_MINUTES and self.has_labels:
            return [row[0] for row in self.db.execute("SELECT label FROM labels")]
        if column not in ("url", "path", "label"):
            raise ValueError(f"no trait column {column!r}")
        if self.indexed and high - low > WHOLE_STORE_AFTER_MINUTES:
            return [row[0] for row in self.db.execute(f"SELECT DISTINCT {column} FROM minutes WHERE {column} IS NOT NULL")]
        return [row[0] for row in self.db.execute(
            f"SELECT DISTINCT {column} FROM minutes WHERE minute >= ? AND minute <= ? AND {column} IS NOT NULL",
            (low, high),
        )]

    def page_titles(
        self, since_ms: int, until_ms: int, apps: Sequence[str], urls: Sequence[str], paths: Sequence[str],
        labels: Sequence[str] = (),
    ) -> list[str]:
        """Titles of the pages (rows with a URL) in the whole minutes around [since, until) that have one of these
        apps, URLs, paths or titles."""
        low, high = since_ms // MINUTE_MS, until_ms // MINUTE_MS
        chosen = [(column, json.dumps(list(values))) for column, values in (("url", urls), ("app", apps), ("path", paths),
                                                                           ("label", labels)) if values]
        if not chosen:
            return []
        rows = "minutes WHERE minute >= ? AND minute <= ? AND url IS NOT NULL AND label IS NOT NULL"
        if self.indexed:
            # One part per column, each read through its column's index (the app's: the (minute, type, app) one).
            sql = " UNION ".join(f"SELECT label FROM {rows} AND {column} IN (SELECT value FROM json_each(?))"
                                 for column, _values in chosen)
            params = [value for _column, values in chosen for value in (low, high, values)]
        else:  # one pass over the range rather than one per column
            sql = f"SELECT DISTINCT label FROM {rows} AND (" + " OR ".join(
                f"IFNULL({column} IN (SELECT value FROM json_each(?)), 0)" for column, _values in chosen) + ")"
            params = [low, high, *(values for _column, values in chosen)]
        return [row[0] for row in self.db.execute(sql, params)]

    def labels_beginning(self, titles: Sequence[str], since_ms: int, until_ms: int) -> list[str]:
        """The titles (labels) in the whole minutes around [since, until) that begin with one of `titles`."""
        low, high = since_ms // MINUTE_MS, until_ms // MINUTE_MS
        prefixes = tuple(titles)
        if not prefixes:
            return []
        if not self.indexed:
            return [label for label in self.distinct("label", since_ms, until_ms) if label.startswith(prefixes)]
        # Labels beginning with a title sort from it up to (not including) the string after all of those: one
        # range of the title index per title, all in one statement.
        bounds = [(title, _following(title)) for title in sorted(set(prefixes))]
        found: set[str] = set()
        for rows in (
            self.db.execute(
                "SELECT DISTINCT m.label FROM json_each(?) AS t JOIN minutes AS m ON m.label >= "
                "json_extract(t.value, '$[0]') AND m.label < json_extract(t.value, '$[1]') "
                "WHERE m.minute >= ? AND m.minute <= ?",
                (json.dumps([bound for bound in bounds if bound[1] is not None]), low, high),
            ),
            *(self.db.execute(
                "SELECT DISTINCT label FROM minutes WHERE label >= ? AND minute >= ? AND minute <= ?", (title, low, high)
            ) for title, following in bounds if following is None),
        ):
            found.update(label for (label,) in rows if label.startswith(prefixes))
        return sorted(found)

    def summary(
        self, since_ms: int, until_ms: int, coarse: bool = False, where: str = "", params: Sequence[Any] = ()
    ) -> list[tuple[Any, ...]]:
        """Summary rows (minute, type, app, bundle_id, label, url, path, n, first_ms, last_ms, timed) for
        [since, until).

        Whole minutes come from the summary table; the partial minutes at either end are grouped from the
        events themselves, and spans begun in the hour before `since` that reach into it come clipped, with
        no count (their events are outside the range). `coarse` rows are per (minute, type, app) only, with
        no label, URL or path: enough to find sessions, and many fewer (with `where`, grouped as they are read:
        the (minute, type, app) index gives them in that order).
        """
        first_full = -(-since_ms // MINUTE_MS)
        last_full = until_ms // MINUTE_MS  # exclusive
        if coarse:
            columns = "minute, type, app, MAX(bundle_id), NULL, NULL, NULL"
            group = " GROUP BY minute, type, app"
            totals = "SUM(n), MIN(first_ms), MAX(last_ms), MAX(timed)"
        else:
            columns, group, totals = f"minute, {_GROUP_COLUMNS}", "", "n, first_ms, last_ms, timed"
        rows: list[tuple[Any, ...]] = [
            (*row[:7], 0, since_ms, row[9], row[10])
            for row in self.db.execute(
                f"SELECT {columns}, {totals} FROM minutes WHERE minute >= ? AND minute < ? AND last_ms > ? "
                f"AND first_ms < ?{where}{group}",
                (since_ms // MINUTE_MS - 60, first_full, since_ms, since_ms, *params),
            )
        ]
        if first_full > last_full:  # the whole range sits inside one minute
            return rows + self._grouped(since_ms, until_ms, coarse, where, params)
        rows += self._grouped(since_ms, first_full * MINUTE_MS, coarse, where, params)
        if coarse and not where:  # summed ahead of time, at import
            sql = ("SELECT minute, type, app, bundle_id, NULL, NULL, NULL, n, first_ms, last_ms, timed "
                   "FROM minute_apps WHERE minute >= ? AND minute < ?")
            rows += self.db.execute(sql, (first_full, last_full)).fetchall()
        else:
            sql = f"SELECT {columns}, {totals} FROM minutes WHERE minute >= ? AND minute < ?{where}{group}"
            rows += self.db.execute(sql, (first_full, last_full, *params)).fetchall()
        rows += self._grouped(last_full * MINUTE_MS, until_ms, coarse, where, params)
        return rows

    def _grouped(
        self, since_ms: int, until_ms: int, coarse: bool = False, where: str = "", params: Sequence[Any] = ()
    ) -> list[tuple[Any, ...]]:
        if since_ms >= until_ms:
            return []
        keys = "type, app" if coarse else _GROUP_COLUMNS
        columns = "type, app, MAX(bundle_id), NULL, NULL, NULL" if coarse else _GROUP_COLUMNS
        return self.db.execute(
            f"SELECT ts_ms / {MINUTE_MS}, {columns}, COUNT(*), MIN(ts_ms), MAX(COALESCE(end_ms, ts_ms)), "
            f"MAX(end_ms IS NOT NULL) FROM events WHERE ts_ms >= ? AND ts_ms < ? AND private = 0{where} "
            f"GROUP BY ts_ms / {MINUTE_MS}, {keys}",
            (since_ms, until_ms, *params),
        ).fetchall()

    def bounds(self) -> tuple[int | None, int | None]:
        """The oldest and newest event times (ms), or Nones for an empty store."""
        oldest = self.db.execute("SELECT MIN(ts_ms) FROM events").fetchone()[0]
        newest = self.db.execute("SELECT MAX(ts_ms) FROM events").fetchone()[0]
        return oldest, newest

    def event_by_id(self, event_id: str) -> EventRow | None:
        """One event, by its id."""
        found = self.db.execute(f"SELECT {_EVENT_COLUMNS} FROM events WHERE id = ?", (event_id,)).fetchone()
        return None if found is None else EventRow._make(found)

    def seen_types(self) -> list[str]:
        return [row[0] for row in self.db.execute("SELECT type FROM seen_types ORDER BY type")]


def _following(text: str) -> str | None:
    """The least string greater than every string beginning with `text` (None when there is none to write)."""
    for cut in range(len(text) - 1, -1, -1):
        code = ord(text[cut]) + 1
        if code == 0xD800:
            code = 0xE000  # surrogates are no characters: SQLite's text (UTF-8) cannot hold them
        if code <= 0x10FFFF:
            return text[:cut] + chr(code)
    return None
