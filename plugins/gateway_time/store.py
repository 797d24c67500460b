"""The plugin's own store: timewarrior's intervals and the invoices' fields, masked, in SQLite in its cache folder.

Read incrementally: each source file (a timewarrior month file, an invoice PDF) is remembered by its size and
modification time, and only a new or changed one is read again, in a transaction of its own (its old rows go, its
new ones come: nothing half-written); a file that went takes its rows with it. Only masked words are stored
(`gateway.mask` before anything is written: tags, annotations, names, references, payment accounts), so that
nothing holds an IBAN's digits; the store is read again from the files when the masks change (`MASKS_VERSION`).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from gateway import MASKS_VERSION, Context, clip, mask, open_store
from gateway_time import invoices as invoice_files
from gateway_time import timewarrior

STORE_FILE = "time.sqlite3"
SCHEMA_VERSION = "1"
SHOWN = 300  # a field's length once masked

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, kind TEXT NOT NULL,
    size INTEGER NOT NULL, mtime INTEGER NOT NULL, error TEXT NOT NULL DEFAULT '',
    malformed INTEGER NOT NULL DEFAULT 0, malformed_lines TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS intervals(id INTEGER PRIMARY KEY, file INTEGER NOT NULL, start INTEGER NOT NULL,
    "end" INTEGER, tags TEXT NOT NULL, annotation TEXT NOT NULL, line INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS intervals_by_file ON intervals(file);
CREATE INDEX IF NOT EXISTS intervals_by_start ON intervals(start);
CREATE TABLE IF NOT EXISTS invoices(file INTEGER PRIMARY KEY, key TEXT NOT NULL, fields TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS invoices_by_key ON invoices(key);
"""

_lock = threading.Lock()


def connect(ctx: Context) -> sqlite3.Connection:
    return open_store(Path(ctx.folders.cache), STORE_FILE, _SCHEMA, f"{SCHEMA_VERSION}/{MASKS_VERSION}",
                      emptied=("files", "intervals", "invoices"))


def time_files(ctx: Context) -> list[Path]:
    return timewarrior.data_files(timewarrior.database(ctx.path_setting("timewarrior")))


def invoice_folder(ctx: Context) -> Path | None:
    return ctx.path_setting("invoices")


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_size, status.st_mtime_ns


def signature(ctx: Context) -> tuple:
    """Every source file's path, size and time: what tells whether the store is behind (stats, no read)."""
    files = [*time_files(ctx), *invoice_files.pdfs_in(invoice_folder(ctx))]
    return tuple((str(p), _stat(p)) for p in files)


def refresh(ctx: Context, connection: sqlite3.Connection) -> int:
    """Bring the store up to the files: read what is new or changed, forget what went. Returns how many were read."""
    settings = ctx.settings
    max_data = int(settings["max_data_mb"]) << 20
    bounds = invoice_files.Bounds(int(settings["max_file_mb"]), float(settings["max_seconds"]),
                                  int(settings["max_memory_mb"]))
    wanted = {str(p): ("time", p) for p in time_files(ctx)}
    wanted.update({str(p): ("invoice", p) for p in invoice_files.pdfs_in(invoice_folder(ctx))})
    read = 0
    with _lock:
        known = {row["path"]: row for row in connection.execute("SELECT id, path, size, mtime FROM files")}
        for gone in set(known) - set(wanted):
            with connection:
                _forget(connection, known[gone]["id"], delete_file=True)
        changed: list[tuple[str, Path, int, int]] = []
        for name, (kind, path) in wanted.items():
            status = _stat(path)
            if status is None:
                continue
            row = known.get(name)
            if row is not None and (row["size"], row["mtime"]) == status:
                continue
            changed.append((kind, path, *status))
        for kind, path, size, mtime in changed:
            if kind == "time":
                _read_time(connection, path, size, mtime, max_data)
                read += 1
        pdfs = {str(path): (size, mtime) for kind, path, size, mtime in changed if kind == "invoice"}
        for path, fields, error in invoice_files.read_pdfs([Path(p) for p in pdfs], bounds):
            size, mtime = pdfs[str(path)]
            _write_invoice(connection, path, size, mtime, fields, error)
            read += 1
    return read


