"""The plugin's own store: each paper's masked words and what is known of it, in SQLite with FTS5, in its cache folder.

Read incrementally: each file is remembered by its size and modification time (an image's with its sidecar's), a
paperless-ngx export by its manifest's; only a new or changed one is read again, each in one transaction (its old
rows go, its new ones come: nothing half-written). The store holds masked words only (`gateway.mask`, applied before
anything is written), so an IBAN or a card number is found by no search of its digits; when the masks change
(`MASKS_VERSION`), or the settings that place a paper (`contracts`, `letters`), every file is read again.

A file that cannot be read is kept in `files` with its sentence (`error`), and a paper read in part with why
(`partial`): the tools and `gateway doctor` say them.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

from gateway import MASKS_VERSION, mask, open_store
from gateway_papers import folder as places
from gateway_papers.reading import Bounds, Reader, ReadError, read_hocr, read_text

STORE_FILE = "papers.sqlite3"
SCHEMA_VERSION = "1"
PREFIX = "papers:doc/"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, stamp TEXT NOT NULL,
    what TEXT NOT NULL, error TEXT NOT NULL DEFAULT '', partial TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS docs(id INTEGER PRIMARY KEY, address TEXT UNIQUE NOT NULL, file INTEGER NOT NULL,
    title TEXT NOT NULL, kind TEXT NOT NULL, date TEXT NOT NULL, correspondent TEXT NOT NULL,
    proven INTEGER NOT NULL, tags TEXT NOT NULL, paths TEXT NOT NULL, text TEXT NOT NULL,
    pages INTEGER NOT NULL, partial TEXT NOT NULL, origin TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS docs_by_file ON docs(file);
CREATE INDEX IF NOT EXISTS docs_by_date ON docs(date);
CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5(title, correspondent, text, content='docs',
    content_rowid='id', tokenize='unicode61 remove_diacritics 2');
"""

_lock = threading.Lock()


@frozen
class Settings:
    """What the refresh needs of the plugin's settings."""

    root: Path | None
    contracts: tuple[str, ...]
    letters: tuple[str, ...]
    max_files: int
    bounds: Bounds

    @classmethod
    def of(cls, ctx: Any) -> Settings:
        s = ctx.settings
        return cls(ctx.path_setting("folder"), tuple(s["contracts"]), tuple(s["letters"]), int(s["max_files"]),
                   Bounds(int(s["max_file_mb"]) << 20, int(s["max_pages"]), int(s["max_chars"]),
                          float(s["max_seconds"]), int(s["max_memory_mb"]), int(s["max_manifest_mb"]) << 20))

    @property
    def stamp(self) -> str:
        return json.dumps([SCHEMA_VERSION, MASKS_VERSION, str(self.root), self.contracts, self.letters,
                           self.bounds.max_pages, self.bounds.max_chars])


def connect(cache: Path, settings: Settings | None = None) -> sqlite3.Connection:
    """The store (made when missing); with `settings`, emptied first when what it was read with changed."""
    return open_store(cache, STORE_FILE, _SCHEMA, settings.stamp if settings is not None else None,
                      emptied=("files", "docs"), fts=("docs_fts",), on_emptied=_bump)


def reader_of(cache: Path) -> sqlite3.Connection | None:
    """The store opened read-only, or None when there is none yet (the person's commands never make one)."""
    path = cache / STORE_FILE
    if not path.exists():
        return None
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        connection.row_factory = sqlite3.Row
        connection.execute("SELECT 1 FROM docs LIMIT 1")
    except sqlite3.Error:
        return None
    return connection


def generation(connection: sqlite3.Connection) -> str:
    row = connection.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return row[0] if row else "0"


def _bump(connection: sqlite3.Connection) -> None:
    connection.execute("INSERT INTO meta VALUES('generation', '1') ON CONFLICT(key) DO UPDATE SET "
                       "value = CAST(value AS INTEGER) + 1")


def signature(settings: Settings) -> tuple[tuple, tuple[str, ...]]:
    """Every paper's file with its size and time, what tells whether the store is behind (a walk, no read); and
    the folders walked."""
    found = places.walk(settings.root, settings.max_files)
    return _signature(settings, found, _stamps(found)), found.folders


def _stamps(found: places.Found) -> dict[Path, str]:
    stamps: dict[Path, str] = {}
    for path in (*sorted(found.files), *found.manifests):
        try:
            stamps[path] = found.stamp(path, path.stat())
        except OSError:
            continue
    return stamps


