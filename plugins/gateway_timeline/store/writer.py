"""Writing the event store: the importers' side (add events, bring the minute summary up to date, prune, meta)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from gateway_timeline.envelope import (
    PRIVATE_FORMS_VERSION,
    PRIVATE_TITLE_WORDS,
    envelope_of,
    is_private,
    is_private_title,
)
from gateway_timeline.rows import EVENT_COLUMNS as _EVENT_COLUMNS
from gateway_timeline.rows import FORMAT_ENVELOPE, EventRow
from gateway_timeline.store.reader import StoreReader
from gateway_timeline.store.schema import (
    _FILL_LABELS,
    _GROUP_COLUMNS,
    _REBUILT_IN_BULK,
    BULK_MINUTES,
    MINUTE_MS,
    SCHEMA,
    SCHEMA_VERSION,
    _private_file,
)


class Store(StoreReader):
    """One open store file, to write: `Store.open(path)` for the importers (`Store.reader(path)` for the tools)."""

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

    # --- writing -----------------------------------------------------------------------------------

    def begin(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def add(self, rows: Iterable[EventRow], count_new: bool = False) -> int:
        """Insert or replace events (same id = same event, so re-imports add nothing); how many rows, or with
        `count_new` how many events the store did not hold yet."""
        rows = list(rows)
        if not rows:
            return 0
        self._touched.update({row[1] // MINUTE_MS for row in rows})  # ts_ms (a plain tuple in EventRow's order too)
        new = len(rows)
        if count_new:
            # Looked up by the id's unique index before the rows replace them (about a sixth more time at import,
            # so only for an importer that says what was already there: ActivityWatch's cursor tells it).
            ids = {row[0] for row in rows}
            new = len(ids) - self.db.execute(
                "SELECT COUNT(*) FROM events WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(list(ids)),)
            ).fetchone()[0]
        self.db.executemany(
            f"INSERT OR REPLACE INTO events ({_EVENT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows
        )
        return new

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
            (seq, row.ts_ms) for seq, row in (
                (found[0], EventRow._make(found[1:])) for found in self.db.execute(
                    f"SELECT seq, {_EVENT_COLUMNS} FROM events WHERE private = 0 AND ({like})", words * 3))
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


def row_of(envelope: Mapping[str, Any], ts_ms: int, end_ms: int | None, traits: Mapping[str, Any]) -> EventRow:
    """The row `Store.add` takes for one envelope; its private flag comes from the envelope itself."""
    return EventRow(
        id=envelope["id"],
        ts_ms=ts_ms,
        end_ms=end_ms,
        type=envelope["type"],
        source=envelope.get("source"),
        app=traits["app"],
        bundle_id=traits["bundle_id"],
        label=traits["label"],
        url=traits["url"],
        path=traits["path"],
        private=1 if is_private(envelope) else 0,
        format=FORMAT_ENVELOPE,
        body=json.dumps(envelope, ensure_ascii=False, separators=(",", ":")),
    )
