"""The session store: one SQLite file with sessions, their messages (content blocks kept whole) and an FTS5 index.

The same file holds the cron plugin's ``cron_jobs`` table (a store the two plugins share; each creates only its own
tables). The MCP side opens it read-only; only ``gateway sessions import`` writes.
"""

from __future__ import annotations

import base64
import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

from gateway_sessions.model import Session, text_of

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions(
    rowid INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    id TEXT NOT NULL,
    parent_id TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL DEFAULT '',
    cwd TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0,
    source TEXT NOT NULL DEFAULT '',
    UNIQUE(agent, id)
);
CREATE INDEX IF NOT EXISTS idx_sessions_updated_at ON sessions(updated_at DESC);
CREATE INDEX IF NOT EXISTS idx_sessions_created_at ON sessions(created_at DESC);
CREATE INDEX IF NOT EXISTS idx_sessions_id ON sessions(id);
CREATE INDEX IF NOT EXISTS idx_sessions_cwd ON sessions(cwd);

CREATE TABLE IF NOT EXISTS messages(
    rowid INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions(rowid) ON DELETE CASCADE,
    key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL DEFAULT '',
    blocks TEXT NOT NULL,
    UNIQUE(session, key)
);
CREATE INDEX IF NOT EXISTS idx_messages_session_seq ON messages(session, seq);

CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(
    text, content='messages', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2'
);
DROP TRIGGER IF EXISTS messages_fts_insert;
-- New messages are indexed a session at a time by upsert() (one INSERT ... SELECT is several times faster than a
-- trigger per row); changed and deleted ones by these triggers.
CREATE TRIGGER IF NOT EXISTS messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_update AFTER UPDATE OF text ON messages
WHEN old.text IS NOT new.text BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO messages_fts(rowid, text) VALUES (new.rowid, new.text);
END;

-- What each source file looked like when it was last read, so that an unchanged file is not read again.
CREATE TABLE IF NOT EXISTS sources(
    path TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    broken_lines INTEGER NOT NULL DEFAULT 0
);
"""

_UPSERT_SESSION = """
INSERT INTO sessions(agent, id, parent_id, title, cwd, created_at, updated_at, source)
VALUES (:agent, :id, :parent_id, :title, :cwd, :created_at, :updated_at, :source)
ON CONFLICT(agent, id) DO UPDATE SET
    parent_id = CASE WHEN excluded.parent_id != '' THEN excluded.parent_id ELSE parent_id END,
    title = CASE WHEN excluded.title != '' THEN excluded.title ELSE title END,
    cwd = CASE WHEN excluded.cwd != '' THEN excluded.cwd ELSE cwd END,
    created_at = min(created_at, excluded.created_at),
    updated_at = max(updated_at, excluded.updated_at),
    source = excluded.source
RETURNING rowid
"""

_UPSERT_MESSAGE = """
INSERT INTO messages(session, key, seq, role, created_at, text, blocks) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(session, key) DO UPDATE SET
    seq = excluded.seq, role = excluded.role, created_at = excluded.created_at,
    text = excluded.text, blocks = excluded.blocks
WHERE blocks IS NOT excluded.blocks OR seq IS NOT excluded.seq OR role IS NOT excluded.role
"""

_SESSION_COLUMNS = (
    "s.rowid, s.agent, s.id, s.parent_id, s.title, s.cwd, s.created_at, s.updated_at, s.message_count"
)


@frozen
class Row:
    """A session's header as stored."""

    rowid: int
    agent: str
    id: str
    parent_id: str
    title: str
    cwd: str
    created_at: str
    updated_at: str
    message_count: int


@frozen
class StoredMessage:
    index: int
    role: str
    created_at: str
    text: str
    blocks: list[dict[str, Any]]


@frozen
class Hit:
    """One session found by a search: its best message's rank (BM25, lower is better) and that message's rowid."""

    session: Row
    rank: float
    message_rowid: int


class SearchError(Exception):
    """SQLite refused the query (an FTS5 syntax error, most often); the message is SQLite's own."""


# --- opening -------------------------------------------------------------------------------------------