def _signature(settings: Settings, found: places.Found, stamps: dict[Path, str]) -> tuple:
    return (settings.stamp, tuple((str(p), stamps[p]) for p in (*sorted(found.files), *found.manifests)
                                  if p in stamps))


def address_of(*parts: object) -> str:
    return PREFIX + hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8", "replace")).hexdigest()[:12]


@frozen
class Refreshed:
    """What a refresh read, and the folder as it saw it (its signature, the folders it walked)."""

    read: int
    signature: tuple
    folders: tuple[str, ...]


def refresh(settings: Settings, connection: sqlite3.Connection) -> Refreshed:
    """Bring the store up to the folder: read what is new or changed, forget what went."""
    found = places.walk(settings.root, settings.max_files)
    read = 0
    with _lock, Reader(settings.bounds) as reader:
        known = {row["path"]: row for row in connection.execute("SELECT id, path, stamp, what FROM files")}
        stamps = _stamps(found)
        # The exports first: their files (originals, archives, thumbnails) are theirs, not loose papers.
        for manifest in found.manifests:
            row = known.get(str(manifest))
            if manifest in stamps and (row is None or row["stamp"] != stamps[manifest]):
                _read_export(connection, settings, reader, manifest, stamps[manifest])
                read += 1
        # Every file under an export's folder is the export's (an original, an archive, a thumbnail, or one a
        # deleted document left behind): only the manifest's documents are papers.
        exports = tuple(m.parent for m in found.manifests)
        exported = {str(p) for p in stamps if p not in found.manifests and any(e in p.parents for e in exports)}
        wanted = {str(p) for p in stamps if str(p) not in exported}
        for gone in set(known) - wanted:
            with connection:
                _forget(connection, known[gone]["id"])
                connection.execute("DELETE FROM files WHERE id = ?", (known[gone]["id"],))
                _bump(connection)
        for path, what in found.files.items():
            if str(path) not in wanted:
                continue
            row = known.get(str(path))
            if row is not None and row["stamp"] == stamps[path]:
                continue
            _read_file(connection, settings, reader, path, what, stamps[path], found.sidecars.get(path))
            read += 1
        with connection:
            connection.execute("INSERT OR REPLACE INTO meta VALUES('truncated', ?)",
                               (str(settings.max_files) if found.truncated else "",))
    return Refreshed(read, _signature(settings, found, stamps), found.folders)


def _file_row(connection: sqlite3.Connection, path: Path, stamp: str, what: str, error: str, partial: str) -> int:
    row = connection.execute("SELECT id FROM files WHERE path = ?", (str(path),)).fetchone()
    if row is None:
        return connection.execute("INSERT INTO files(path, stamp, what, error, partial) VALUES (?, ?, ?, ?, ?)",
                                  (str(path), stamp, what, error, partial)).lastrowid or 0
    _forget(connection, row["id"])
    connection.execute("UPDATE files SET stamp = ?, what = ?, error = ?, partial = ? WHERE id = ?",
                       (stamp, what, error, partial, row["id"]))
    return int(row["id"])


def _read_file(connection: sqlite3.Connection, settings: Settings, reader: Reader, path: Path, what: str,
               stamp: str, sidecar: Path | None) -> None:
    bounds = settings.bounds
    error = partial = ""
    text, pages, created = "", 0, ""
    try:
        if what == "pdf":
            got = reader.pdf(path)
            text, pages, partial = got.get("text", ""), int(got.get("pages") or 0), got.get("partial", "")
            created = got.get("created", "")
        elif what == "text":
            text, partial = read_text(path, bounds.max_file_bytes, bounds.max_chars)
        elif sidecar is not None:
            reading = read_hocr if sidecar.suffix.lower() == ".hocr" else read_text
            text, partial = reading(sidecar, bounds.max_file_bytes, bounds.max_chars)
    except ReadError as failed:
        error = str(failed)
    try:
        status = path.stat()
    except OSError:
        status = None
    with connection:
        file_id = _file_row(connection, path, stamp, what, error, partial)
        _bump(connection)
        if error:
            return
        root = settings.root or path.parent
        day, title = places.dated(path.stem)
        if not day:
            day = created or (places.modified_day(status) if status is not None else "")
        folders = places.folders_of(root, path)
        correspondent = places.correspondent_of(folders, settings.contracts, settings.letters)
        paths = [str(path)] + ([str(sidecar)] if sidecar is not None else [])
        _add_doc(connection, file_id, {
            "address": address_of("file", path), "title": title, "kind":
            places.kind_of(folders, settings.contracts, settings.letters), "date": day,
            "correspondent": correspondent, "proven": True, "tags": [], "paths": paths, "text": text,
            "pages": pages, "partial": partial, "origin": what})


