"""The session store: one SQLite file with sessions, their messages (content blocks kept whole) and an FTS5 index.

What a tool can search or be shown is stored masked (`messages.text`, `sessions.title`), with the masks of the version
recorded in `meta`; the content blocks, which only the person's own command line shows, are kept as the agent wrote
them, so that the masked copies can be made again when the masks change. The same file holds the cron plugin's ``cron_jobs`` table (a store the two plugins share; each creates only its own
tables). The MCP side opens it read-only; only ``gateway sessions import`` writes.
"""

from __future__ import annotations

import base64
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from operator import itemgetter
from pathlib import Path
from typing import Any

from attrs import frozen

from gateway.privacy import MASKS_VERSION, clip, mask
from gateway_sessions.model import Session, first_words_of, paths_of, text_of, tool_paths

SCHEMA_TEMPLATE = """
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
    given_title TEXT NOT NULL DEFAULT '',
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

CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5({FTS_ARGUMENTS});
DROP TRIGGER IF EXISTS messages_fts_insert;
{TRIGGERS}

-- Every place a session belongs to: each working directory it recorded and each path its tool calls named. The gate
-- judges each distinct path once (tools._scope), then the sessions are found by path through the index.
CREATE TABLE IF NOT EXISTS session_paths(
    session INTEGER NOT NULL REFERENCES sessions(rowid) ON DELETE CASCADE,
    path TEXT NOT NULL,
    PRIMARY KEY(session, path)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idx_session_paths_path ON session_paths(path, session);

-- masks_version: the gateway.privacy.MASKS_VERSION the masked columns and the index were made with.
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);

-- What each source file looked like when it was last read, so that an unchanged file is not read again.
CREATE TABLE IF NOT EXISTS sources(
    path TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    broken_lines INTEGER NOT NULL DEFAULT 0
);
"""

# New messages are indexed by Writes.index_new(), those of many files in one INSERT ... SELECT (several times faster
# than a trigger per row, or a statement per session); changed and deleted ones by these triggers, which need the row
# to be in the index already (Writes sees to it). Statements of their own, so that a rebuild can make them again
# inside its transaction (executescript would commit it).
TRIGGERS = (
    """CREATE TRIGGER IF NOT EXISTS messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END""",
    """CREATE TRIGGER IF NOT EXISTS messages_fts_update AFTER UPDATE OF text ON messages
WHEN old.text IS NOT new.text BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO messages_fts(rowid, text) VALUES (new.rowid, new.text);
END""",
)

# The search index's options. `prefix`: words of 2, 3 and 4 characters' beginnings have an index of their own, so that
# a prefix query (`tusr*`) reads one list instead of merging those of every word it begins (see README, "Search").
# A store whose index was made with other options is rebuilt by open_for_writing() (`gateway sessions import`).
TOKENIZE = "unicode61 remove_diacritics 2"
FTS_ARGUMENTS = f"text, content='messages', content_rowid='rowid', tokenize='{TOKENIZE}', prefix='2 3 4'"
SCHEMA = SCHEMA_TEMPLATE.replace("{FTS_ARGUMENTS}", FTS_ARGUMENTS).replace(
    "{TRIGGERS}", "".join(f"{trigger};\n" for trigger in TRIGGERS)
)

# How many matching messages a search ranks by BM25 at a time: the newest (by rowid, the order they were imported in).
# When no more than this many messages of open sessions match, every one is ranked and the order is FTS5's own; when
# more match, the hits are the best of the newest RANKED_AT_ONCE, and a search says so (Found.complete is False).
# FTS5 computes BM25 at about 1-3 microseconds a message, plus a read of each word's whole list for its IDF, so
# ranking every one of 100,000 matches takes 100 ms or more; see README, "Search".
RANKED_AT_ONCE = 1000

