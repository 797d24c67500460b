"""Reading the store: the read-only handle kept per thread, the gate's kept-back sessions, lists, pages and the
full-text search."""

from __future__ import annotations

import base64
import json
import sqlite3
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from attrs import frozen

from gateway_sessions.store import impact
from gateway_sessions.store.kept import CLOSED, OPEN, OUTSIDE, Kept, follow, work_out  # noqa: F401
from gateway_sessions.store.schema import TOKENIZE, index_is_current, masks_are_current

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
    """What a search found: the best sessions by BM25, best first (every matching message ranked).

    How they were found, for the benchmark: `fetched` best messages taken first, and whether a pass over every
    session's best message was needed after them (`per_session`).
    """

    hits: list[Hit]
    fetched: int = 0
    per_session: bool = False
    from_list: bool = False  # answered from the list of a very common word or prefix (store/impact.py)


class SearchError(Exception):
    """SQLite refused the query (an FTS5 syntax error, most often); the message is SQLite's own."""


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
        # Each recent gate's kept-back sessions (store/kept.py), followed as the store changes, and the state of the
        # file they were last brought up to.
        self._gates: dict[Any, Kept] = {}
        self._gates_version: int | None = None
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
        """Put in ``kept_back`` the sessions the gate may not give; how many they are.

        `judge` gives a place's verdict: OUTSIDE, OPEN or CLOSED; it is asked once per distinct place not yet in
        `verdicts`, the caller's verdicts of the gate `key` (kept across changes of the store: an import adds
        places, and the verdict on a place depends only on the gate), which it fills. A session is kept back when any
        of its places, or of its parent's (a subagent's transcript belongs where the session that started it does), is
        in a closed project; when none is in any project, `outside_open` decides. Worked out whole the first time for
        a gate, then followed as the store grows (store/kept.py). Call it within snapshot().
        """
        self._fresh()
        state = self._gates.get(key)
        if state is not None and state.outside_open == outside_open and self._gates_version == self._version:
            if self._kept_for != key:
                self._fill(state.kept)
                self._kept_for = key
            return len(state.kept)
        delta = None
        if state is not None and state.outside_open == outside_open:
            delta = follow(state, self.connection, verdicts, judge)
        if delta is None:
            state = work_out(self.connection, verdicts, judge, outside_open)
            self._gates.pop(key, None)
            while len(self._gates) >= 4:  # gates seen before a change of config; keep only the latest few
                self._gates.pop(next(iter(self._gates)))
            self._gates[key] = state
            self._fill(state.kept)
        elif self._kept_for == key:
            added, removed = delta
            self.connection.executemany("INSERT OR IGNORE INTO temp.kept_back(rowid) VALUES (?)",
                                        ((rowid,) for rowid in added))
            self.connection.executemany("DELETE FROM temp.kept_back WHERE rowid = ?", ((rowid,) for rowid in removed))
        else:
            self._fill(state.kept)
        self._kept_for = key
        self._gates_version = self._version
        return len(state.kept)

    def _fill(self, kept: set[int]) -> None:
        self.connection.execute("DELETE FROM temp.kept_back")
        self.connection.executemany("INSERT INTO temp.kept_back(rowid) VALUES (?)", ((rowid,) for rowid in kept))

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

    def ids_beginning(self, start: str, limit: int) -> list[str]:
        """Up to `limit` distinct session ids that begin with `start` (case as given), in order, through the id index."""
        # Every id that begins so sorts at or after `start` and before `start` followed by the highest character.
        return [
            row[0]
            for row in self.connection.execute(
                "SELECT DISTINCT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
                (start, start + "\U0010ffff", limit),
            )
        ]

    def is_empty(self) -> bool:
        """Whether the store holds no session at all (whatever the gate would let through)."""
        return self.connection.execute("SELECT NOT EXISTS (SELECT 1 FROM sessions)").fetchone()[0] == 1

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
        """Sessions whose messages match an FTS5 query, best first, each ranked by its best message: exactly the best
        `limit` sessions by BM25 over every matching message (of the sessions the gate lets through).

        FTS5 computes BM25 for every message a query matches whatever is asked (no order of its index gives the best
        first), so the cost is in how little else is done per match. First the best `OVERFETCH`-fold `limit` messages
        are taken by ``bm25()`` under ``ORDER BY ... LIMIT`` (SQLite keeps only that many while it walks, where FTS5's
        own ``ORDER BY rank`` sorts every match with its positions), and their sessions looked up; when those messages
        hold `limit` sessions (let through), they are the answer, since no message left out ranks better than the last
        one kept. When not (a few sessions hold most of the best messages, or the gate keeps many back), the best
        message of every session is found in one more pass, in SQL (``min()`` per session). Ties go to the newer
        message. The ranks are FTS5's own values (IDF and average length over the whole index).
        """
        try:
            # One very common word or prefix: its list of best messages (store/impact.py), when it can answer exactly.
            walked = impact.search(self.connection, query, limit, gated)
            if walked is not None:
                return Found(self._hits(walked.best), fetched=walked.walked, from_list=True)
            fetch = max(limit * OVERFETCH, OVERFETCH_AT_LEAST)
            rows = self.connection.execute(_BEST_MESSAGES, (query, fetch)).fetchall()
            best = self._best_of_each_session(rows, limit, gated)
            per_session = len(best) < limit and len(rows) == fetch
            if per_session:
                best = {
                    session: (rank, rowid)
                    for session, rank, rowid in self.connection.execute(
                        _BEST_PER_SESSION_GATED if gated else _BEST_PER_SESSION, (query, limit)
                    )
                }
            return Found(self._hits(best), fetched=len(rows), per_session=per_session)
        except sqlite3.OperationalError as error:
            raise SearchError(str(error)) from error

    def _best_of_each_session(
        self, rows: list[tuple[int, float]], limit: int, gated: bool
    ) -> dict[int, tuple[float, int]]:
        """Session rowid -> (rank, message rowid) of its best message among `rows` (best first), for the first
        `limit` sessions (the gate's kept-back ones passed over when `gated`)."""
        session_of = dict(
            self.connection.execute(
                "SELECT rowid, session FROM messages WHERE rowid IN (SELECT value FROM json_each(?))"
                + (f" AND {_GATED.format(column='session')}" if gated else ""),
                (json.dumps([rowid for rowid, _rank in rows]),),
            )
        )
        best: dict[int, tuple[float, int]] = {}
        for rowid, rank in rows:
            session = session_of.get(rowid)
            if session is not None and session not in best:
                best[session] = (rank, rowid)
                if len(best) == limit:
                    break
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