def _read_export(connection: sqlite3.Connection, settings: Settings, reader: Reader, manifest: Path,
                 stamp: str) -> None:
    root = manifest.parent
    split = sorted(p for p in root.rglob("*-manifest.json") if p.is_file() and not p.is_symlink())
    error = ""
    documents: list[dict[str, Any]] = []
    try:
        documents = reader.manifest([manifest, *split])
    except ReadError as failed:
        error = str(failed)
    with connection:
        file_id = _file_row(connection, manifest, stamp, "export", error, "")
        _bump(connection)
        for document in documents:
            names = [document.get(k, "") for k in ("original", "archive", "thumbnail")]
            files = [_inside(root, name) for name in names]
            paths = [str(f) for f in files[:2] if f is not None]
            kind_names = [document.get("document_type", ""),
                          *(places.folders_of(root, Path(paths[0])) if paths else [])]
            _add_doc(connection, file_id, {
                "address": address_of("paperless", manifest, document.get("pk")),
                "title": document.get("title") or (Path(paths[0]).stem if paths else f"document {document.get('pk')}"),
                "kind": places.kind_of(kind_names, settings.contracts, settings.letters),
                "date": _day(document.get("created", "")), "correspondent": document.get("correspondent", ""),
                "proven": False, "tags": [t for t in document.get("tags", []) if t], "paths": paths,
                "text": document.get("content", ""), "pages": int(document.get("pages") or 0), "partial": "",
                "origin": "paperless"})


def _inside(root: Path, name: str) -> Path | None:
    """An exported file's path, only when it stays inside the export (a manifest naming `../../etc/x` names none)."""
    if not name:
        return None
    candidate = Path(root, name)
    try:
        if Path(root).resolve() not in candidate.resolve().parents:
            return None
    except (OSError, RuntimeError):
        return None
    return candidate


def _day(value: str) -> str:
    try:
        from datetime import date

        return date.fromisoformat(value[:10]).isoformat()
    except ValueError:
        return ""


def _add_doc(connection: sqlite3.Connection, file_id: int, doc: Mapping[str, Any]) -> None:
    title = mask(" ".join(str(doc["title"]).split())[:300])
    correspondent = mask(" ".join(str(doc["correspondent"]).split())[:200])
    text = mask(str(doc["text"]))
    tags = [mask(" ".join(t.split())[:100]) for t in doc["tags"]]
    cursor = connection.execute(
        "INSERT OR IGNORE INTO docs(address, file, title, kind, date, correspondent, proven, tags, paths, text, "
        "pages, partial, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (doc["address"], file_id, title, doc["kind"], doc["date"], correspondent, int(bool(doc["proven"])),
         json.dumps(tags), json.dumps(doc["paths"]), text, int(doc["pages"]), doc["partial"], doc["origin"]))
    if not cursor.rowcount:
        return  # the same document twice in one export: given once
    connection.execute("INSERT INTO docs_fts(rowid, title, correspondent, text) VALUES (?, ?, ?, ?)",
                       (cursor.lastrowid, title, correspondent, text))


def _forget(connection: sqlite3.Connection, file_id: int) -> None:
    connection.execute("INSERT INTO docs_fts(docs_fts, rowid, title, correspondent, text) SELECT 'delete', id, "
                       "title, correspondent, text FROM docs WHERE file = ?", (file_id,))
    connection.execute("DELETE FROM docs WHERE file = ?", (file_id,))


def truncated(connection: sqlite3.Connection) -> str:
    """The sentence saying the folder was read only in part (past max_files), or ""."""
    row = connection.execute("SELECT value FROM meta WHERE key = 'truncated'").fetchone()
    if not row or not row[0]:
        return ""
    return (f"only the first {int(row[0]):,} files of the documents folder were read (max_files in "
            "[plugins.papers])")


def problems(connection: sqlite3.Connection) -> list[tuple[str, str, str]]:
    """(path, sentence, "error" or "partial") of each file not read, or read in part."""
    rows = connection.execute("SELECT path, error, partial FROM files WHERE error != '' OR partial != '' "
                              "ORDER BY path").fetchall()
    return [(r["path"], r["error"] or r["partial"], "error" if r["error"] else "partial") for r in rows]