def _file_row(connection: sqlite3.Connection, path: Path, kind: str, size: int, mtime: int, error: str,
              malformed: int = 0, lines: str = "") -> int:
    row = connection.execute("SELECT id FROM files WHERE path = ?", (str(path),)).fetchone()
    if row is None:
        return connection.execute(
            "INSERT INTO files(path, kind, size, mtime, error, malformed, malformed_lines) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (str(path), kind, size, mtime, error, malformed, lines)).lastrowid
    _forget(connection, row["id"], delete_file=False)
    connection.execute("UPDATE files SET kind = ?, size = ?, mtime = ?, error = ?, malformed = ?, malformed_lines = ? "
                       "WHERE id = ?", (kind, size, mtime, error, malformed, lines, row["id"]))
    return row["id"]


def _read_time(connection: sqlite3.Connection, path: Path, size: int, mtime: int, max_bytes: int) -> None:
    error, read = "", None
    try:
        read = timewarrior.read_file(path, max_bytes)
    except (OSError, ValueError) as failed:
        error = f"not read: {getattr(failed, 'strerror', None) or failed}"
    with connection:
        malformed = read.malformed if read else 0
        lines = ",".join(map(str, read.malformed_lines)) if read else ""
        file_id = _file_row(connection, path, "time", size, mtime, error, malformed, lines)
        if read is None:
            return
        tags_seen: dict[tuple[str, ...], str] = {}

        def tags_of(tags: tuple[str, ...]) -> str:
            found = tags_seen.get(tags)
            if found is None:
                found = tags_seen[tags] = json.dumps([clip(t, 200) for t in tags], ensure_ascii=False)
            return found

        connection.executemany(
            'INSERT INTO intervals(file, start, "end", tags, annotation, line) VALUES (?, ?, ?, ?, ?, ?)',
            ((file_id, i.start, i.end, tags_of(i.tags), clip(i.annotation, SHOWN) if i.annotation else "", i.line)
             for i in read.intervals))


def _masked(fields: dict[str, Any]) -> dict[str, Any]:
    """Every field masked whole, then cut (mask first, then cut)."""
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if isinstance(value, dict):
            out[key] = _masked(value)
        elif isinstance(value, str):
            out[key] = clip(value, SHOWN)
        else:
            out[key] = clip(str(value), SHOWN)
    return out


def invoice_key(fields: dict[str, Any], path: Path) -> str:
    """One invoice however many copies: its seller and number (a seller numbers its invoices once), else its file."""
    seller = fields.get("seller") or {}
    number = str(fields.get("number") or "").strip()
    basis = (f"{str(seller.get('vat') or seller.get('name') or '').casefold()}\x1f{number}" if number
             else f"file\x1f{path}")
    return hashlib.sha256(basis.encode("utf-8", "replace")).hexdigest()[:12]


def _write_invoice(connection: sqlite3.Connection, path: Path, size: int, mtime: int, fields: dict | None,
                   error: str) -> None:
    with connection:
        file_id = _file_row(connection, path, "invoice", size, mtime, mask(error)[:400] if error else "")
        if fields is None:
            return
        masked = _masked(fields)
        connection.execute("INSERT INTO invoices(file, key, fields) VALUES (?, ?, ?)",
                           (file_id, invoice_key(masked, path), json.dumps(masked, ensure_ascii=False)))


def _forget(connection: sqlite3.Connection, file_id: int, delete_file: bool) -> None:
    connection.execute("DELETE FROM intervals WHERE file = ?", (file_id,))
    connection.execute("DELETE FROM invoices WHERE file = ?", (file_id,))
    if delete_file:
        connection.execute("DELETE FROM files WHERE id = ?", (file_id,))


def problems(connection: sqlite3.Connection) -> list[tuple[str, str]]:
    """For the person (doctor): (kind, sentence) for each file that could not be read, and for each data file's
    malformed lines."""
    said: list[tuple[str, str]] = []
    for row in connection.execute("SELECT path, kind, error, malformed, malformed_lines FROM files "
                                  "WHERE error != '' OR malformed > 0 ORDER BY path"):
        if row["error"]:
            said.append((row["kind"], f"{row['path']}: {row['error']}"))
        if row["malformed"]:
            lines = f" (lines {row['malformed_lines']}{', ...' if row['malformed'] > 10 else ''})"
            said.append((row["kind"], f"{row['path']}: {row['malformed']} malformed "
                                      f"line{'s' if row['malformed'] > 1 else ''} skipped{lines}"))
    return said


def generation(connection: sqlite3.Connection) -> tuple:
    """What the store was read from: remembered verdicts are keyed by it."""
    return tuple(tuple(r) for r in connection.execute("SELECT path, size, mtime FROM files ORDER BY path"))
