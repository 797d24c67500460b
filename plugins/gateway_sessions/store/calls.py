"""The store's index of tool calls: each call of each message (tool, arguments masked, message number), the paths
it acted on in every form the gate gives them, its argument words, and the results, kept as messages are imported.

Tables (made beside the others by the schema, filled at import, brought up to date by ``open_for_writing``):

- ``tool_calls(session, message, seq, position, call_id, tool, created_at, arguments)``: ``arguments`` masked whole
  then cut (``gateway.privacy.clip``), one row per call, unique on (session, message key, position);
- ``tool_call_paths(path, call, session, action, literal)``: every form of every path a call acted on
  (``gateway.routes.path_forms``: as written, ``~`` expanded, links resolved), ``literal`` 1 for the form as the
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
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from attrs import frozen

from gateway.privacy import MASKS_VERSION, clip
from gateway.routes import path_forms
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
) -> set[str]:
    """Index the calls and results of (seq, key, timestamp, blocks) messages written anew; the paths they named.

    The returned paths (as the calls gave them, made absolute) are the session's places too (the caller adds them
    to ``session_paths``, so that the gate judges the session by every path a call named, commands included).
    """
    places: set[str] = set()
    for seq, key, when, blocks in messages:
        connection.execute("DELETE FROM tool_calls WHERE session = ? AND message = ?", (session, key))
        for call in calls_of(blocks, cwd):
            arguments = clip(arguments_text(call.arguments), ARGUMENTS_LIMIT) if call.arguments is not None else ""
            rowid = connection.execute(
                "INSERT INTO tool_calls(session, message, seq, position, call_id, tool, created_at, arguments) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING rowid",
                (session, key, seq, call.position, call.call_id, call.tool, when or fallback_time, arguments),
            ).fetchone()[0]
            rows = []
            for path, action in call.places.items():
                places.add(path)
                for index, form in enumerate(dict.fromkeys((path, *path_forms(path)))):
                    rows.append((form, rowid, session, action, 1 if index == 0 else 0))
            connection.executemany(
                "INSERT OR IGNORE INTO tool_call_paths(path, call, session, action, literal) VALUES (?, ?, ?, ?, ?)",
                rows,
            )
            connection.executemany(
                "INSERT OR IGNORE INTO tool_call_words(word, call) VALUES (?, ?)",
                ((word, rowid) for word in words_of(f"{call.tool} {arguments}")),
            )
        connection.executemany(
            "INSERT INTO tool_results(session, call_id, result, is_error) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(session, call_id) DO UPDATE SET result = excluded.result, is_error = excluded.is_error",
            (
                (session, call_id, clip(text, RESULT_LIMIT), int(error))
                for call_id, text, error in results_of(blocks)
            ),
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


# Reading. Each function takes the reader's connection inside its snapshot; `gated` leaves out the sessions of
# ``temp.kept_back`` (tools._scope fills it for the call's gate).

_KEPT = " AND {column} NOT IN (SELECT rowid FROM temp.kept_back)"


def _under(column: str, forms: Sequence[str]) -> tuple[str, list[str]]:
    """A condition taking `column` equal to one of the forms or inside one (a folder), and its parameters."""
    clauses, parameters = [], []
    for form in forms:
        if form == "/":
            clauses.append(f"{column} >= '/'")
            continue
        # Inside the folder: after "form/" and before "form0" ("0" follows "/"), through the path index.
        clauses.append(f"({column} = ? OR ({column} > ? AND {column} < ?))")
        parameters.extend((form, form + "/", form + "0"))
    return "(" + " OR ".join(clauses) + ")", parameters


@frozen
class Touch:
    """What one session's tool calls did at a path (or under a folder)."""

    session: int
    last: str  # the time of its latest call there
    actions: dict[str, int]  # read / edit / write / ran -> how many calls
    messages: tuple[int, ...]  # message numbers, in order
    paths: dict[str, str]  # each path named (as the call gave it) -> the last action on it


