"""The store's index of tool calls: each call of each message (tool, arguments masked, message number), the paths
it acted on in every form the gate gives them, its argument words, and the results, kept as messages are imported.

Tables (made beside the others by the schema, filled at import, brought up to date by ``open_for_writing``):

- ``tool_calls(session, message, seq, position, call_id, tool, created_at, arguments)``: ``arguments`` masked whole
  then cut (``gateway.privacy.clip``), one row per call, unique on (session, message key, position);
- ``tool_call_paths(path, call, session, action, literal)``: every form of every path a call acted on
  (``gateway.path_forms``: as written, ``~`` expanded, links resolved), ``literal`` 1 for the form as the
  call gave it (made absolute), so that folders match by a range of the index and counts use one form;
- ``tool_call_words(word, call)``: the tool's name and the masked arguments' words, case-folded, for
  ``search_tool_calls``: a small inverted index of its own rather than an FTS5 table, since the words are looked up
  whole or by prefix and intersected, never ranked, and rows follow their call by a cascade;
- ``tool_results(session, call_id, result, is_error)``: each result masked whole then cut, joined to its call by the
  agent's call id (a result may come in a later message, or a later import, than its call).

A message written again (changed) has its calls deleted and made again; messages left as they are keep theirs. The
version of this index and the masks it was made with are in ``meta`` (``tool_calls``): when either differs,
``open_for_writing`` makes the whole index again from the stored content blocks, in one transaction.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable, Container, Iterable, Sequence
from typing import Any

from gateway import MASKS_VERSION, clip, path_forms
from gateway_sessions.calls import ARGUMENTS_LIMIT, RESULT_LIMIT, arguments_text, calls_of, results_of

VERSION = 1
_WORD = re.compile(r"\w+")
_MOST_WORDS = 200

SCHEMA = """
CREATE TABLE IF NOT EXISTS tool_calls(
    rowid INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions(rowid) ON DELETE CASCADE,
    message TEXT NOT NULL,
    seq INTEGER NOT NULL,
    position INTEGER NOT NULL,
    call_id TEXT NOT NULL DEFAULT '',
    tool TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT '',
    arguments TEXT NOT NULL DEFAULT '',
    UNIQUE(session, message, position)
);
CREATE INDEX IF NOT EXISTS idx_tool_calls_created ON tool_calls(created_at DESC);
CREATE INDEX IF NOT EXISTS idx_tool_calls_tool ON tool_calls(tool COLLATE NOCASE, created_at DESC);
CREATE TABLE IF NOT EXISTS tool_call_paths(
    path TEXT NOT NULL,
    call INTEGER NOT NULL REFERENCES tool_calls(rowid) ON DELETE CASCADE,
    session INTEGER NOT NULL,
    action TEXT NOT NULL,
    literal INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY(path, call)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idx_tool_call_paths_call ON tool_call_paths(call);
CREATE INDEX IF NOT EXISTS idx_tool_call_paths_session ON tool_call_paths(session, literal);
CREATE TABLE IF NOT EXISTS tool_call_words(
    word TEXT NOT NULL,
    call INTEGER NOT NULL REFERENCES tool_calls(rowid) ON DELETE CASCADE,
    PRIMARY KEY(word, call)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idx_tool_call_words_call ON tool_call_words(call);
CREATE TABLE IF NOT EXISTS tool_results(
    session INTEGER NOT NULL REFERENCES sessions(rowid) ON DELETE CASCADE,
    call_id TEXT NOT NULL,
    result TEXT NOT NULL DEFAULT '',
    is_error INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY(session, call_id)
) WITHOUT ROWID;
"""


def _built_value() -> str:
    return f"{VERSION}:{MASKS_VERSION}"


def is_built(connection: sqlite3.Connection) -> bool:
    """Whether the tool-call index was made by this version, with this version's masks."""
    try:
        row = connection.execute("SELECT value FROM meta WHERE key = 'tool_calls'").fetchone()
    except sqlite3.OperationalError:
        return False
    return row is not None and row[0] == _built_value()


def words_of(text: str) -> list[str]:
    """The distinct words of a text as the index keeps them: case-folded, 2 to 64 characters, at most 200."""
    found: dict[str, None] = {}
    for word in _WORD.findall(text.casefold()):
        if 2 <= len(word) <= 64:
            found[word] = None
            if len(found) >= _MOST_WORDS:
                break
    return list(found)


def record(
    connection: sqlite3.Connection,
    session: int,
    cwd: str,
    messages: Iterable[tuple[int, str, str, list[dict[str, Any]]]],
    fallback_time: str = "",
    replaced: Container[str] | None = None,
) -> set[str]:
    """Index the calls and results of (seq, key, timestamp, blocks) messages written anew; the paths they named.

    `replaced`: the keys of those messages the store held before (None: any may have been); only their calls are
    deleted first. The returned paths (as the calls gave them, made absolute) are the session's places too (the caller
    adds them to ``session_paths``, so that the gate judges the session by every path a call named, commands
    included).
    """
    places: set[str] = set()
    # The rows of the session's calls, written together at the end (a statement a message cost more than the rows).
    path_rows: list[tuple[str, int, int, str, int]] = []
    word_rows: list[tuple[str, int]] = []
    result_rows: list[tuple[int, str, str, int]] = []
    insert = (
        "INSERT INTO tool_calls(session, message, seq, position, call_id, tool, created_at, arguments) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING rowid"
    )
    for seq, key, when, blocks in messages:
        if replaced is None or key in replaced:  # a message new to the store has no calls to take back
            connection.execute("DELETE FROM tool_calls WHERE session = ? AND message = ?", (session, key))
        for call in calls_of(blocks, cwd):
            arguments = clip(arguments_text(call.arguments), ARGUMENTS_LIMIT) if call.arguments is not None else ""
            rowid = connection.execute(
                insert, (session, key, seq, call.position, call.call_id, call.tool, when or fallback_time, arguments)
            ).fetchone()[0]
            for path, action in call.places.items():
                places.add(path)
                for index, form in enumerate(dict.fromkeys((path, *path_forms(path)))):
                    path_rows.append((form, rowid, session, action, 1 if index == 0 else 0))
            word_rows.extend((word, rowid) for word in words_of(f"{call.tool} {arguments}"))
        result_rows.extend(
            (session, call_id, clip(text, RESULT_LIMIT), int(error)) for call_id, text, error in results_of(blocks)
        )
    if path_rows:
        connection.executemany(
            "INSERT OR IGNORE INTO tool_call_paths(path, call, session, action, literal) VALUES (?, ?, ?, ?, ?)",
            path_rows,
        )
    if word_rows:
        connection.executemany("INSERT OR IGNORE INTO tool_call_words(word, call) VALUES (?, ?)", word_rows)
    if result_rows:
        connection.executemany(
            "INSERT INTO tool_results(session, call_id, result, is_error) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(session, call_id) DO UPDATE SET result = excluded.result, is_error = excluded.is_error",
            result_rows,
        )
    return places


def forget(connection: sqlite3.Connection, session: int, keys: Sequence[str]) -> None:
    """Drop the calls of messages the agent took back (their paths and words follow by the cascade)."""
    connection.executemany(
        "DELETE FROM tool_calls WHERE session = ? AND message = ?", ((session, key) for key in keys)
    )


_REBUILD_SESSIONS = 500


def rebuild(connection: sqlite3.Connection, say: Callable[[str], None]) -> None:
    """Make the whole tool-call index again from the stored content blocks, in one transaction."""
    import json

    count = connection.execute("SELECT count(*) FROM messages").fetchone()[0]
    if count:
        say(f"indexing the tool calls of {count:,} stored messages (once)…")
    started = time.monotonic()
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute("DELETE FROM tool_call_words")
        connection.execute("DELETE FROM tool_call_paths")
        connection.execute("DELETE FROM tool_results")
        connection.execute("DELETE FROM tool_calls")
        sessions = connection.execute("SELECT rowid, cwd, updated_at FROM sessions ORDER BY rowid").fetchall()
        for rowid, cwd, updated_at in sessions:
            messages = [
                (seq, key, created_at, json.loads(blocks))
                for seq, key, created_at, blocks in connection.execute(
                    "SELECT seq, key, created_at, blocks FROM messages WHERE session = ? ORDER BY seq", (rowid,)
                )
            ]
            places = record(connection, rowid, cwd, messages, updated_at)
            connection.executemany(
                "INSERT OR IGNORE INTO session_paths(session, path) VALUES (?, ?)",
                ((rowid, path) for path in places),
            )
        connection.execute(
            "INSERT INTO meta(key, value) VALUES ('tool_calls', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (_built_value(),),
        )
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
    if count:
        say(f"tool calls indexed in {time.monotonic() - started:.1f} s")


def mark_built(connection: sqlite3.Connection) -> None:
    """Record that the index is whole (a store made empty by this version needs no pass)."""
    connection.execute(
        "INSERT INTO meta(key, value) VALUES ('tool_calls', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (_built_value(),),
    )

