"""Writing sessions into the store: upserts of sessions and messages, indexed a batch at a time, and the record
of which source files were read."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from gateway import mask
from gateway_sessions.model import Session, paths_of, text_of
from gateway_sessions.store import calls
from gateway_sessions.store.impact import Maintainer

_UPSERT_SESSION = """
INSERT INTO sessions(agent, id, parent_id, title, given_title, cwd, created_at, updated_at, source)
VALUES (:agent, :id, :parent_id, :title, :given_title, :cwd, :created_at, :updated_at, :source)
ON CONFLICT(agent, id) DO UPDATE SET
    parent_id = CASE WHEN excluded.parent_id != '' THEN excluded.parent_id ELSE parent_id END,
    title = CASE WHEN excluded.title != '' THEN excluded.title ELSE title END,
    given_title = CASE WHEN excluded.title != '' THEN excluded.given_title ELSE given_title END,
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


# Content blocks as stored: compact JSON, non-ASCII kept; one encoder for all (json.dumps with options makes one per
# call). The text is what re-imports compare to tell a changed message, so it must not change between versions.
_encode_blocks = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class Writes:
    """Upserts of sessions and their messages within one transaction, the new messages indexed together.

    Every message row up to `indexed_to` (rowids) is in the search index; the rows after it, written by this
    transaction, are not yet: index_new() puts them there in one INSERT ... SELECT, and commit() does so before it
    commits, so that no transaction ever commits a message without its index entry, or the reverse. The triggers that
    keep the index right when a message changes or goes need its row in the index beforehand: before an upsert touches
    a session whose new messages wait to be indexed, or deletes messages, those waiting are indexed first.

    Create it inside the caller's transaction (or with begin()), so that `indexed_to` is read under the write lock.
    """

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self.indexed_to = self._last_rowid()
        self.messages = 0  # messages handed to upsert() so far
        self._waiting: set[int] = set()  # sessions (rowids) with messages written but not yet indexed
        self.impact = Maintainer(connection)  # the search's lists of common words, kept right as we write

    @classmethod
    def begin(cls, connection: sqlite3.Connection) -> Writes:
        """BEGIN IMMEDIATE (the write lock now, not at the first write), and the writes of that transaction."""
        connection.execute("BEGIN IMMEDIATE")
        try:
            return cls(connection)
        except BaseException:
            connection.execute("ROLLBACK")
            raise

    def _last_rowid(self) -> int:
        return self.connection.execute("SELECT coalesce(max(rowid), 0) FROM messages").fetchone()[0]

    def upsert(self, session: Session, source: str = "", dropped: Sequence[str] = ()) -> int:
        """Add or update one session and its messages (keyed by agent, session id and message key); its rowid.

        Messages are never removed because a file no longer has them (agents delete old transcripts); only the keys
        in `dropped`, which the agent itself took back (a rewind), are. New messages are indexed by index_new().
        """
        connection = self.connection
        rowid = connection.execute(
            _UPSERT_SESSION,
            {
                "agent": session.agent,
                "id": session.id,
                "parent_id": session.parent_id,
                "title": session.title,
                "given_title": session.given_title,
                "cwd": session.cwd,
                "created_at": session.created_at,
                "updated_at": session.updated_at or session.created_at,
                "source": source,
            },
        ).fetchone()[0]
        if rowid in self._waiting:
            # Written earlier in this transaction: its rows must be in the index before the triggers change them.
            self.index_new()
        latest = {message.key: message for message in session.messages}  # one row per key, the last version
        # Rows already stored as they are (a transcript grown by a line) are passed over before they are masked; the
        # statement's WHERE would leave them as they are too, after masking each (issue 13: a refresh per call).
        stored = {key: (seq, role, blocks) for key, seq, role, blocks in connection.execute(
            "SELECT key, seq, role, blocks FROM messages WHERE session = ?", (rowid,))}
        rows = ((seq, message, _encode_blocks(message.blocks)) for seq, message in enumerate(latest.values()))
        changed = [(seq, message, blocks) for seq, message, blocks in rows
                   if stored.get(message.key) != (seq, message.role, blocks)]
        connection.executemany(
            _UPSERT_MESSAGE,
            (
                (
                    rowid,
                    message.key,
                    seq,
                    message.role,
                    message.timestamp,
                    mask(text_of(message.blocks)),  # stored and indexed masked: see the module's docstring
                    blocks,
                )
                for seq, message, blocks in changed
            ),
        )
        # The tool calls of the messages written anew (store/calls.py); a command's paths are places too.
        named = calls.record(
            connection,
            rowid,
            session.cwd,
            ((seq, message.key, message.timestamp, message.blocks) for seq, message, _ in changed),
            session.updated_at or session.created_at,
            replaced=stored,
        )
        connection.executemany(
            "INSERT OR IGNORE INTO session_paths(session, path) VALUES (?, ?)",
            ((rowid, path) for path in paths_of(session) | named),
        )
        self._waiting.add(rowid)
        self.messages += len(session.messages)
        if dropped:
            self.index_new()
            calls.forget(connection, rowid, dropped)
            connection.executemany(
                "DELETE FROM messages WHERE session = ? AND key = ?", ((rowid, k) for k in dropped)
            )
            # Every row left is indexed; the next new one may take the rowid of a deleted last one.
            self.indexed_to = self._last_rowid()
        connection.execute(
            "UPDATE sessions SET message_count = (SELECT count(*) FROM messages WHERE session = ?) WHERE rowid = ?",
            (rowid, rowid),
        )
        return rowid

    def index_new(self) -> None:
        """Index the messages written since the last time, in one statement."""
        if not self._waiting:
            return
        self.connection.execute(
            "INSERT INTO messages_fts(rowid, text) SELECT rowid, text FROM messages WHERE rowid > ?",
            (self.indexed_to,),
        )
        self.impact.changed(self.indexed_to)
        self.indexed_to = self._last_rowid()
        self._waiting.clear()

    def commit(self) -> None:
        """Index what waits, then COMMIT; on any failure, ROLLBACK (nothing of the transaction is kept)."""
        try:
            self.index_new()
            self.impact.changed(self.indexed_to)  # removals not yet counted, if any
            self.impact.finish()
            self.connection.execute("COMMIT")
        except BaseException:
            self.rollback()
            raise
        finally:
            self.impact.close()

    def rollback(self) -> None:
        if self.connection.in_transaction:
            self.connection.execute("ROLLBACK")


def upsert(
    connection: sqlite3.Connection, session: Session, source: str = "", dropped: Sequence[str] = ()
) -> int:
    """One session upserted (see Writes.upsert) and its new messages indexed, in the caller's transaction."""
    writes = Writes(connection)
    rowid = writes.upsert(session, source, dropped)
    writes.index_new()
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


def file_signature(path: Path) -> tuple[int, int]:
    status = os.stat(path)
    return status.st_size, status.st_mtime_ns
