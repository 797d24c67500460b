"""The plugin's own store: the exports' texts and calls, masked, in SQLite with FTS5, in the plugin's cache folder.

Read incrementally: each export is remembered by its size and modification time, and only a new or changed one is
read again (in one transaction: its old rows go, its new ones come, nothing half-written). A text or a call is
stored once, keyed by its conversation, its sender, its time to the millisecond and its masked words, and linked to
every export that holds it: a text in two exports (two phones' backups, or a backup after a restore) is given once,
and it goes only when no export holds it any more. The store holds masked words only (`gateway.mask`, applied
before anything is written), so a code is found by no search of its digits; when the masks change
(`MASKS_VERSION`), the store is read again from the exports.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

from attrs import frozen

from gateway import MASKS_VERSION, Context, mask, open_store
from gateway_texts.exports import Bounds, ExportError, read_calls, read_texts
from gateway_texts.people import normalised

STORE_FILE = "texts.sqlite3"
SCHEMA_VERSION = "1"
MAX_EXPORTS = 2_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, size INTEGER NOT NULL,
    mtime INTEGER NOT NULL, error TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS conversations(id INTEGER PRIMARY KEY, address TEXT UNIQUE NOT NULL,
    numbers TEXT NOT NULL, name TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS texts(id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, conversation INTEGER NOT NULL,
    sender TEXT NOT NULL, date INTEGER NOT NULL, body TEXT NOT NULL, kind TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS texts_by_conversation ON texts(conversation, date);
CREATE INDEX IF NOT EXISTS texts_by_date ON texts(date);
CREATE TABLE IF NOT EXISTS text_files(text INTEGER NOT NULL, file INTEGER NOT NULL, PRIMARY KEY(text, file))
    WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS text_files_by_file ON text_files(file);
CREATE VIRTUAL TABLE IF NOT EXISTS texts_fts USING fts5(body, content='texts', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2');
CREATE TABLE IF NOT EXISTS calls(id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, number TEXT NOT NULL,
    date INTEGER NOT NULL, duration INTEGER NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS calls_by_date ON calls(date);
CREATE TABLE IF NOT EXISTS call_files(call INTEGER NOT NULL, file INTEGER NOT NULL, PRIMARY KEY(call, file))
    WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS call_files_by_file ON call_files(file);
"""

_lock = threading.Lock()


@frozen
class Found:
    """The exports found, and those that could not be read (each with its sentence)."""

    exports: int
    problems: tuple[str, ...]


def connect(ctx: Context) -> sqlite3.Connection:
    # Read again from the exports when the schema, the masks or the region numbers are read in change.
    stamp = f"{SCHEMA_VERSION}/{MASKS_VERSION}/{str(ctx.settings.get('region') or '').upper()}"
    return open_store(Path(ctx.folders.cache), STORE_FILE, _SCHEMA, stamp,
                      emptied=("files", "conversations", "texts", "text_files", "calls", "call_files"),
                      fts=("texts_fts",))


def exports_in(folder: Path | None) -> list[Path]:
    """The export files under the folder (`sms-*.xml`, `calls-*.xml`, at any depth), at most MAX_EXPORTS."""
    if folder is None or not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.rglob("*.xml")):
        if path.name.startswith(("sms-", "calls-")) and path.is_file():
            found.append(path)
            if len(found) >= MAX_EXPORTS:
                break
    return found


def signature(ctx: Context) -> tuple:
    """The exports' paths, sizes and times: what tells whether the store is behind (a walk of the folder, no read)."""
    found = []
    for path in exports_in(ctx.path_setting("exports")):
        try:
            status = path.stat()
        except OSError:
            continue
        found.append((str(path), status.st_size, status.st_mtime_ns))
    return tuple(found)


def refresh(ctx: Context, connection: sqlite3.Connection, bounds: Bounds, region: str) -> int:
    """Bring the store up to the exports in the `exports` folder: read what is new or changed, forget what went.
    Each export is read in a transaction of its own: a stop between two leaves every export whole or not there.
    Returns how many exports were read."""
    paths = exports_in(ctx.path_setting("exports"))
    read = 0
    with _lock:
        known = {row["path"]: row for row in connection.execute("SELECT * FROM files")}
        for gone in set(known) - {str(p) for p in paths}:
            with connection:
                _forget(connection, known[gone]["id"])
                connection.execute("DELETE FROM files WHERE id = ?", (known[gone]["id"],))
        for path in paths:
            try:
                status = path.stat()
            except OSError:
                continue
            row = known.get(str(path))
            if row is not None and (row["size"], row["mtime"]) == (status.st_size, status.st_mtime_ns):
                continue
            _read_one(connection, path, status.st_size, status.st_mtime_ns, bounds, region)
            read += 1
    return read


def found(connection: sqlite3.Connection) -> Found:
    """The exports in the store, and the sentence of each that could not be read."""
    rows = connection.execute("SELECT path, error FROM files ORDER BY path").fetchall()
    return Found(len(rows), tuple(f"{Path(r['path']).name}: {r['error']}" for r in rows if r["error"]))