# How many of the best messages a search takes first, per hit asked for (and at least): enough that they nearly always
# hold `limit` sessions; when they do not, one more pass finds the best message of every session (see Reader.search).
OVERFETCH = 10
OVERFETCH_AT_LEAST = 200

# The best messages by BM25. bm25() named rather than FTS5's `rank` column: under ORDER BY rank, FTS5 sorts every match
# (with its positions) before giving the first; ordering by the function's value lets SQLite keep only the LIMIT best.
_BEST_MESSAGES = (
    "SELECT rowid, bm25(messages_fts) AS score FROM messages_fts WHERE messages_fts MATCH ? "
    "ORDER BY score, rowid DESC LIMIT ?"
)
# The best message of each session, the best sessions first. The ranking is kept in a subquery of its own (`LIMIT -1`
# stops SQLite from flattening it: bm25() cannot be called in an aggregate); min() gives its row's other columns.
_RANKED = "SELECT rowid, bm25(messages_fts) AS score FROM messages_fts WHERE messages_fts MATCH ? LIMIT -1"
_BEST_PER_SESSION = (
    f"SELECT m.session, min(ranked.score) AS best, ranked.rowid FROM ({_RANKED}) AS ranked "
    "JOIN messages AS m ON m.rowid = ranked.rowid GROUP BY m.session ORDER BY best, ranked.rowid DESC LIMIT ?"
)
_BEST_PER_SESSION_GATED = _BEST_PER_SESSION.replace(
    "GROUP BY", f"WHERE {_GATED.format(column='m.session')} GROUP BY"
)


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
