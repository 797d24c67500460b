"""The event store's schema: its tables and indexes, the columns of an event row, and the file's permissions."""

from __future__ import annotations

import os
from pathlib import Path

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
_GROUP_COLUMNS = "type, app, bundle_id, label, url, path"


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