def _read_one(connection: sqlite3.Connection, path: Path, size: int, mtime: int, bounds: Bounds, region: str) -> None:
    error = ""
    texts: list = []
    calls: list = []
    try:
        if path.name.startswith("sms-"):
            texts = read_texts(path, bounds)
        else:
            calls = read_calls(path, bounds)
    except ExportError as failed:
        error = str(failed)
    with connection:
        row = connection.execute("SELECT id FROM files WHERE path = ?", (str(path),)).fetchone()
        if row is None:
            file_id = connection.execute("INSERT INTO files(path, size, mtime, error) VALUES (?, ?, ?, ?)",
                                         (str(path), size, mtime, error)).lastrowid
        else:
            file_id = row["id"]
            _forget(connection, file_id)
            connection.execute("UPDATE files SET size = ?, mtime = ?, error = ? WHERE id = ?",
                               (size, mtime, error, file_id))
        _add_texts(connection, file_id, texts, region)
        _add_calls(connection, file_id, calls, region)


def _key(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8", "replace")).hexdigest()[:32]


def _add_texts(connection: sqlite3.Connection, file_id: int, texts: Iterable, region: str) -> None:
    conversations: dict[str, int] = {}
    rows = []
    for text in texts:
        numbers = sorted({normalised(n, region) for n in text.numbers} - {""})
        if not numbers:
            continue
        address = "~".join(numbers)
        conversation = conversations.get(address)
        if conversation is None:
            found = connection.execute("SELECT id FROM conversations WHERE address = ?", (address,)).fetchone()
            if found is None:
                conversation = connection.execute(
                    "INSERT INTO conversations(address, numbers, name) VALUES (?, ?, ?)",
                    (address, json.dumps(numbers), mask(" ".join(text.name.split())[:200]))).lastrowid
            else:
                conversation = found["id"]
            conversations[address] = conversation
        sender = normalised(text.sender, region) if text.sender else ""
        body = mask(text.body)
        rows.append((_key(address, sender, text.date_ms, body), conversation, sender, text.date_ms, body, text.kind))
    # New texts take ids above every id the store has: their search entries are added from there, in one pass.
    last = connection.execute("SELECT COALESCE(MAX(id), 0) FROM texts").fetchone()[0]
    connection.executemany(
        "INSERT OR IGNORE INTO texts(key, conversation, sender, date, body, kind) VALUES (?, ?, ?, ?, ?, ?)", rows)
    connection.execute("INSERT INTO texts_fts(rowid, body) SELECT id, body FROM texts WHERE id > ?", (last,))
    connection.execute("CREATE TEMP TABLE IF NOT EXISTS incoming(key TEXT PRIMARY KEY)")
    connection.execute("DELETE FROM incoming")
    connection.executemany("INSERT OR IGNORE INTO incoming VALUES (?)", ((row[0],) for row in rows))
    connection.execute("INSERT OR IGNORE INTO text_files SELECT t.id, ? FROM texts t JOIN incoming i ON i.key = t.key",
                       (file_id,))
    connection.execute("DELETE FROM incoming")


def _add_calls(connection: sqlite3.Connection, file_id: int, calls: Iterable, region: str) -> None:
    for call in calls:
        number = normalised(call.number, region) if call.number else ""
        key = _key(number, call.date_ms, call.kind, call.duration)
        cursor = connection.execute(
            "INSERT OR IGNORE INTO calls(key, number, date, duration, kind, name) VALUES (?, ?, ?, ?, ?, ?)",
            (key, number, call.date_ms, call.duration, call.kind, mask(" ".join(call.name.split())[:200])))
        call_id = cursor.lastrowid if cursor.rowcount else connection.execute(
            "SELECT id FROM calls WHERE key = ?", (key,)).fetchone()["id"]
        connection.execute("INSERT OR IGNORE INTO call_files VALUES (?, ?)", (call_id, file_id))


def _forget(connection: sqlite3.Connection, file_id: int) -> None:
    """Unlink an export's texts and calls; those no other export holds go, with their search entries."""
    connection.execute("DELETE FROM text_files WHERE file = ?", (file_id,))
    connection.execute("DELETE FROM call_files WHERE file = ?", (file_id,))
    orphans = "SELECT id FROM texts WHERE NOT EXISTS (SELECT 1 FROM text_files WHERE text = texts.id)"
    connection.execute(f"INSERT INTO texts_fts(texts_fts, rowid, body) SELECT 'delete', id, body FROM texts "
                       f"WHERE id IN ({orphans})")  # noqa: S608 (fixed text)
    connection.execute(f"DELETE FROM texts WHERE id IN ({orphans})")  # noqa: S608
    connection.execute("DELETE FROM calls WHERE NOT EXISTS (SELECT 1 FROM call_files WHERE call = calls.id)")
    connection.execute("DELETE FROM conversations WHERE NOT EXISTS "
                       "(SELECT 1 FROM texts WHERE conversation = conversations.id)")
