"""An incremental FTS5 index of a folder of small files (notes, vCards), masked text only, in the cache folder.

One SQLite file per store (0600, WAL). Each directory's time is recorded: a call stats the directories and
lists only those that changed (a file written through a new name, as editors, khard and vdirsyncer do, changes
its directory); every `SWEEP_SECONDS` a call also stats every file, for text changed in place. A file may hold
several documents (a .vcf of many cards). `MASKS_VERSION` is recorded: an index made with other masks is emptied.
Links are never followed, hidden folders (`.git`, `.obsidian`) are skipped: what is indexed lies in the folder.
A file whose reading fails in any way is recorded unreadable (and one a reader could only read in part, by its
summary), with its time and size, so that it is not read again until it changes; `problems` lists them for
`gateway doctor`.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import structlog
from attrs import frozen

from gateway import MASKS_VERSION

log = structlog.get_logger("gateway_mail.docindex")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS dirs (path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, dir TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    problem TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS files_by_dir ON files (dir);
CREATE TABLE IF NOT EXISTS docs (
    id INTEGER PRIMARY KEY, file TEXT NOT NULL, key TEXT NOT NULL, title TEXT NOT NULL, extra TEXT NOT NULL,
    date REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_by_file ON docs (file);
CREATE INDEX IF NOT EXISTS docs_by_key ON docs (key);
CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5 (title, body, tokenize = 'unicode61');
"""
FORMAT = "3"  # 3: each file's problem (read by summary only, unreadable) recorded
SWEEP_SECONDS = 30.0
_SETTLE_NS = 2_000_000_000  # a directory changed this recently may change again within its time's granularity
MAX_DEPTH = 24
BATCH = 200  # files read and committed at once: a refresh stopped at a call's deadline keeps what it did
CHECK_BYTES = 256 << 10  # of files read since a refresh last looked at its stop, within a batch too
_locks: dict[str, threading.Lock] = {}
_guard = threading.Lock()


@frozen
class Doc:
    """One document of a file: its key (a UID, a path), masked title and body, extra fields (masked), a date."""

    key: str
    title: str
    body: str
    extra: dict[str, Any]
    date: float = 0.0


SUMMARY_ONLY = "summary"
UNREADABLE = "unreadable"


@frozen
class Read:
    """What a reader made of a file it could not read whole: the documents it found, and why (SUMMARY_ONLY)."""

    docs: list[Doc]
    problem: str = ""


# (absolute path, path relative to the root) -> its documents, or a Read saying what went wrong
Reader = Callable[[Path, str], "list[Doc] | Read"]


def _lock(path: Path) -> threading.Lock:
    with _guard:
        return _locks.setdefault(str(path), threading.Lock())


_connecting: dict[str, threading.Lock] = {}