# How many messages an import writes in one transaction, whole files at a time (a file is never split): the new ones
# are indexed together at the end, in one statement. FTS5 writes what each multi-row statement indexes as a segment of
# its own (it flushes at the statement's savepoint, even inside a transaction), and every segment costs merges later
# on: indexing a session at a time made the FTS inserts about twice as costly as indexing 20,000 messages at once. An interruption loses at most this batch
# (rolled back whole; its files are read again by the next import). See README, "Importing: how fast, and why".
BATCH_MESSAGES = 20_000

# FTS5's `hashsize`: how many bytes of pending index entries it holds in memory before writing a segment (1 MB by
# default, which the prefix indexes, four entries a word, fill after a few thousand messages). A setting of the index
# kept in its own config table, used only when writing; what is indexed, and how it is searched, is the same.
HASHSIZE = 16 * 1024 * 1024

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


@frozen
class Found:
    """What a search found: the hits, best first, and how many matching messages were ranked to find them.

    `complete` is True when every message (of the sessions the gate lets through) that matches was ranked: the hits
    are then exactly the best by BM25. When False, more messages match than were ranked, and the hits are the best
    of the `ranked` newest.
    """

    hits: list[Hit]
    ranked: int
    complete: bool


class SearchError(Exception):
    """SQLite refused the query (an FTS5 syntax error, most often); the message is SQLite's own."""


# --- opening -------------------------------------------------------------------------------------------


def open_for_writing(path: Path, say: Callable[[str], None] | None = None) -> sqlite3.Connection:
    """Open (creating if need be) the store to import into: WAL, foreign keys, the schema in place.

    A store whose masked copies were made with other masks (or before there were any) has them made again here, and
    a search index with other options is rebuilt, each in one transaction (an interruption leaves the store as it
    was); `say` is told before and after, with how long it took, so that ``gateway sessions import`` (or the first
    tool call, on standard error) can tell the person why this run is slower.
    """
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    connection = sqlite3.connect(path, isolation_level=None, timeout=30)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("PRAGMA foreign_keys=ON")
    legacy_titles = _add_missing_columns(connection)
    connection.executescript(SCHEMA)
    say = say or (lambda _sentence: None)
    if not masks_are_current(connection):
        _remask(connection, say, legacy_titles)
    if not index_is_current(connection):
        _rebuild_index(connection, say)
    hashsize = connection.execute("SELECT v FROM messages_fts_config WHERE k = 'hashsize'").fetchone()
    if hashsize is None or hashsize[0] != HASHSIZE:
        connection.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('hashsize', ?)", (HASHSIZE,))
    return connection


def index_is_current(connection: sqlite3.Connection) -> bool:
    """Whether the store's search index was made with this version's options (a missing one is made by SCHEMA)."""
    row = connection.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'messages_fts'"
    ).fetchone()
    return row is None or " ".join(row[0].split()).endswith(f"fts5({FTS_ARGUMENTS})")


def masks_are_current(connection: sqlite3.Connection) -> bool:
    """Whether the store's masked copies and index were made with this version's masks (a store without one: no)."""
    try:
        row = connection.execute("SELECT value FROM meta WHERE key = 'masks_version'").fetchone()
    except sqlite3.OperationalError:  # no meta table: made before the index was masked
        return False
    return row is not None and row[0] == str(MASKS_VERSION)


def _add_missing_columns(connection: sqlite3.Connection) -> bool:
    """Add the columns a store made by an earlier version lacks; True when `given_title` had to be added."""
    columns = {row[1] for row in connection.execute("PRAGMA table_info(sessions)")}
    if columns and "given_title" not in columns:
        connection.execute("ALTER TABLE sessions ADD COLUMN given_title TEXT NOT NULL DEFAULT ''")
        return True
    return False


def _legacy_first_words(texts: list[tuple[str, str]], limit: int = 80) -> str:
    """The title earlier versions made of a session's first words (raw text cut), to tell it from an agent's own."""
    for role, text in texts:
        text = " ".join(text.split())
        if role == "user" and text and not text.startswith("<"):
            return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
    return ""