def touching(
    connection: sqlite3.Connection, forms: Sequence[str], since: str, limit: int, gated: bool, shown: int = 50
) -> list[Touch]:
    """The sessions whose tool calls acted at one of the path's forms or under it, latest call first."""
    where, parameters = _under("p.path", forms)
    kept = _KEPT.format(column="p.session") if gated else ""
    since_clause = " AND c.created_at >= ?" if since else ""
    since_parameters = [since] if since else []
    sessions = connection.execute(
        f"SELECT p.session, max(c.created_at) AS last FROM tool_call_paths AS p "
        f"JOIN tool_calls AS c ON c.rowid = p.call WHERE {where}{kept}{since_clause} "
        f"GROUP BY p.session ORDER BY last DESC, p.session DESC LIMIT ?",
        (*parameters, *since_parameters, limit),
    ).fetchall()
    found: list[Touch] = []
    for session, last in sessions:
        actions: dict[str, int] = {}
        messages: set[int] = set()
        paths: dict[str, str] = {}
        counted: set[int] = set()
        for call, seq, action, path, literal in connection.execute(
            f"SELECT p.call, c.seq, p.action, p.path, p.literal FROM tool_call_paths AS p "
            f"JOIN tool_calls AS c ON c.rowid = p.call WHERE p.session = ? AND {where}{since_clause} "
            f"ORDER BY c.seq, c.position",
            (session, *parameters, *since_parameters),
        ):
            if call not in counted:
                counted.add(call)
                actions[action] = actions.get(action, 0) + 1
                messages.add(seq)
            if literal and len(paths) < shown:
                paths[path] = action
        if not paths:  # found only through a resolved form: say the call's own path
            some = sorted(counted)[:shown]
            for path, action in connection.execute(
                f"SELECT path, action FROM tool_call_paths WHERE call IN ({','.join('?' * len(some))}) "
                "AND literal = 1 LIMIT ?",
                (*some, shown),
            ):
                paths[path] = action
        found.append(Touch(session, last, actions, tuple(sorted(messages))[:shown], paths))
    return found


@frozen
class FoundCall:
    session: int
    seq: int
    tool: str
    created_at: str
    arguments: str
    result: str
    is_error: bool
    places: dict[str, str]


_QUERY_WORD = re.compile(r"(\w+)(\*?)")


def query_words(query: str) -> list[tuple[str, bool]]:
    """The words of a query as the index keeps them, each with whether it ends in `*` (a prefix)."""
    return [(word.casefold(), bool(star)) for word, star in _QUERY_WORD.findall(query) if len(word) >= 2]


def search_calls(
    connection: sqlite3.Connection,
    words: Sequence[tuple[str, bool]],
    tool: str,
    forms: Sequence[str],
    since: str,
    limit: int,
    gated: bool,
) -> list[FoundCall]:
    """Tool calls holding every word (a prefix for `word*`), of the tool, at the path; newest first."""
    clauses: list[str] = []
    parameters: list[Any] = []
    for word, prefix in words:
        if prefix:
            clauses.append("c.rowid IN (SELECT call FROM tool_call_words WHERE word >= ? AND word < ?)")
            parameters.extend((word, word + "\U0010ffff"))
        else:
            clauses.append("c.rowid IN (SELECT call FROM tool_call_words WHERE word = ?)")
            parameters.append(word)
    if tool:
        clauses.append("c.tool = ? COLLATE NOCASE")
        parameters.append(tool)
    if forms:
        where, path_parameters = _under("path", forms)
        clauses.append(f"c.rowid IN (SELECT call FROM tool_call_paths WHERE {where})")
        parameters.extend(path_parameters)
    if since:
        clauses.append("c.created_at >= ?")
        parameters.append(since)
    if gated:
        clauses.append("c.session NOT IN (SELECT rowid FROM temp.kept_back)")
    rows = connection.execute(
        "SELECT c.rowid, c.session, c.seq, c.tool, c.created_at, c.arguments, r.result, r.is_error "
        "FROM tool_calls AS c LEFT JOIN tool_results AS r ON r.session = c.session AND r.call_id = c.call_id "
        "AND c.call_id != '' WHERE " + " AND ".join(clauses or ["1"]) +
        " ORDER BY c.created_at DESC, c.rowid DESC LIMIT ?",
        (*parameters, limit),
    ).fetchall()
    found = []
    for rowid, session, seq, name, created_at, arguments, result, is_error in rows:
        places = dict(connection.execute(
            "SELECT path, action FROM tool_call_paths WHERE call = ? AND literal = 1 LIMIT 20", (rowid,)
        ).fetchall())
        found.append(FoundCall(session, seq, name, created_at, arguments, result or "", bool(is_error), places))
    return found


def files_of(
    connection: sqlite3.Connection, sessions: Sequence[int], start: str, end: str
) -> list[tuple[int, str, str, str]]:
    """(session, time, path, action) of every call of these sessions between `start` and `end` (paths as given)."""
    found: list[tuple[int, str, str, str]] = []
    for offset in range(0, len(sessions), 500):
        chunk = sessions[offset : offset + 500]
        found.extend(
            connection.execute(
                "SELECT c.session, c.created_at, p.path, p.action FROM tool_calls AS c "
                "JOIN tool_call_paths AS p ON p.call = c.rowid AND p.literal = 1 "
                f"WHERE c.session IN ({','.join('?' * len(chunk))}) AND c.created_at >= ? AND c.created_at < ?",
                (*chunk, start, end),
            ).fetchall()
        )
    return found