def open_for_writing(path: Path) -> sqlite3.Connection:
    """Open (creating if need be) the store to import into: WAL, foreign keys, the schema in place."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("PRAGMA foreign_keys=ON")
    connection.executescript(SCHEMA)
    return connection


_readers: dict[tuple[str, int], tuple[int, Reader]] = {}
_readers_lock = threading.Lock()


def reader(path: Path) -> Reader | None:
    """A read-only handle on the store, kept open between calls (one per thread); None when there is no store yet."""
    try:
        inode = path.stat().st_ino
    except FileNotFoundError:
        return None
    key = (str(path), threading.get_ident())
    with _readers_lock:
        cached = _readers.get(key)
        if cached is not None and cached[0] == inode:
            return cached[1]
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
        found = Reader(connection)
        _readers[key] = (inode, found)
        if cached is not None:
            cached[1].connection.close()
        return found


def _quote_list(values: Iterable[str]) -> str:
    return json.dumps(sorted(values))


# --- writing -------------------------------------------------------------------------------------------


def upsert(
    connection: sqlite3.Connection, session: Session, source: str = "", dropped: Sequence[str] = ()
) -> int:
    """Add or update one session and its messages (keyed by agent, session id and message key); returns its rowid.

    Messages are never removed because a file no longer has them (agents delete old transcripts); only the keys in
    `dropped`, which the agent itself took back (a rewind), are.
    """
    rowid = connection.execute(
        _UPSERT_SESSION,
        {
            "agent": session.agent,
            "id": session.id,
            "parent_id": session.parent_id,
            "title": session.title,
            "cwd": session.cwd,
            "created_at": session.created_at,
            "updated_at": session.updated_at or session.created_at,
            "source": source,
        },
    ).fetchone()[0]
    # Every message row is in the index before anything can update or delete it: the triggers rely on that.
    high_water = connection.execute("SELECT coalesce(max(rowid), 0) FROM messages").fetchone()[0]
    latest = {message.key: message for message in session.messages}  # one row per key, the last version
    connection.executemany(
        _UPSERT_MESSAGE,
        (
            (
                rowid,
                message.key,
                seq,
                message.role,
                message.timestamp,
                text_of(message.blocks),
                json.dumps(message.blocks, ensure_ascii=False, separators=(",", ":")),
            )
            for seq, message in enumerate(latest.values())
        ),
    )
    connection.execute(
        "INSERT INTO messages_fts(rowid, text) SELECT rowid, text FROM messages WHERE rowid > ?",
        (high_water,),
    )
    if dropped:
        connection.executemany(
            "DELETE FROM messages WHERE session = ? AND key = ?", ((rowid, k) for k in dropped)
        )
    connection.execute(
        "UPDATE sessions SET message_count = (SELECT count(*) FROM messages WHERE session = ?) WHERE rowid = ?",
        (rowid, rowid),
    )
    return rowid


def source_unchanged(connection: sqlite3.Connection, path: str, size: int, mtime_ns: int) -> bool:
    row = connection.execute("SELECT size, mtime_ns FROM sources WHERE path = ?", (path,)).fetchone()
    return row is not None and tuple(row) == (size, mtime_ns)


def record_source(
    connection: sqlite3.Connection, path: str, agent: str, size: int, mtime_ns: int, broken_lines: int
) -> None:
    connection.execute(
        "INSERT INTO sources(path, agent, size, mtime_ns, broken_lines) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns, "
        "broken_lines = excluded.broken_lines",
        (path, agent, size, mtime_ns, broken_lines),
    )


# --- reading -------------------------------------------------------------------------------------------


class Reader:
    """Queries on an open store. `closed` is the set of working directories whose sessions may not be given."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self._cwd_counts: tuple[int, dict[str, int]] | None = None

    def has_sessions_table(self) -> bool:
        return (
            self.connection.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sessions'"
            ).fetchone()
            is not None
        )

    def cwd_counts(self) -> dict[str, int]:
        """How many sessions ran in each working directory; cached until someone writes to the file."""
        version = self.connection.execute("PRAGMA data_version").fetchone()[0]
        if self._cwd_counts is None or self._cwd_counts[0] != version:
            counts = dict(
                self.connection.execute("SELECT cwd, count(*) FROM sessions GROUP BY cwd").fetchall()
            )
            self._cwd_counts = (version, counts)
        return self._cwd_counts[1]

    def recent(self, limit: int, closed: Sequence[str] = ()) -> list[Row]:
        """Sessions newest first (by last activity), through the updated_at index."""
        return [Row(*row) for row in self.connection.execute(*recent_query(limit, closed))]

    def find(self, session_id: str) -> Row | None:
        """The session with this id; should two agents share one, the one updated last."""
        row = self.connection.execute(
            f"SELECT {_SESSION_COLUMNS} FROM sessions AS s WHERE s.id = ? ORDER BY s.updated_at DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        return None if row is None else Row(*row)

    def texts(self, session: Row) -> Iterator[tuple[int, str, str, str]]:
        """(index, role, timestamp, text) of each message, without decoding the content blocks."""
        rows = self.connection.execute(
            "SELECT role, created_at, text FROM messages WHERE session = ? ORDER BY seq, rowid",
            (session.rowid,),
        )
        for index, (role, created_at, text) in enumerate(rows):
            yield index, role, created_at, text

    def messages(self, session: Row) -> Iterator[StoredMessage]:
        rows = self.connection.execute(
            "SELECT role, created_at, text, blocks FROM messages WHERE session = ? ORDER BY seq, rowid",
            (session.rowid,),
        )
        for index, (role, created_at, text, blocks) in enumerate(rows):
            yield StoredMessage(index, role, created_at, text, json.loads(blocks))

    def search(self, query: str, limit: int, closed: Sequence[str] = ()) -> list[Hit]:
        """Sessions whose messages match an FTS5 query, best first: each session ranked by its best message.

        The best `window` messages are ranked by FTS5 alone (its ORDER BY rank LIMIT is far cheaper than sorting
        every match joined to its session); the window grows until it holds `limit` sessions or every match. The
        first `limit` sessions of a window are the first of the whole ranking, so the answer is the same.
        """
        where, params = _closed_clause(closed, prefix="AND")
        window = max(limit * 5, 50)
        try:
            while True:
                best = self.connection.execute(
                    "SELECT rowid, rank FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rank LIMIT ?",
                    (query, window),
                ).fetchall()
                hits = self._sessions_of(best, limit, where, params)
                if len(hits) >= limit or len(best) < window:
                    return hits
                window *= 8
        except sqlite3.OperationalError as error:
            raise SearchError(str(error)) from error

    def _sessions_of(
        self, best: list[tuple[int, float]], limit: int, where: str, params: tuple[str, ...]
    ) -> list[Hit]:
        rows = {
            row[0]: row[1:]
            for row in self.connection.execute(
                f"SELECT m.rowid, {_SESSION_COLUMNS} FROM messages AS m JOIN sessions AS s ON s.rowid = m.session "
                f"WHERE m.rowid IN (SELECT value FROM json_each(?)) {where}",
                (json.dumps([rowid for rowid, _rank in best]), *params),
            )
        }
        hits: dict[int, Hit] = {}
        for rowid, rank in best:
            row = rows.get(rowid)
            if row is not None and row[0] not in hits:
                hits[row[0]] = Hit(Row(*row), rank, rowid)
                if len(hits) == limit:
                    break
        return list(hits.values())

    def marked(self, query: str, message_rowid: int) -> str:
        """A message's text with the query's matches between \\x02 and \\x03 (to place a snippet)."""
        row = self.connection.execute(
            "SELECT highlight(messages_fts, 0, char(2), char(3)) FROM messages_fts WHERE messages_fts MATCH ? "
            "AND rowid = ?",
            (query, message_rowid),
        ).fetchone()
        return "" if row is None else row[0]

    def page(
        self, cursor: str | None, limit: int, closed: Sequence[str] = ()
    ) -> tuple[list[Row], str | None]:
        """One page of sessions, newest first by start time, for resources/list.

        The cursor holds the last position and the highest rowid when the walk began, so sessions imported during the
        walk neither shift the pages nor appear twice (they show up on the next walk).
        """
        position = _decode_cursor(cursor)
        where, params = _closed_clause(closed, prefix="AND")
        if position is None:
            ceiling = self.connection.execute("SELECT coalesce(max(rowid), 0) FROM sessions").fetchone()[0]
            after, after_params = "", ()
        else:
            ceiling = position["ceiling"]
            after, after_params = (
                "AND (s.created_at, s.rowid) < (?, ?)",
                (position["created_at"], position["rowid"]),
            )
        rows = [
            Row(*row)
            for row in self.connection.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions AS s WHERE s.rowid <= ? {after} {where} "
                "ORDER BY s.created_at DESC, s.rowid DESC LIMIT ?",
                (ceiling, *after_params, *params, limit + 1),
            )
        ]
        if len(rows) <= limit:
            return rows, None
        rows = rows[:limit]
        last = rows[-1]
        return rows, _encode_cursor({"created_at": last.created_at, "rowid": last.rowid, "ceiling": ceiling})