# How many sessions the re-masking reads, masks and writes back at a time (memory, not speed).
_REMASK_SESSIONS = 500


def _remask(connection: sqlite3.Connection, say: Callable[[str], None], legacy_titles: bool) -> None:
    """Mask every message's text and every title again from what the agents wrote, and index them again.

    One transaction: the index is dropped, the texts are rewritten (no trigger to feed an index being rebuilt), the
    index is made again from them, and the masks' version is recorded; an interruption leaves the store as it was.
    The places of each session (session_paths) are filled from its tool calls on the way, for stores made before
    they were kept. In a store made before titles were masked, a title that is not the old cut of the first words
    is taken for the agent's own.
    """
    count = connection.execute("SELECT count(*) FROM messages").fetchone()[0]
    noisy = count > 0
    if noisy:
        say(
            f"masking the sessions store again with this version's masks ({count:,} messages; once, one to two "
            "minutes a million messages)…"
        )
    started = time.monotonic()
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute("DROP TRIGGER IF EXISTS messages_fts_delete")
        connection.execute("DROP TRIGGER IF EXISTS messages_fts_update")
        connection.execute("DROP TABLE IF EXISTS messages_fts")
        sessions = [row[0] for row in connection.execute("SELECT rowid FROM sessions ORDER BY rowid")]
        for start in range(0, len(sessions), _REMASK_SESSIONS):
            _remask_sessions(connection, sessions[start : start + _REMASK_SESSIONS], legacy_titles)
        connection.execute(f"CREATE VIRTUAL TABLE messages_fts USING fts5({FTS_ARGUMENTS})")
        for trigger in TRIGGERS:
            connection.execute(trigger)
        connection.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
        connection.execute(
            "INSERT INTO meta(key, value) VALUES ('masks_version', ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (str(MASKS_VERSION),),
        )
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
    if noisy:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        say(
            f"sessions store masked again: {count:,} messages masked and indexed in {time.monotonic() - started:.1f} s"
        )


def _remask_sessions(connection: sqlite3.Connection, rowids: list[int], legacy_titles: bool) -> None:
    heads = connection.execute(
        "SELECT rowid, title, given_title, cwd FROM sessions WHERE rowid IN (SELECT value FROM json_each(?))",
        (json.dumps(rowids),),
    ).fetchall()
    rows = connection.execute(
        "SELECT rowid, session, role, text, blocks FROM messages WHERE session IN (SELECT value FROM json_each(?)) "
        "ORDER BY session, seq, rowid",
        (json.dumps(rowids),),
    ).fetchall()
    by_session: dict[int, list[tuple[int, str, str, list[dict[str, Any]]]]] = {}
    for rowid, session, role, text, blocks in rows:
        by_session.setdefault(session, []).append((rowid, role, text, json.loads(blocks)))
    texts, titles, places = [], [], []
    for session, title, given_title, cwd in heads:
        messages = by_session.get(session, [])
        raw = [(role, text_of(blocks)) for _rowid, role, _text, blocks in messages]
        for (rowid, _role, old, _blocks), (_role2, words) in zip(messages, raw, strict=True):
            masked = mask(words)
            if masked != old:
                texts.append((masked, rowid))
        if legacy_titles and title and title != _legacy_first_words(raw):
            given_title = title
        titles.append((clip(given_title) if given_title else first_words_of(raw), given_title, session))
        found = {cwd} if cwd else set()
        for _rowid, _role, _text, blocks in messages:
            found |= tool_paths(blocks, cwd)
        places.extend((session, path) for path in found)
    connection.executemany("UPDATE messages SET text = ? WHERE rowid = ?", texts)
    connection.executemany("UPDATE sessions SET title = ?, given_title = ? WHERE rowid = ?", titles)
    connection.executemany("INSERT OR IGNORE INTO session_paths(session, path) VALUES (?, ?)", places)


