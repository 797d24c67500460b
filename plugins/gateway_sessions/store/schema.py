"""The store's schema and its migrations: the tables, the search index's options, and opening the file to write,
which brings an older store up to date (masked copies made again, index rebuilt)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gateway import MASKS_VERSION, clip, mask, plural
from gateway_sessions.defaults import default_path  # noqa: F401 - named here too
from gateway_sessions.model import first_words_of, text_of, tool_paths
from gateway_sessions.store import calls, impact

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

-- What the reading side needs to follow the gate's kept-back sessions as the store grows, without judging every
-- place again after each import (store/kept.py): each place added, in order, and a count of the changes it cannot
-- follow that way (a session or a place removed, a session's parent changed), which make it start over.
CREATE TABLE IF NOT EXISTS place_log(
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session INTEGER NOT NULL,
    path TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS session_paths_logged AFTER INSERT ON session_paths BEGIN
    INSERT INTO place_log(session, path) VALUES (new.session, new.path);
END;
CREATE TRIGGER IF NOT EXISTS session_paths_removed AFTER DELETE ON session_paths BEGIN
    INSERT INTO meta(key, value) VALUES ('gate_changes', '1')
    ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1;
END;
CREATE TRIGGER IF NOT EXISTS sessions_removed AFTER DELETE ON sessions BEGIN
    INSERT INTO meta(key, value) VALUES ('gate_changes', '1')
    ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1;
END;
CREATE TRIGGER IF NOT EXISTS sessions_reparented AFTER UPDATE OF parent_id, agent, id ON sessions
WHEN old.parent_id IS NOT new.parent_id OR old.agent IS NOT new.agent OR old.id IS NOT new.id BEGIN
    INSERT INTO meta(key, value) VALUES ('gate_changes', '1')
    ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1;
END;
-- Subagents' sessions by their parent, for the gate (a child belongs where its parent does).
CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(agent, parent_id) WHERE parent_id != '';

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
TOKENIZE = impact.TOKENIZE  # one tokenizer for the index and the lists made beside it
FTS_ARGUMENTS = f"text, content='messages', content_rowid='rowid', tokenize='{TOKENIZE}', prefix='2 3 4'"
SCHEMA = SCHEMA_TEMPLATE.replace("{FTS_ARGUMENTS}", FTS_ARGUMENTS).replace(
    "{TRIGGERS}", "".join(f"{trigger};\n" for trigger in TRIGGERS)
) + impact.SCHEMA + "".join(f"{trigger};\n" for trigger in impact.TRIGGERS)

# default_path lives in gateway_sessions.defaults, which registering the plugin reads.

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
    connection.executescript(calls.SCHEMA)
    say = say or (lambda _sentence: None)
    if not masks_are_current(connection):
        _remask(connection, say, legacy_titles)
    if not index_is_current(connection):
        _rebuild_index(connection, say)
    if not impact.is_built(connection):
        impact.migrate(connection, say)
    if not calls.is_built(connection):
        calls.rebuild(connection, say)
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
            f"masking the sessions store again with this version's masks ({plural(count, 'message')}; once, one to two "
            "minutes a million messages)…"
        )
    started = time.monotonic()
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute("DROP TRIGGER IF EXISTS messages_fts_delete")
        connection.execute("DROP TRIGGER IF EXISTS messages_fts_update")
        for name in impact.TRIGGER_NAMES:  # the lists are made again from the new texts below
            connection.execute(f"DROP TRIGGER IF EXISTS {name}")
        connection.execute("DROP TABLE IF EXISTS messages_fts")
        sessions = [row[0] for row in connection.execute("SELECT rowid FROM sessions ORDER BY rowid")]
        for start in range(0, len(sessions), _REMASK_SESSIONS):
            _remask_sessions(connection, sessions[start : start + _REMASK_SESSIONS], legacy_titles)
        connection.execute(f"CREATE VIRTUAL TABLE messages_fts USING fts5({FTS_ARGUMENTS})")
        for trigger in TRIGGERS:
            connection.execute(trigger)
        connection.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
        for trigger in impact.TRIGGERS:
            connection.execute(trigger)
        impact.rebuild_all(connection)
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
            f"sessions store masked again: {plural(count, 'message')} masked and indexed in {time.monotonic() - started:.1f} s"
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
        f"upgrading the search index of the sessions store to this version's ({plural(count, 'message')}; once, "
        "about half a minute a million messages)…"
    )
    started = time.monotonic()
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute("DROP TABLE messages_fts")
        connection.execute(f"CREATE VIRTUAL TABLE messages_fts USING fts5({FTS_ARGUMENTS})")
        connection.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
        impact.rebuild_all(connection)
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    say(f"search index upgraded: {plural(count, 'message')} indexed again in {time.monotonic() - started:.1f} s")
