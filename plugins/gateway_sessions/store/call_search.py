"""Reading the index of tool calls (store/calls.py): the sessions that acted at a path, tool calls by words, tool
and path, and the files a week's sessions touched.

Each query takes one of two ways, chosen by how many rows its most selective condition matches (counted up to
`DENSE`, through the indexes): a condition that matches few rows drives (its rows are fetched, the others checked on
each, then sorted by time); when every condition matches many, the calls are walked newest first through the
index on their time and each is checked, which stops as soon as the answer is whole. Either way a call costs about
what a few thousand index lookups cost, whatever the store's size (see README, "What the tool-call tools cost").

Each function takes the reader's connection inside its snapshot; `gated` leaves out the sessions of
``temp.kept_back``, which the tools fill through the plugin's gate helpers.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from typing import Any

from attrs import frozen

# How many matching rows make a condition "dense": past this, walking the calls newest first finds a page sooner
# than sorting every match.
DENSE = 2_000
_KEPT = "{column} NOT IN (SELECT rowid FROM temp.kept_back)"
MESSAGES_GIVEN = 200  # message numbers given for a session at most (its first ones)


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


def _count(connection: sqlite3.Connection, sql: str, parameters: Sequence[Any]) -> int:
    """How many rows `sql` gives, counted up to DENSE."""
    return connection.execute(f"SELECT count(*) FROM ({sql} LIMIT {DENSE})", tuple(parameters)).fetchone()[0]


@frozen
class Touch:
    """What one session's tool calls did at a path (or under a folder)."""

    session: int
    last: str  # the time of its latest call there
    actions: dict[str, int]  # read / edit / write / ran -> how many calls
    messages: tuple[int, ...]  # message numbers, in order
    paths: dict[str, str]  # each path named (as the call gave it) -> the last action on it


def _touching_sessions(
    connection: sqlite3.Connection, forms: Sequence[str], since: str, limit: int, gated: bool
) -> list[tuple[int, str]]:
    """(session, time of its latest call at the path), latest first."""
    where, parameters = _under("p.path", forms)
    if _count(connection, f"SELECT 1 FROM tool_call_paths AS p WHERE {where}", parameters) < DENSE:
        conditions = [where] + ([_KEPT.format(column="p.session")] if gated else [])
        conditions += ["c.created_at >= ?"] if since else []
        return connection.execute(
            "SELECT p.session, max(c.created_at) AS last FROM tool_call_paths AS p JOIN tool_calls AS c "
            f"ON c.rowid = p.call WHERE {' AND '.join(conditions)} GROUP BY p.session "
            "ORDER BY last DESC, p.session DESC LIMIT ?",
            (*parameters, *([since] if since else []), limit),
        ).fetchall()
    # Many calls at the path: the calls newest first, each session taken at its first (latest) call found.
    inside, inside_parameters = _under("+p.path", forms)
    conditions = [
        f"EXISTS (SELECT 1 FROM tool_call_paths AS p INDEXED BY idx_tool_call_paths_call "
        f"WHERE p.call = c.rowid AND {inside})"
    ]
    conditions += [_KEPT.format(column="c.session")] if gated else []
    conditions += ["c.created_at >= ?"] if since else []
    found: dict[int, str] = {}
    for session, created_at in connection.execute(
        "SELECT c.session, c.created_at FROM tool_calls AS c INDEXED BY idx_tool_calls_created "
        f"WHERE {' AND '.join(conditions)} ORDER BY c.created_at DESC",
        (*inside_parameters, *([since] if since else [])),
    ):
        if session not in found:
            found[session] = created_at
            if len(found) >= limit:
                break
    return list(found.items())