def _rebuild_index(connection: sqlite3.Connection, say: Callable[[str], None]) -> None:
    count = connection.execute("SELECT count(*) FROM messages").fetchone()[0]
    say(
        f"upgrading the search index of the sessions store to this version's ({count:,} messages; once, "
        "about half a minute a million messages)…"
    )
    started = time.monotonic()
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute("DROP TABLE messages_fts")
        connection.execute(f"CREATE VIRTUAL TABLE messages_fts USING fts5({FTS_ARGUMENTS})")
        connection.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    say(f"search index upgraded: {count:,} messages indexed again in {time.monotonic() - started:.1f} s")


# The read-only side maps the file into memory (no read() call for each page FTS5, the ranking and the gate's lookups
# touch) and keeps a larger page cache than SQLite's 2 MB default; both only cost address space and memory the
# system can take back. SQLite caps mmap_size at its compile-time maximum (2 GB in most builds).
READ_PRAGMAS = ("PRAGMA mmap_size = 4294967296", "PRAGMA cache_size = -32768")

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
        connection = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False, isolation_level=None
        )
        for pragma in READ_PRAGMAS:
            connection.execute(pragma)
        found = Reader(connection)
        _readers[key] = (inode, found)
        if cached is not None:
            cached[1].close()
        return found


# --- writing -------------------------------------------------------------------------------------------


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
                    _encode_blocks(message.blocks),
                )
                for seq, message in enumerate(latest.values())
            ),
        )
        connection.executemany(
            "INSERT OR IGNORE INTO session_paths(session, path) VALUES (?, ?)",
            ((rowid, path) for path in paths_of(session)),
        )
        self._waiting.add(rowid)
        self.messages += len(session.messages)
        if dropped:
            self.index_new()
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
        self.indexed_to = self._last_rowid()
        self._waiting.clear()

    def commit(self) -> None:
        """Index what waits, then COMMIT; on any failure, ROLLBACK (nothing of the transaction is kept)."""
        try:
            self.index_new()
            self.connection.execute("COMMIT")
        except BaseException:
            self.rollback()
            raise

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


# --- reading -------------------------------------------------------------------------------------------


# A path's verdict, for Reader.keep_back: in no project, in projects all open, in a closed one.
OUTSIDE, OPEN, CLOSED = 0, 1, 2


