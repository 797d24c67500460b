"""ActivityWatch databases built by the tests in each server's own schema (from their documented tables)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

# aw-server-rust (aw-datastore), schema as its migrations leave it at user_version 6.
RUST_SCHEMA = """
CREATE TABLE buckets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT UNIQUE NOT NULL,
    type TEXT NOT NULL,
    client TEXT NOT NULL,
    hostname TEXT NOT NULL,
    created TEXT NOT NULL,
    data_deprecated TEXT DEFAULT '{}',
    data TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX bucket_id_index ON buckets(id);
CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    bucketrow INTEGER NOT NULL,
    starttime INTEGER NOT NULL,
    endtime INTEGER NOT NULL,
    data TEXT NOT NULL,
    FOREIGN KEY (bucketrow) REFERENCES buckets(id)
);
CREATE INDEX events_bucketrow_starttime_endtime_index ON events(bucketrow, starttime DESC, endtime);
CREATE INDEX events_bucketrow_endtime_starttime_index ON events(bucketrow, endtime, starttime DESC);
CREATE TABLE key_value (key TEXT PRIMARY KEY, value TEXT, last_modified NUMBER NOT NULL);
PRAGMA user_version = 6;
"""

# aw-server (aw-core's peewee storage, peewee-sqlite.v2.db): the tables peewee creates for its two models.
PEEWEE_SCHEMA = """
CREATE TABLE "bucketmodel" (
    "key" INTEGER NOT NULL PRIMARY KEY,
    "id" VARCHAR(255) NOT NULL,
    "created" DATETIME NOT NULL,
    "name" VARCHAR(255),
    "type" VARCHAR(255) NOT NULL,
    "client" VARCHAR(255) NOT NULL,
    "hostname" VARCHAR(255) NOT NULL
);
CREATE UNIQUE INDEX "bucketmodel_id" ON "bucketmodel" ("id");
CREATE TABLE "eventmodel" (
    "id" INTEGER NOT NULL PRIMARY KEY,
    "bucket_id" INTEGER NOT NULL,
    "timestamp" DATETIME NOT NULL,
    "duration" DECIMAL(10, 5) NOT NULL,
    "datastr" VARCHAR(255) NOT NULL,
    FOREIGN KEY ("bucket_id") REFERENCES "bucketmodel" ("key")
);
CREATE INDEX "eventmodel_bucket_id" ON "eventmodel" ("bucket_id");
CREATE INDEX "eventmodel_timestamp" ON "eventmodel" ("timestamp");
"""

HOST = "desk"
WINDOW = f"aw-watcher-window_{HOST}"
AFK = f"aw-watcher-afk_{HOST}"
WEB = f"aw-watcher-web-firefox_{HOST}"
VIM = f"aw-watcher-vim_{HOST}"
BUCKET_TYPES = {
    WINDOW: ("currentwindow", "aw-watcher-window"),
    AFK: ("afkstatus", "aw-watcher-afk"),
    WEB: ("web.tab.current", "aw-watcher-web-firefox"),
    VIM: ("app.editor.activity", "aw-watcher-vim"),
    f"aw-stopwatch_{HOST}": ("general.stopwatch", "aw-stopwatch"),
}

Event = tuple[datetime, float, Mapping[str, Any]]  # start (aware), duration seconds, data


class AWDatabase:
    """One ActivityWatch database of either flavour, to which a test adds buckets and events."""

    def __init__(self, path: Path, flavour: str) -> None:
        self.path, self.flavour = path, flavour
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.executescript(RUST_SCHEMA if flavour == "rust" else PEEWEE_SCHEMA)
        self.keys: dict[str, int] = {}

    def bucket(self, name: str) -> int:
        if name not in self.keys:
            kind, client = BUCKET_TYPES[name]
            created = datetime(2026, 1, 1, tzinfo=UTC).isoformat()
            if self.flavour == "rust":
                cursor = self.db.execute(
                    "INSERT INTO buckets (name, type, client, hostname, created) VALUES (?, ?, ?, ?, ?)",
                    (name, kind, client, HOST, created),
                )
            else:
                cursor = self.db.execute(
                    "INSERT INTO bucketmodel (id, created, name, type, client, hostname) VALUES (?, ?, ?, ?, ?, ?)",
                    (name, created.replace("T", " "), None, kind, client, HOST),
                )
            self.keys[name] = cursor.lastrowid
        return self.keys[name]

    def add(self, name: str, events: Iterable[Event]) -> list[int]:
        key, ids = self.bucket(name), []
        for start, duration, data in events:
            if self.flavour == "rust":
                start_ns = int(start.timestamp() * 1_000_000) * 1000
                cursor = self.db.execute(
                    "INSERT INTO events (bucketrow, starttime, endtime, data) VALUES (?, ?, ?, ?)",
                    (key, start_ns, start_ns + int(duration * 1e9), json.dumps(data)),
                )
            else:
                cursor = self.db.execute(
                    "INSERT INTO eventmodel (bucket_id, timestamp, duration, datastr) VALUES (?, ?, ?, ?)",
                    (key, start.astimezone(UTC).isoformat(" "), str(duration), json.dumps(data)),
                )
            ids.append(cursor.lastrowid)
        return ids

    def grow(self, event_id: int, duration: float) -> None:
        """What a heartbeat does to the newest event: the same row, a longer duration."""
        if self.flavour == "rust":
            self.db.execute(
                "UPDATE events SET endtime = starttime + ? WHERE id = ?", (int(duration * 1e9), event_id)
            )
        else:
            self.db.execute("UPDATE eventmodel SET duration = ? WHERE id = ?", (str(duration), event_id))

    def close(self) -> None:
        self.db.close()


def window_events(start: datetime, spans: Sequence[tuple[float, str, str]]) -> list[Event]:
    """Back-to-back window events from (minutes, app, title)."""
    events, at = [], start
    for minutes, app, title in spans:
        events.append((at, minutes * 60, {"app": app, "title": title}))
        at += timedelta(minutes=minutes)
    return events