def connect(path: Path, root: Path) -> sqlite3.Connection:
    """The index at `path` for the folder `root`, made 0600; emptied if made with other masks or another root.

    One thread of the process at a time checks and makes the schema of one index: two threads opening a new index
    at once would each read it as made by another version and empty it, one of them after the other had filled it."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with _guard:
        connecting = _connecting.setdefault(str(path.resolve()), threading.Lock())
    with connecting:
        return _connect(path, root)


def _connect(path: Path, root: Path) -> sqlite3.Connection:
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW, 0o600))
    if os.stat(path).st_mode & 0o077:
        os.chmod(path, 0o600)
    connection = sqlite3.connect(path, timeout=30, check_same_thread=False)
    connection.row_factory = sqlite3.Row
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    connection.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    if meta(connection, "format") != FORMAT:
        with connection:  # made by another version of this module: its tables may differ
            for table in ("dirs", "files", "docs", "docs_fts"):
                connection.execute(f"DROP TABLE IF EXISTS {table}")
    connection.executescript(SCHEMA)
    wanted = {"masks_version": str(MASKS_VERSION), "root": str(root), "format": FORMAT}
    if any(meta(connection, k) != v for k, v in wanted.items()):
        with connection:
            for table in ("dirs", "files", "docs", "docs_fts"):
                connection.execute(f"DELETE FROM {table}")
            for key, value in wanted.items():
                set_meta(connection, key, value)
            set_meta(connection, "swept", "0")
            bump(connection)
    return connection


@frozen
class Verdicts:
    """What the gate decides of an index's documents, kept per gate: each id's projects, and the ids closed."""

    owners: dict[int, frozenset[str]]
    closed: frozenset[int]


def meta(connection: sqlite3.Connection, key: str) -> str | None:
    row = connection.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(connection: sqlite3.Connection, key: str, value: str) -> None:
    connection.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


def bump(connection: sqlite3.Connection) -> None:
    set_meta(connection, "generation", str(int(meta(connection, "generation") or 0) + 1))


def generation(connection: sqlite3.Connection) -> int:
    return int(meta(connection, "generation") or 0)


def refresh(connection: sqlite3.Connection, root: Path, suffixes: tuple[str, ...], read: Reader,
            now: float | None = None, stop: Callable[[], bool] | None = None) -> bool:
    """Bring the index up to the folder, in batches each committed; False if `stop()` said to stop before the end
    (what was committed stays: the next call goes on from there). One refresh at a time per index file."""
    now = time.time() if now is None else now
    database = Path(connection.execute("PRAGMA database_list").fetchone()[2] or ":memory:")
    with _lock(database):
        sweep = now - float(meta(connection, "swept") or 0) >= SWEEP_SECONDS
        known_dirs = {r[0]: r[1] for r in connection.execute("SELECT path, mtime_ns FROM dirs")}
        seen_dirs: dict[str, int] = {}
        listed: dict[str, os.stat_result] = {}
        listed_dirs: set[str] = set()
        children: dict[str, list[str]] = {}
        for known in known_dirs:
            if known:
                children.setdefault(_parent(known), []).append(known)
        walk = _Walk(known_dirs, children, seen_dirs, listed, listed_dirs, suffixes, sweep)
        walk.folder(str(root), "", 0)
        vanished = set(known_dirs) - set(seen_dirs)
        dirs_changed = seen_dirs != known_dirs
        if not (listed_dirs or vanished or dirs_changed or sweep):
            return True  # what a call pays when nothing changed: a stat per folder
        known_files: dict[str, tuple[int, int]] = {}
        for folder in listed_dirs | vanished:
            known_files.update((r[0], (r[1], r[2])) for r in connection.execute(
                "SELECT path, size, mtime_ns FROM files WHERE dir = ?", (folder,)))
        gone = [p for p in known_files if p not in listed]
        # Oldest first, so that a document's id grows with its file's time (searches rank the newest matches).
        changed = sorted((p for p, s in listed.items() if known_files.get(p) != (s.st_size, s.st_mtime_ns)),
                         key=lambda p: listed[p].st_mtime_ns)
        if gone:
            with connection:
                for relative in gone:
                    _forget(connection, relative)
                bump(connection)
        for start in range(0, len(changed), BATCH):
            if stop is not None and stop():
                return False
            batch = []
            unchecked = 0
            for relative in changed[start:start + BATCH]:
                batch.append((relative, _read(read, root, relative)))
                unchecked += listed[relative].st_size
                if stop is not None and unchecked > CHECK_BYTES:
                    unchecked = 0
                    if stop():
                        break  # each file's reading is bounded, but costs: what was read is kept, the next call goes on
            with connection:
                for relative, found in batch:
                    _store(connection, relative, listed[relative], found)
                bump(connection)
            if len(batch) < len(changed[start:start + BATCH]):
                return False
        with connection:
            if dirs_changed:
                connection.execute("DELETE FROM dirs")
                connection.executemany("INSERT INTO dirs (path, mtime_ns) VALUES (?, ?)", seen_dirs.items())
            if sweep:
                set_meta(connection, "swept", str(now))
        return True


SPEND = 0.4  # of a call's time, what a refresh may take before it stops (the answer still has to come)


def stopper(ctx: Any) -> Callable[[], bool]:
    """When a refresh made at call time should stop: once 40% of the call's time has gone (a loaded machine
    needs a wide margin for the rest of the answer)."""
    deadline = ctx.deadline
    return lambda: deadline.left() < deadline.seconds * (1 - SPEND)


def _read(read: Reader, root: Path, relative: str) -> Read:
    try:
        found = read(root / relative, relative)
    except Exception as error:  # noqa: BLE001 (a stranger's file may make a parser fail in any way: one file, one count)
        log.warning("file unreadable", path=str(root / relative), error=type(error).__name__)
        return Read([], UNREADABLE)
    return found if isinstance(found, Read) else Read(found)


def problems(connection: sqlite3.Connection) -> list[tuple[str, str]]:
    """The files read by summary only or unreadable: (path relative to the root, which), for `gateway doctor`."""
    return [(r[0], r[1]) for r in connection.execute(
        "SELECT path, problem FROM files WHERE problem != '' ORDER BY path")]


def _store(connection: sqlite3.Connection, relative: str, status: os.stat_result, found: Read) -> None:
    _forget(connection, relative)
    connection.execute("INSERT INTO files (path, dir, size, mtime_ns, problem) VALUES (?, ?, ?, ?, ?)",
                       (relative, _parent(relative), status.st_size, status.st_mtime_ns, found.problem))
    for doc in found.docs:
        cursor = connection.execute("INSERT INTO docs (file, key, title, extra, date) VALUES (?, ?, ?, ?, ?)",
                                    (relative, doc.key, doc.title, json.dumps(doc.extra, ensure_ascii=False),
                                     doc.date))
        connection.execute("INSERT INTO docs_fts (rowid, title, body) VALUES (?, ?, ?)",
                           (cursor.lastrowid, doc.title, doc.body))


def _parent(relative: str) -> str:
    return relative.rpartition("/")[0]


def _forget(connection: sqlite3.Connection, relative: str) -> None:
    ids = [r[0] for r in connection.execute("SELECT id FROM docs WHERE file = ?", (relative,))]
    connection.executemany("DELETE FROM docs_fts WHERE rowid = ?", [(i,) for i in ids])
    connection.execute("DELETE FROM docs WHERE file = ?", (relative,))
    connection.execute("DELETE FROM files WHERE path = ?", (relative,))


class _Walk:
    """One walk of the folder: what it saw and listed, for `refresh` to compare with the index."""

    def __init__(self, known: dict[str, int], children: dict[str, list[str]], seen: dict[str, int],
                 listed: dict[str, os.stat_result], listed_dirs: set[str], suffixes: tuple[str, ...],
                 sweep: bool) -> None:
        self.known, self.children, self.seen = known, children, seen
        self.listed, self.listed_dirs, self.suffixes, self.sweep = listed, listed_dirs, suffixes, sweep
        self.now_ns = time.time_ns()

    def folder(self, path: str, relative: str, depth: int) -> None:
        try:
            # The root itself may be a link the person made (~/Notes -> a synced folder); nothing under it may.
            status = os.stat(path) if depth == 0 else os.lstat(path)
        except OSError:
            return
        if not stat.S_ISDIR(status.st_mode):
            return
        settled = self.now_ns - status.st_mtime_ns > _SETTLE_NS
        self.seen[relative] = status.st_mtime_ns if settled else 0
        if depth >= MAX_DEPTH:
            return
        if not self.sweep and settled and self.known.get(relative) == status.st_mtime_ns:
            for child in self.children.get(relative, ()):
                self.folder(f"{path}/{child.rpartition('/')[2]}", child, depth + 1)
            return
        self.listed_dirs.add(relative)
        for entry in _entries(path):
            if entry.name.startswith("."):
                continue
            child = f"{relative}/{entry.name}" if relative else entry.name
            if entry.is_dir(follow_symlinks=False):
                self.folder(entry.path, child, depth + 1)
            elif entry.is_file(follow_symlinks=False) and entry.name.lower().endswith(self.suffixes):
                try:
                    self.listed[child] = entry.stat(follow_symlinks=False)
                except OSError:
                    continue


def _entries(folder: str) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            yield from list(entries)
    except OSError:
        return