class Reader:
    """Queries on an open store.

    `gated` (on the queries that list or search) says to leave out the sessions of the temporary table
    ``kept_back``, which keep_back() fills for the gate of the call.
    """

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self._version: int | None = None
        self._masks_current = False
        self._scratch: sqlite3.Connection | None = None
        self._kept_for: Any = None  # the key whose sessions are in temp.kept_back now
        # What callers work out from the store (the gate's verdict on each path, how many sessions it keeps back),
        # kept as long as the store is unchanged: emptied whenever someone writes to the file.
        self.derived: dict[Any, Any] = {}
        connection.execute("CREATE TEMP TABLE IF NOT EXISTS kept_back(rowid INTEGER PRIMARY KEY)")

    @contextmanager
    def snapshot(self) -> Generator[None, None, None]:
        """One read transaction around a call: what the gate keeps back and what the query walks are of one state
        of the file, so a session imported meanwhile (at a place never judged) cannot slip between the two."""
        if self.connection.in_transaction:
            yield
            return
        self.connection.execute("BEGIN")
        try:
            yield
        finally:
            if self.connection.in_transaction:
                self.connection.execute("COMMIT")  # only the temporary table was written

    def _fresh(self) -> None:
        """Forget what was worked out from the store once someone else has written to it."""
        version = self.connection.execute("PRAGMA data_version").fetchone()[0]
        if version != self._version:
            self._version = version
            self.derived.clear()
            self._kept_for = None
            self._masks_current = masks_are_current(self.connection)

    def masks_current(self) -> bool:
        """Whether what is stored masked was masked by this version's masks (else nothing may be given from it)."""
        self._fresh()
        return self._masks_current

    def has_sessions_table(self) -> bool:
        return (
            self.connection.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sessions'"
            ).fetchone()
            is not None
        )

    def paths(self) -> list[str]:
        """Every distinct place (working directory, path of a tool call) of every session, through its index."""
        self._fresh()
        return [row[0] for row in self.connection.execute("SELECT DISTINCT path FROM session_paths")]

    def keep_back(
        self, key: Any, verdicts: dict[str, int], judge: Callable[[str], int], outside_open: bool
    ) -> int:
        """Put in ``kept_back`` the sessions the gate may not give; how many they are. Kept until the store changes.

        `judge` gives a place's verdict: OUTSIDE, OPEN or CLOSED; it is asked once per distinct place not yet in
        `verdicts`, the caller's verdicts of the gate `key` (kept across changes of the store: an import adds
        places, and the verdict on a place depends only on the gate), which it fills. A session is kept back when any of its
        places, or of its parent's (a subagent's transcript belongs where the session that started it does), is in a
        closed project; when none is in any project, `outside_open` decides. Call it within snapshot().
        """
        self._fresh()  # first: forgets what was derived if the store changed
        counted = self.derived.get(("kept", key))
        if counted is not None and self._kept_for == key:
            return counted
        paths = self.paths()
        if len(self.derived) > 16:  # gates seen before a change of config; keep only the current ones
            self.derived.clear()
        for path in paths:
            if path not in verdicts:
                verdicts[path] = judge(path)
        judged = dict(verdicts)  # a copy: another thread's call may add places to the gate's verdicts meanwhile
        closed = [path for path, verdict in judged.items() if verdict == CLOSED]
        owned = [path for path, verdict in judged.items() if verdict != OUTSIDE]
        kept = self._sessions_at(closed)
        owners = self._sessions_at(owned)
        # Children follow their parents (to any depth; a loop in the ids is cut by `seen`).
        parent_of = dict(
            self.connection.execute(
                "SELECT c.rowid, p.rowid FROM sessions AS c JOIN sessions AS p ON p.agent = c.agent "
                "AND p.id = c.parent_id WHERE c.parent_id != '' AND p.rowid != c.rowid"
            )
        )
        for child in parent_of:
            seen, ancestor = {child}, parent_of[child]
            while ancestor is not None and ancestor not in seen:
                if ancestor in kept:
                    kept.add(child)
                if ancestor in owners:
                    owners.add(child)
                seen.add(ancestor)
                ancestor = parent_of.get(ancestor)
        if not outside_open:
            kept.update(
                row[0]
                for row in self.connection.execute("SELECT rowid FROM sessions")
                if row[0] not in owners
            )
        self.connection.execute("DELETE FROM temp.kept_back")
        self.connection.executemany(
            "INSERT INTO temp.kept_back(rowid) VALUES (?)", ((rowid,) for rowid in kept)
        )
        self._kept_for = key
        self.derived[("kept", key)] = len(kept)
        return len(kept)

    def _sessions_at(self, paths: list[str]) -> set[int]:
        if not paths:
            return set()
        return {
            row[0]
            for row in self.connection.execute(
                "SELECT DISTINCT session FROM session_paths WHERE path IN (SELECT value FROM json_each(?))",
                (json.dumps(paths),),
            )
        }

    def places(self, session: Row) -> set[str]:
        """The places of a session and of the sessions above it (a subagent's parent, and so on)."""
        found: set[str] = set()
        seen: set[int] = set()
        current: Row | None = session
        while current is not None and current.rowid not in seen:
            seen.add(current.rowid)
            found.update(
                row[0]
                for row in self.connection.execute(
                    "SELECT path FROM session_paths WHERE session = ?", (current.rowid,)
                )
            )
            if current.cwd:  # a store whose session_paths were not filled yet still has the first one
                found.add(current.cwd)
            if not current.parent_id:
                break
            row = self.connection.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions AS s WHERE s.agent = ? AND s.id = ?",
                (current.agent, current.parent_id),
            ).fetchone()
            current = None if row is None else Row(*row)
        return found

    def recent(self, limit: int, gated: bool = False) -> list[Row]:
        """Sessions newest first (by last activity), through the updated_at index."""
        return [Row(*row) for row in self.connection.execute(*recent_query(limit, gated))]

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

    def search(self, query: str, limit: int, gated: bool = False) -> Found:
        """Sessions whose messages match an FTS5 query, best first: each session ranked by its best message.

        FTS5 computes BM25 for every message a query matches, even under ORDER BY rank LIMIT, so the matching messages
        are ranked RANKED_AT_ONCE at a time, newest first (by rowid, which FTS5 walks in order and stops early):
        bm25() is only computed for those. When they are all the matches, the order is exactly FTS5's; when not,
        and their best messages already come from `limit` sessions, those are the hits (`complete` False); otherwise
        the next older batch is ranked too, and all ranked so far are sorted together. The ranks are FTS5's own
        values (its IDF and average length are over the whole index whatever is ranked).
        """
        sql = (
            "SELECT messages_fts.rowid, bm25(messages_fts), m.session FROM messages_fts "
            "JOIN messages AS m ON m.rowid = messages_fts.rowid "
            f"WHERE messages_fts MATCH ? AND {_GATED.format(column='m.session')} {{before}} "
            "ORDER BY messages_fts.rowid DESC LIMIT ?"
            if gated
            else "SELECT rowid, bm25(messages_fts) FROM messages_fts WHERE messages_fts MATCH ? {before} "
            "ORDER BY rowid DESC LIMIT ?"
        )
        ranked: list[tuple[int, float]] = []  # (message rowid, rank), newest first
        session_of: dict[int, int] = {}
        before: tuple[int, ...] = ()
        try:
            while True:
                rows = self.connection.execute(
                    sql.format(before="AND messages_fts.rowid < ?" if before else ""),
                    (query, *before, RANKED_AT_ONCE + 1),
                ).fetchall()
                complete = len(rows) <= RANKED_AT_ONCE
                del rows[RANKED_AT_ONCE:]
                if gated:
                    session_of.update((rowid, session) for rowid, _rank, session in rows)
                    ranked.extend((rowid, rank) for rowid, rank, _session in rows)
                else:
                    ranked.extend(rows)
                best = self._best_of_each_session(ranked, limit, session_of)
                if complete or len(best) >= limit:
                    return Found(self._hits(best), len(ranked), complete)
                before = (rows[-1][0],)
        except sqlite3.OperationalError as error:
            raise SearchError(str(error)) from error

    def _best_of_each_session(
        self, ranked: list[tuple[int, float]], limit: int, session_of: dict[int, int]
    ) -> dict[int, tuple[float, int]]:
        """Session rowid -> (rank, message rowid) of its best message, for the first `limit` sessions, best first.

        Ties go to the newer message (`ranked` is newest first and the sort is stable). The sessions of messages the
        candidates' query did not give (no project closed) are looked up a batch at a time, best first, so only those
        needed are.
        """
        order = sorted(ranked, key=itemgetter(1))
        best: dict[int, tuple[float, int]] = {}
        batch = max(50, 4 * limit)
        for start in range(0, len(order), batch):
            chunk = order[start : start + batch]
            missing = [rowid for rowid, _rank in chunk if rowid not in session_of]
            if missing:
                session_of.update(
                    self.connection.execute(
                        "SELECT rowid, session FROM messages WHERE rowid IN (SELECT value FROM json_each(?))",
                        (json.dumps(missing),),
                    )
                )
            for rowid, rank in chunk:
                session = session_of.get(rowid)
                if session is not None and session not in best:
                    best[session] = (rank, rowid)
                    if len(best) == limit:
                        return best
        return best

    def _hits(self, best: dict[int, tuple[float, int]]) -> list[Hit]:
        rows = {
            row[0]: Row(*row)
            for row in self.connection.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions AS s WHERE s.rowid IN (SELECT value FROM json_each(?))",
                (json.dumps(list(best)),),
            )
        }
        return [Hit(rows[session], rank, rowid) for session, (rank, rowid) in best.items() if session in rows]

    def marked(self, query: str, message_rowids: Sequence[int]) -> dict[int, str]:
        """Each message's text with the query's matches between \\x02 and \\x03 (FTS5's highlight), to place snippets.

        The highlighting is done by FTS5 in a scratch index in memory holding only these messages, with the store's
        tokenizer: a query matches a message or not whatever else is indexed, so the matches are the same as in the
        store's index, where a highlight would set the whole query up again for each message (a read of every word's
        list in each of the index's segments). A message that somehow does not match comes back unmarked.
        """
        texts = self.connection.execute(
            "SELECT rowid, text FROM messages WHERE rowid IN (SELECT value FROM json_each(?))",
            (json.dumps(list(message_rowids)),),
        ).fetchall()
        scratch = self._scratch_index()
        scratch.execute(
            "BEGIN"
        )  # rolled back once the highlights are read: the scratch index is always empty
        try:
            scratch.executemany("INSERT INTO scratch_text(rowid, text) VALUES (?, ?)", texts)
            scratch.execute("INSERT INTO scratch(rowid, text) SELECT rowid, text FROM scratch_text")
            marked = dict(
                scratch.execute(
                    "SELECT rowid, highlight(scratch, 0, char(2), char(3)) FROM scratch WHERE scratch MATCH ?",
                    (query,),
                )
            )
        finally:
            scratch.execute("ROLLBACK")
        plain = dict(texts)
        return {rowid: marked.get(rowid, plain.get(rowid, "")) for rowid in message_rowids}

    def _scratch_index(self) -> sqlite3.Connection:
        if self._scratch is None:
            scratch = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            scratch.execute("CREATE TABLE scratch_text(rowid INTEGER PRIMARY KEY, text TEXT NOT NULL)")
            scratch.execute(
                "CREATE VIRTUAL TABLE scratch USING fts5("
                f"text, content='scratch_text', content_rowid='rowid', tokenize='{TOKENIZE}')"
            )
            self._scratch = scratch
        return self._scratch

    def index_outdated(self) -> bool:
        """Whether the store's search index predates this version (``gateway sessions import`` rebuilds it)."""
        return not index_is_current(self.connection)

    def close(self) -> None:
        self.connection.close()
        if self._scratch is not None:
            self._scratch.close()

    def page(self, cursor: str | None, limit: int, gated: bool = False) -> tuple[list[Row], str | None]:
        """One page of sessions, newest first by start time, for resources/list.

        The cursor holds the last position and the highest rowid when the walk began, so sessions imported during the
        walk neither shift the pages nor appear twice (they show up on the next walk).
        """
        position = _decode_cursor(cursor)
        where = f"AND {_GATED.format(column='s.rowid')}" if gated else ""
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
                (ceiling, *after_params, limit + 1),
            )
        ]
        if len(rows) <= limit:
            return rows, None
        rows = rows[:limit]
        last = rows[-1]
        return rows, _encode_cursor({"created_at": last.created_at, "rowid": last.rowid, "ceiling": ceiling})


# The gate's condition: one primary-key lookup in the connection's temporary table for each row walked.
_GATED = "{column} NOT IN (SELECT rowid FROM temp.kept_back)"


def recent_query(limit: int, gated: bool = False) -> tuple[str, tuple[Any, ...]]:
    where = f"WHERE {_GATED.format(column='s.rowid')}" if gated else ""
    sql = f"SELECT {_SESSION_COLUMNS} FROM sessions AS s {where} ORDER BY s.updated_at DESC LIMIT ?"
    return sql, (limit,)


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
