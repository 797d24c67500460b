"""The event store: one SQLite file of envelopes, indexed by time, with a per-minute summary for timelines.

`events` keeps each envelope as the recorder wrote it plus the traits the gate routes on; `minutes` holds,
for each minute, one row per (type, app, label, URL, path) with a count and the span covered, so a day's
timeline reads thousands of rows rather than millions. Importers write; the tools only read.

Schema 5 added the table `labels` (every distinct title), filled when an import upgrades the store. Schema 4
added indexes only (no data changed): `minutes` by (minute, type, app), which lets the per-(minute,
type, app) sums be read without sorting, and by URL, title and file path, which let the gate's closed values
be found without reading every row of a range. A store of schema 3 is upgraded in place the next time an
importer opens it (`gateway timeline import ...` or `ingest`; a few seconds for a week of heavy use); until
then the tools read it as before, only slower (`Store.indexed` says which).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from gateway_timeline.envelope import PRIVATE_FORMS_VERSION, PRIVATE_TITLE_WORDS, is_private, is_private_title

SCHEMA_VERSION = 5
SCHEMA = """
PRAGMA journal_mode = WAL;
BEGIN IMMEDIATE;  -- an upgrade (new indexes) is done whole or not at all
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    ts_ms INTEGER NOT NULL,
    end_ms INTEGER,
    type TEXT NOT NULL,
    source TEXT,
    app TEXT,
    bundle_id TEXT,
    label TEXT,
    url TEXT,
    path TEXT,
    private INTEGER NOT NULL DEFAULT 0,
    format INTEGER NOT NULL DEFAULT 0,  -- what body holds: 0 the envelope as JSON, 1 ActivityWatch's event data
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_time ON events (ts_ms);
CREATE TABLE IF NOT EXISTS minutes (
    minute INTEGER NOT NULL,
    type TEXT NOT NULL,
    app TEXT,
    bundle_id TEXT,
    label TEXT,
    url TEXT,
    path TEXT,
    n INTEGER NOT NULL,
    first_ms INTEGER NOT NULL,
    last_ms INTEGER NOT NULL,
    timed INTEGER NOT NULL DEFAULT 0  -- 1 when the events carry durations (ActivityWatch), 0 for points
);
-- Within a minute, rows are written by one grouped INSERT, so their rowid order is (type, app, ...) order:
-- read through this index they come in the same order as by (minute, rowid).
CREATE INDEX IF NOT EXISTS minutes_by_group ON minutes (minute, type, app);
CREATE INDEX IF NOT EXISTS minutes_by_url ON minutes (url, minute) WHERE url IS NOT NULL;
CREATE INDEX IF NOT EXISTS minutes_by_label ON minutes (label, minute) WHERE label IS NOT NULL;
CREATE INDEX IF NOT EXISTS minutes_by_path ON minutes (path, minute) WHERE path IS NOT NULL;
DROP INDEX IF EXISTS minutes_by_minute;  -- schema 3's; minutes_by_group serves its queries
CREATE TABLE IF NOT EXISTS minute_apps (  -- minutes summed per (type, app): what finding sessions needs
    minute INTEGER NOT NULL,
    type TEXT NOT NULL,
    app TEXT,
    bundle_id TEXT,
    n INTEGER NOT NULL,
    first_ms INTEGER NOT NULL,
    last_ms INTEGER NOT NULL,
    timed INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS minute_apps_by_minute ON minute_apps (minute);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cursors (
    origin TEXT NOT NULL,
    bucket TEXT NOT NULL,
    last_id INTEGER NOT NULL,
    app_before TEXT,
    PRIMARY KEY (origin, bucket)
);
CREATE TABLE IF NOT EXISTS seen_types (type TEXT PRIMARY KEY);
-- Every distinct title of `minutes` (schema 5): what the gate and the private-window forms judge titles from,
-- read whole for a long range rather than from every row of it; private windows' titles marked at import. Kept up by `commit`, emptied of gone titles by
-- `prune` (a title outlives its events no longer than they are kept).
CREATE TABLE IF NOT EXISTS labels (
    label TEXT PRIMARY KEY,
    private INTEGER NOT NULL DEFAULT 0  -- a private window's title, by the forms of meta private_forms
) WITHOUT ROWID;
{fill}PRAGMA user_version = {version};
COMMIT;
"""
_FILL_LABELS = ("INSERT OR IGNORE INTO labels SELECT DISTINCT label, private_title(label) FROM minutes "
                "WHERE label IS NOT NULL;\n")
_TRAIT_INDEXES = ("minutes_by_group", "minutes_by_url", "minutes_by_label", "minutes_by_path")
_REBUILT_IN_BULK = ("minutes_by_url", "minutes_by_label", "minutes_by_path")
BULK_MINUTES = 7 * 24 * 60  # rebuilding more minutes than a week's, those indexes are made again rather than kept up

MINUTE_MS = 60_000
WHOLE_STORE_AFTER_MINUTES = 6 * 60  # past this, a column's values are read from its index rather than the range
_EVENT_COLUMNS = "id, ts_ms, end_ms, type, source, app, bundle_id, label, url, path, private, format, body"
FORMAT_ENVELOPE, FORMAT_ACTIVITYWATCH = 0, 1
_GROUP_COLUMNS = "type, app, bundle_id, label, url, path"


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


class Store:
    """One open store file; `Store.open(path)` for the importers, `Store.reader(path)` for the tools."""

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
    def open(cls, path: Path, own_folder: bool = False) -> Store:
        """Open (creating it and its folder if needed) for writing; the store is the person's alone. With
        `own_folder` (the plugin's data folder, not one the person chose), that folder is made 0700 too."""
        _private_file(path)
        if own_folder and path.parent.stat().st_mode & 0o077:
            os.chmod(path.parent, 0o700)
        connection = sqlite3.connect(path, timeout=30, isolation_level=None)
        connection.create_function("private_title", 1, lambda title: int(is_private_title(title)), deterministic=True)
        before = connection.execute("PRAGMA user_version").fetchone()[0]
        # A store older than schema 5 gets its titles table filled in the same transaction as it is made.
        fill = _FILL_LABELS if 0 < before < 5 else ""
        connection.executescript(SCHEMA.format(fill=fill, version=SCHEMA_VERSION))
        connection.execute("PRAGMA synchronous = NORMAL")
        _private_file(path)  # the -wal and -shm files now exist
        return cls(connection, path)

    @classmethod
    def reader(cls, path: Path) -> Store | None:
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

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing -----------------------------------------------------------------------------------

    def begin(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def add(self, rows: Iterable[tuple[Any, ...]]) -> int:
        """Insert or replace rows shaped like `_EVENT_COLUMNS` (same id = same event, so re-imports add nothing)."""
        rows = list(rows)
        self._touched.update({row[1] // MINUTE_MS for row in rows})
        self.db.executemany(
            f"INSERT OR REPLACE INTO events ({_EVENT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows
        )
        return len(rows)

    def commit(self) -> None:
        """Bring the minute summary up to date for what was added, note the types seen, and commit."""
        # Rebuilding many minutes (a first import, weeks of ActivityWatch history), the indexes by URL, title and
        # path are made again once at the end, from sorted rows, rather than kept up row by row; in the same
        # transaction, so an import that fails leaves them as they were.
        rebuilt = [] if len(self._touched) < BULK_MINUTES else [
            (name, sql) for name, sql in self.db.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'minutes' AND name IN "
                f"({', '.join('?' * len(_REBUILT_IN_BULK))})", _REBUILT_IN_BULK)
        ]
        if rebuilt and not self.db.in_transaction:
            self.begin()
        for name, _sql in rebuilt:
            self.db.execute(f"DROP INDEX {name}")
        # Nearby runs are rebuilt together: one grouped statement is far cheaper than many small ones.
        for first, last in _runs(sorted(self._touched), join_within=120):
            self.db.execute("DELETE FROM minutes WHERE minute BETWEEN ? AND ?", (first, last))
            self.db.execute(
                f"INSERT INTO minutes (minute, {_GROUP_COLUMNS}, n, first_ms, last_ms, timed) "
                f"SELECT ts_ms / {MINUTE_MS}, {_GROUP_COLUMNS}, COUNT(*), MIN(ts_ms), MAX(COALESCE(end_ms, ts_ms)), "
                "MAX(end_ms IS NOT NULL) "
                f"FROM events WHERE ts_ms >= ? AND ts_ms < ? AND private = 0 "
                f"GROUP BY ts_ms / {MINUTE_MS}, {_GROUP_COLUMNS}",
                (first * MINUTE_MS, (last + 1) * MINUTE_MS),
            )
            self.db.execute("DELETE FROM minute_apps WHERE minute BETWEEN ? AND ?", (first, last))
            self.db.execute(
                "INSERT INTO minute_apps SELECT minute, type, app, MAX(bundle_id), SUM(n), MIN(first_ms), "
                "MAX(last_ms), MAX(timed) FROM minutes WHERE minute BETWEEN ? AND ? GROUP BY minute, type, app",
                (first, last),
            )
            self.db.execute(
                "INSERT OR IGNORE INTO seen_types (type) SELECT DISTINCT type FROM minutes "
                "WHERE minute BETWEEN ? AND ?",
                (first, last),
            )
            self.db.execute(
                "INSERT OR IGNORE INTO labels SELECT DISTINCT label, private_title(label) FROM minutes "
                "WHERE minute BETWEEN ? AND ? AND label IS NOT NULL",
                (first, last),
            )
        for _name, sql in rebuilt:
            self.db.execute(sql)
        self._touched.clear()
        if self.db.in_transaction:
            self.db.execute("COMMIT")

    def rebuild(self, since_ms: int, until_ms: int) -> None:
        """Recompute the minute summary over a range (after events were written by something else than `add`)."""
        self._touched.update(range(since_ms // MINUTE_MS, until_ms // MINUTE_MS + 1))
        self.commit()

    def prune(self, before_ms: int) -> int:
        """Forget events older than `before_ms` (the retention limit); the count forgotten."""
        gone = self.db.execute("DELETE FROM events WHERE ts_ms < ?", (before_ms,)).rowcount
        self.db.execute("DELETE FROM minutes WHERE minute < ?", (before_ms // MINUTE_MS,))
        self.db.execute("DELETE FROM minute_apps WHERE minute < ?", (before_ms // MINUTE_MS,))
        if gone:
            self._touched.add(before_ms // MINUTE_MS)
            self.db.execute("DELETE FROM labels WHERE label NOT IN (SELECT label FROM minutes WHERE label IS NOT NULL)")
        return gone

    def forget_private(self) -> int:
        """Delete the stored events that today's private-window forms recognise (once per version of the forms):
        a store filled before the importers knew a form keeps none of its events. The count deleted."""
        if self.meta("private_forms") == PRIVATE_FORMS_VERSION:
            return 0
        words = [f"%{word}%" for word in PRIVATE_TITLE_WORDS]
        like = " OR ".join(f"{column} LIKE ?" for column in ("label", "app", "body") for _word in words)
        doomed = [
            (seq, row[1]) for seq, *row in self.db.execute(
                f"SELECT seq, {_EVENT_COLUMNS} FROM events WHERE private = 0 AND ({like})", words * 3)
            if is_private(envelope_of(row))
        ]
        self.db.executemany("DELETE FROM events WHERE seq = ?", [(seq,) for seq, _ts in doomed])
        self._touched.update(ts // MINUTE_MS for _seq, ts in doomed)
        self.db.execute("UPDATE labels SET private = private_title(label)")
        self.set_meta("private_forms", PRIVATE_FORMS_VERSION)
        return len(doomed)

    def set_meta(self, key: str, value: Any) -> None:
        self.db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, json.dumps(value)),
        )

    def add_to_counter(self, key: str, amount: int) -> None:
        self.set_meta(key, int(self.meta(key, 0)) + amount)

    def cursor(self, origin: str, bucket: str) -> tuple[int, str | None]:
        row = self.db.execute(
            "SELECT last_id, app_before FROM cursors WHERE origin = ? AND bucket = ?", (origin, bucket)
        ).fetchone()
        return (row[0], row[1]) if row else (0, None)

    def set_cursor(self, origin: str, bucket: str, last_id: int, app_before: str | None) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO cursors (origin, bucket, last_id, app_before) VALUES (?, ?, ?, ?)",
            (origin, bucket, last_id, app_before),
        )

    # --- reading -----------------------------------------------------------------------------------

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
    ) -> Iterator[tuple[Any, ...]]:
        """Rows (`_EVENT_COLUMNS`) of the events in [since, until) matching `where`, in time order."""
        order = "DESC" if newest_first else "ASC"
        return self.db.execute(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE ts_ms >= ? AND ts_ms < ? AND private = 0{where} "
            f"ORDER BY ts_ms {order}, seq {order}",
            (since_ms, until_ms, *params),
        )

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

    def event_by_id(self, event_id: str) -> tuple[Any, ...] | None:
        """The row (`_EVENT_COLUMNS`) of one event."""
        return self.db.execute(f"SELECT {_EVENT_COLUMNS} FROM events WHERE id = ?", (event_id,)).fetchone()

    def seen_types(self) -> list[str]:
        return [row[0] for row in self.db.execute("SELECT type FROM seen_types ORDER BY type")]


def envelope_of(row: Sequence[Any]) -> dict[str, Any]:
    """The envelope of a stored row (`_EVENT_COLUMNS`), whichever way its body was kept."""
    if row[11] == FORMAT_ACTIVITYWATCH:
        from gateway_timeline.importers.activitywatch import envelope_of_row

        return envelope_of_row(row)
    return json.loads(row[12])


def _private_file(path: Path) -> None:
    """Make the store's folders (0700, those it creates) and the store (0600) before SQLite opens it, and bring an
    existing store, its -wal and -shm files back to 0600.

    SQLite gives the -wal and -shm files the mode of the database file, so a store made 0600 keeps them 0600; one
    made by an older version (0644 in a 0755 folder) is tightened here.
    """
    missing = [folder for folder in (path.parent, *path.parent.parents) if not folder.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)
    if not path.exists():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            if file.stat().st_mode & 0o077:
                os.chmod(file, 0o600)
        except FileNotFoundError:
            pass


def _following(text: str) -> str | None:
    """The least string greater than every string beginning with `text` (None when there is none to write)."""
    for cut in range(len(text) - 1, -1, -1):
        code = ord(text[cut]) + 1
        if code == 0xD800:
            code = 0xE000  # surrogates are no characters: SQLite's text (UTF-8) cannot hold them
        if code <= 0x10FFFF:
            return text[:cut] + chr(code)
    return None


def _runs(values: Sequence[int], join_within: int = 1) -> Iterator[tuple[int, int]]:
    """Runs in sorted integers, joining those less than `join_within` apart: [1, 2, 3, 7] -> (1, 3), (7, 7)."""
    start = previous = None
    for value in values:
        if start is None:
            start = previous = value
        elif value - previous <= join_within:
            previous = value
        else:
            yield start, previous
            start = previous = value
    if start is not None:
        yield start, previous


def row_of(envelope: Mapping[str, Any], ts_ms: int, end_ms: int | None, traits: Mapping[str, Any]) -> tuple:
    """The row `Store.add` takes for one envelope; its private flag comes from the envelope itself."""
    private = is_private(envelope)
    return (
        envelope["id"],
        ts_ms,
        end_ms,
        envelope["type"],
        envelope.get("source"),
        traits["app"],
        traits["bundle_id"],
        traits["label"],
        traits["url"],
        traits["path"],
        1 if private else 0,
        FORMAT_ENVELOPE,
        json.dumps(envelope, ensure_ascii=False, separators=(",", ":")),
    )