def touching(
    connection: sqlite3.Connection, forms: Sequence[str], since: str, limit: int, gated: bool, shown: int = 50
) -> list[Touch]:
    """The sessions whose tool calls acted at one of the path's forms or under it, latest call first; `shown` paths
    each at most."""
    inside, parameters = _under("+p.path", forms)  # each session's own rows, through the session's index
    since_clause = " AND c.created_at >= ?" if since else ""
    since_parameters = [since] if since else []
    found: list[Touch] = []
    for session, last in _touching_sessions(connection, forms, since, limit, gated):
        actions: dict[str, int] = {}
        messages: set[int] = set()
        paths: dict[str, str] = {}
        counted: set[int] = set()
        for call, seq, action, path, literal in connection.execute(
            "SELECT p.call, c.seq, p.action, p.path, p.literal FROM tool_call_paths AS p "
            "INDEXED BY idx_tool_call_paths_session JOIN tool_calls AS c ON c.rowid = p.call "
            f"WHERE p.session = ? AND {inside}{since_clause} ORDER BY c.seq, c.position",
            (session, *parameters, *since_parameters),
        ):
            if call not in counted:
                counted.add(call)
                actions[action] = actions.get(action, 0) + 1
                messages.add(seq)
            if literal and len(paths) < shown:
                paths[path] = action
        if not paths and counted:  # found only through a resolved form: say the call's own path
            some = sorted(counted)[:shown]
            for path, action in connection.execute(
                f"SELECT path, action FROM tool_call_paths WHERE call IN ({','.join('?' * len(some))}) "
                "AND literal = 1 LIMIT ?",
                (*some, shown),
            ):
                paths[path] = action
        found.append(Touch(session, last, actions, tuple(sorted(messages))[:MESSAGES_GIVEN], paths))
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
    # Each condition two ways: as the rows that drive the query (`driver`, with how many it matches), and as a
    # check on one call (`check`).
    conditions: list[tuple[str, str, list[Any]]] = []  # (driver sql, check sql, parameters)
    for word, prefix in words:
        if prefix:
            upper = word + "\U0010ffff"
            conditions.append((
                "SELECT call FROM tool_call_words WHERE word >= ? AND word < ?",
                "EXISTS (SELECT 1 FROM tool_call_words AS w INDEXED BY idx_tool_call_words_call "
                "WHERE w.call = c.rowid AND +w.word >= ? AND +w.word < ?)",
                [word, upper],
            ))
        else:
            conditions.append((
                "SELECT call FROM tool_call_words WHERE word = ?",
                "EXISTS (SELECT 1 FROM tool_call_words AS w WHERE w.word = ? AND w.call = c.rowid)",
                [word],
            ))
    if forms:
        where, path_parameters = _under("path", forms)
        inside, _ = _under("+p.path", forms)
        conditions.append((
            f"SELECT call FROM tool_call_paths WHERE {where}",
            f"EXISTS (SELECT 1 FROM tool_call_paths AS p INDEXED BY idx_tool_call_paths_call "
            f"WHERE p.call = c.rowid AND {inside})",
            path_parameters,
        ))
    if tool:
        conditions.append((
            "SELECT rowid FROM tool_calls WHERE tool = ? COLLATE NOCASE",
            "c.tool = ? COLLATE NOCASE",
            [tool],
        ))
    filters = ["c.created_at >= ?"] if since else []
    filter_parameters: list[Any] = [since] if since else []
    if gated:
        filters.append(_KEPT.format(column="c.session"))
    sizes = [_count(connection, driver, parameters) for driver, _, parameters in conditions]
    if sizes and min(sizes) < DENSE:
        # The rarest condition drives; the others are checked on its rows, which are then sorted by time.
        first = sizes.index(min(sizes))
        driver, _, driver_parameters = conditions[first]
        checks = [(check, parameters) for index, (_, check, parameters) in enumerate(conditions) if index != first]
        sql = (
            f"SELECT c.rowid FROM tool_calls AS c WHERE c.rowid IN ({driver})"
            + "".join(f" AND {check}" for check, _ in checks)
            + "".join(f" AND {item}" for item in filters)
            + " ORDER BY c.created_at DESC, c.rowid DESC LIMIT ?"
        )
        parameters = [*driver_parameters, *(p for _, ps in checks for p in ps), *filter_parameters, limit]
    else:
        # Every condition matches many calls: walk the calls newest first (of the tool, when one is named, through
        # its own index) and stop at the page's end.
        index = "idx_tool_calls_tool" if tool else "idx_tool_calls_created"
        checks = [(check, parameters) for _, check, parameters in conditions]
        sql = (
            f"SELECT c.rowid FROM tool_calls AS c INDEXED BY {index} WHERE 1"
            + "".join(f" AND {check}" for check, _ in checks)
            + "".join(f" AND {item}" for item in filters)
            + " ORDER BY c.created_at DESC"
            + " LIMIT ?"
        )
        parameters = [*(p for _, ps in checks for p in ps), *filter_parameters, limit]
    rowids = [row[0] for row in connection.execute(sql, parameters)]
    found = []
    for rowid in rowids:
        session, seq, name, created_at, arguments, result, is_error = connection.execute(
            "SELECT c.session, c.seq, c.tool, c.created_at, c.arguments, r.result, r.is_error FROM tool_calls AS c "
            "LEFT JOIN tool_results AS r ON r.session = c.session AND r.call_id = c.call_id AND c.call_id != '' "
            "WHERE c.rowid = ?",
            (rowid,),
        ).fetchone()
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