def recent_query(limit: int, closed: Sequence[str] = ()) -> tuple[str, tuple[Any, ...]]:
    where, params = _closed_clause(closed)
    sql = f"SELECT {_SESSION_COLUMNS} FROM sessions AS s {where} ORDER BY s.updated_at DESC LIMIT ?"
    return sql, (*params, limit)


def _closed_clause(closed: Sequence[str], prefix: str = "WHERE") -> tuple[str, tuple[str, ...]]:
    if not closed:
        return "", ()
    return f"{prefix} s.cwd NOT IN (SELECT value FROM json_each(?))", (_quote_list(closed),)


def _encode_cursor(position: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(position, separators=(",", ":")).encode()).decode().rstrip("=")


class CursorError(ValueError):
    pass


def _decode_cursor(cursor: str | None) -> dict[str, Any] | None:
    if not cursor:
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        position = json.loads(raw)
        if not (
            isinstance(position, dict)
            and isinstance(position.get("created_at"), str)
            and isinstance(position.get("rowid"), int)
            and isinstance(position.get("ceiling"), int)
        ):
            raise ValueError(position)
    except (ValueError, json.JSONDecodeError) as error:
        raise CursorError("this cursor was not given by this server; start again without one") from error
    return position


def default_path(data_folder: Path) -> Path:
    """``<the plugin's data folder>/sessions.db``."""
    return data_folder / "sessions.db"


def file_signature(path: Path) -> tuple[int, int]:
    status = os.stat(path)
    return status.st_size, status.st_mtime_ns
