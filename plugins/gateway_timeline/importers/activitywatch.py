"""ActivityWatch's database (aw-server's peewee SQLite or aw-server-rust's SQLite) into the event store.

Read-only, incremental (a cursor per bucket) and idempotent (an event's id is its bucket and row id, so a
re-read replaces it): ActivityWatch grows the newest event of a bucket in place as heartbeats arrive, so
each run reads again from the last row it saw. Window, AFK, web and editor buckets are taken; private
(incognito) browser events are dropped here and never stored, whether the web watcher flagged them or a
window's title or app says so (envelope.is_private_title, is_private_app).
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from attrs import define, field

from gateway_timeline.envelope import is_private_app, is_private_title
from gateway_timeline.rows import FORMAT_ACTIVITYWATCH, EventRow
from gateway_timeline.store import Store

BATCH = 5000
BROWSERS = {
    "chrome": "Google Chrome",
    "chromium": "Chromium",
    "firefox": "Firefox",
    "edge": "Microsoft Edge",
    "brave": "Brave",
    "vivaldi": "Vivaldi",
    "opera": "Opera",
    "safari": "Safari",
    "arc": "Arc",
}
TAKEN_TYPES = ("currentwindow", "afkstatus", "web.tab.current", "app.editor.activity")


class ActivityWatchError(Exception):
    """The file is not an ActivityWatch database we can read; the message says why."""


@define
class ImportReport:
    flavour: str = ""
    imported: dict[str, int] = field(factory=dict)  # new rows read per bucket (a grown last row is not new)
    skipped_buckets: dict[str, str] = field(factory=dict)
    private_dropped: int = 0
    too_old: int = 0
    pruned: int = 0
    newest_end_ms: int | None = None

    @property
    def total(self) -> int:
        return sum(self.imported.values())


def open_readonly(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise ActivityWatchError(f"no ActivityWatch database at {path}")
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
        flavour(connection)
    except sqlite3.DatabaseError as error:
        raise ActivityWatchError(f"{path} cannot be read as SQLite: {error}") from error
    return connection


def flavour(connection: sqlite3.Connection) -> str:
    """'rust' (aw-server-rust: buckets, events) or 'peewee' (aw-server: bucketmodel, eventmodel)."""
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if {"buckets", "events"} <= tables:
        return "rust"
    if {"bucketmodel", "eventmodel"} <= tables:
        return "peewee"
    raise ActivityWatchError("this SQLite file has neither aw-server-rust's nor aw-server's tables")


def _buckets(connection: sqlite3.Connection, kind: str) -> list[tuple[int, str, str, str]]:
    """(row key, bucket id, type, client) for every bucket."""
    if kind == "rust":
        return connection.execute("SELECT id, name, type, client FROM buckets ORDER BY id").fetchall()
    return connection.execute("SELECT key, id, type, client FROM bucketmodel ORDER BY key").fetchall()


def _peewee_ms(value: Any) -> int:
    if isinstance(value, int | float):
        return int(value * 1000)
    moment = datetime.fromisoformat(str(value))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # aw-server writes UTC
    return int(moment.timestamp() * 1000)


def _rows(connection: sqlite3.Connection, kind: str, bucket_key: int, from_id: int):
    """(row id, start ms, end ms, data JSON) of a bucket's events from `from_id` on, in row order."""
    if kind == "rust":
        cursor = connection.execute(
            "SELECT id, starttime, endtime, data FROM events WHERE bucketrow = ? AND id >= ? ORDER BY id",
            (bucket_key, from_id),
        )
        while batch := cursor.fetchmany(BATCH):
            yield [(i, s // 1_000_000, e // 1_000_000, d) for i, s, e, d in batch]
    else:
        cursor = connection.execute(
            "SELECT id, timestamp, duration, datastr FROM eventmodel WHERE bucket_id = ? AND id >= ? ORDER BY id",
            (bucket_key, from_id),
        )
        while batch := cursor.fetchmany(BATCH):
            out = []
            for i, stamp, duration, data in batch:
                start = _peewee_ms(stamp)
                out.append((i, start, start + int(float(duration or 0) * 1000), data))
            yield out


def _browser_of(bucket: str, client: str) -> str:
    found = re.search(r"aw-watcher-web-([a-z]+)", bucket) or re.search(r"aw-watcher-web-([a-z]+)", client)
    name = found.group(1) if found else "browser"
    return BROWSERS.get(name, name.capitalize())


def _editor_of(client: str) -> str:
    return client.removeprefix("aw-watcher-").split("_")[0] or "editor"


def import_database(
    path: Path,
    store: Store,
    *,
    now_ms: int | None = None,
    retention_ms: int,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Import what is new in the ActivityWatch database at `path` into `store`; a report of what was done."""
    now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
    oldest_ms = now_ms - retention_ms
    origin = str(path.resolve())
    connection = open_readonly(path)
    report = ImportReport(flavour=flavour(connection))
    try:
        store.begin()
        store.forget_private()  # not in private_dropped, which counts what this import read
        for key, bucket, kind, client in _buckets(connection, report.flavour):
            if kind not in TAKEN_TYPES:
                report.skipped_buckets[bucket] = kind
                continue
            report.imported[bucket] = _import_bucket(
                connection, report, store, origin, key, bucket, kind, client, oldest_ms, progress
            )
        report.pruned = store.prune(oldest_ms)
        store.commit()
    except BaseException:
        if store.db.in_transaction:
            store.db.execute("ROLLBACK")
        raise
    finally:
        connection.close()
    return report


def _import_bucket(connection, report, store, origin, key, bucket, kind, client, oldest_ms, progress) -> int:
    """Read one bucket from its cursor on; how many new rows were read."""
    last_id, app_before = store.cursor(origin, bucket)
    source = f"activitywatch/{bucket}"
    browser = _browser_of(bucket, client) if kind == "web.tab.current" else None
    editor = _editor_of(client) if kind == "app.editor.activity" else None
    previous_app, count, first_new = app_before, 0, last_id + 1 if last_id else 0
    for batch in _rows(connection, report.flavour, key, last_id):
        rows = []
        for row_id, start_ms, end_ms, raw in batch:
            # Remember the app before this row first: the next run reads the last row again.
            app_before, last_id = previous_app, row_id
            if report.newest_end_ms is None or end_ms > report.newest_end_ms:
                report.newest_end_ms = end_ms
            try:
                data = json.loads(raw)
            except (TypeError, ValueError):
                continue
            if not isinstance(data, dict):
                continue
            private = (
                data.get("incognito") is True
                or (isinstance(data.get("title"), str) and is_private_title(data["title"]))
                or (kind == "currentwindow" and isinstance(data.get("app"), str) and is_private_app(data["app"]))
                or (browser is not None and is_private_app(browser))
            )
            if private or end_ms < oldest_ms:
                if row_id >= first_new:  # the row read again (see the cursor) was counted by the run before
                    if private:
                        report.private_dropped += 1
                    else:
                        report.too_old += 1
                if kind == "currentwindow":
                    previous_app = str(data.get("app") or "unknown")
                continue
            event_id = f"aw:{bucket}:{row_id}"
            app_name = label = url = path = None
            if kind == "currentwindow":
                app_name = str(data.get("app") or "unknown")
                title = data.get("title")
                label = title if isinstance(title, str) else ""
                url = data.get("url") if isinstance(data.get("url"), str) else None
                event_type = "window.focus" if app_name == previous_app else "app.focus"
                previous_app = app_name
            elif kind == "afkstatus":
                event_type = "user.idle" if data.get("status") == "afk" else "user.active"
            elif kind == "web.tab.current":
                app_name = browser
                url = data.get("url") if isinstance(data.get("url"), str) else None
                label = data.get("title") if isinstance(data.get("title"), str) else ""
                event_type = "browser.navigate"
            else:
                app_name = editor
                path = data.get("file") if isinstance(data.get("file"), str) else None
                label = Path(path).name if path else None
                event_type = "editor.activity"
            # ActivityWatch's own data is kept as it came; the envelope is made when the event is read.
            rows.append(EventRow(event_id, start_ms, end_ms, event_type, source, app_name, None, label, url, path, 0,
                                 FORMAT_ACTIVITYWATCH, raw))
        store.add(rows)
        count += sum(1 for row in batch if row[0] >= first_new)
        if progress is not None:
            progress(len(batch))
    store.set_cursor(origin, bucket, last_id, app_before)
    return count


def count_pending(path: Path, store: Store) -> int:
    """How many rows the next import will read (for a progress bar)."""
    origin = str(path.resolve())
    connection = open_readonly(path)
    try:
        kind = flavour(connection)
        total = 0
        for key, bucket, bucket_type, _client in _buckets(connection, kind):
            if bucket_type not in TAKEN_TYPES:
                continue
            last_id, _ = store.cursor(origin, bucket)
            table, column = ("events", "bucketrow") if kind == "rust" else ("eventmodel", "bucket_id")
            total += connection.execute(
                f"SELECT COUNT(*) FROM {table} WHERE {column} = ? AND id >= ?", (key, last_id)
            ).fetchone()[0]
        return total
    finally:
        connection.close()
