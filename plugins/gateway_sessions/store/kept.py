"""The sessions the gate keeps back, worked out once and then followed as the store grows.

A session is kept back when one of its places, or one of its ancestors' (a subagent's session belongs where the
session that started it does), is in a closed project; and, when the gate keeps closed what lies outside every
project, when none of them is in any project. Working that out for the whole store means reading every distinct place
and every parent link: about a quarter of a second at 100,000 sessions. With call-time refresh a store changes between
most calls while the person works, so after the first time only what was added is read: the places the store's
``place_log`` records since (each judged once per gate), the sessions stored since, and again each session they touch
and its descendants. A change that cannot be followed that way (a session or a place removed, a parent changed; the
store counts them in ``meta.gate_changes``) or a store without the log makes it start over.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable

from attrs import define, field

# A place's verdict: in no project, in projects all open, in a closed one.
OUTSIDE, OPEN, CLOSED = 0, 1, 2

# Past this many new places or sessions, starting over costs less than following them one by one.
FOLLOW_AT_MOST = 20_000


@define
class Kept:
    """One gate's view of one state of the store: which sessions it keeps back, and what is needed to follow it."""

    outside_open: bool
    kept: set[int] = field(factory=set)
    closed: set[int] = field(factory=set)  # sessions with a place of their own in a closed project
    owned: set[int] = field(factory=set)  # sessions with a place of their own in some project
    parent: dict[int, int] = field(factory=dict)  # child -> parent (rowids)
    children: dict[int, set[int]] = field(factory=dict)
    waiting: dict[tuple[str, str], set[int]] = field(factory=dict)  # children whose parent is not stored yet
    log_seq: int | None = None  # the last place_log entry seen (None: the store keeps no log)
    last_session: int = 0
    changes: str = ""

    def status(self, session: int) -> bool:
        """Whether the session is kept back, from its own places and its ancestors' (a loop in the ids is cut)."""
        closed = owned = False
        seen: set[int] = set()
        current: int | None = session
        while current is not None and current not in seen:
            seen.add(current)
            closed = closed or current in self.closed
            owned = owned or current in self.owned
            current = self.parent.get(current)
        return closed or (not self.outside_open and not owned)

    def below(self, sessions: Iterable[int]) -> set[int]:
        """The sessions and all their descendants."""
        found: set[int] = set()
        stack = list(sessions)
        while stack:
            session = stack.pop()
            if session not in found:
                found.add(session)
                stack.extend(self.children.get(session, ()))
        return found

    def link(self, child: int, parent: int) -> None:
        if child != parent:
            self.parent[child] = parent
            self.children.setdefault(parent, set()).add(child)


def _markers(connection: sqlite3.Connection) -> tuple[int | None, int, str]:
    """The last place logged (None without a log), the last session stored, and the count of unfollowable changes."""
    try:
        seq = connection.execute("SELECT coalesce(max(seq), 0) FROM place_log").fetchone()[0]
    except sqlite3.OperationalError:  # a store made before the log: it is worked out whole each time
        seq = None
    last = connection.execute("SELECT coalesce(max(rowid), 0) FROM sessions").fetchone()[0]
    row = connection.execute("SELECT value FROM meta WHERE key = 'gate_changes'").fetchone()
    return seq, last, "" if row is None else str(row[0])


def _sessions_at(connection: sqlite3.Connection, paths: list[str]) -> set[int]:
    if not paths:
        return set()
    return {
        row[0]
        for row in connection.execute(
            "SELECT DISTINCT session FROM session_paths WHERE path IN (SELECT value FROM json_each(?))",
            (json.dumps(paths),),
        )
    }


def work_out(
    connection: sqlite3.Connection, verdicts: dict[str, int], judge: Callable[[str], int], outside_open: bool
) -> Kept:
    """The whole store's kept-back sessions for one gate; `judge` is asked once per place not yet in `verdicts`."""
    state = Kept(outside_open=outside_open)
    state.log_seq, state.last_session, state.changes = _markers(connection)
    for (path,) in connection.execute("SELECT DISTINCT path FROM session_paths"):
        if path not in verdicts:
            verdicts[path] = judge(path)
    # A copy: another thread's call may add places to the gate's verdicts meanwhile.
    judged = dict(verdicts)
    state.closed = _sessions_at(connection, [path for path, verdict in judged.items() if verdict == CLOSED])
    state.owned = _sessions_at(connection, [path for path, verdict in judged.items() if verdict != OUTSIDE])
    rows = connection.execute(
        "SELECT c.rowid, c.agent, c.parent_id, p.rowid FROM sessions AS c LEFT JOIN sessions AS p "
        "ON p.agent = c.agent AND p.id = c.parent_id WHERE c.parent_id != ''"
    )
    for child, agent, parent_id, parent in rows:
        if parent is None:
            state.waiting.setdefault((agent, parent_id), set()).add(child)
        else:
            state.link(child, parent)
    state.kept = state.below(state.closed)
    if not outside_open:
        owned = state.below(state.owned)
        state.kept.update(row[0] for row in connection.execute("SELECT rowid FROM sessions") if row[0] not in owned)
    return state


def follow(
    state: Kept, connection: sqlite3.Connection, verdicts: dict[str, int], judge: Callable[[str], int]
) -> tuple[set[int], set[int]] | None:
    """Bring `state` up to the store's present state: the sessions newly kept back and those no longer kept; None
    when it cannot be followed (start over with work_out)."""
    seq, last, changes = _markers(connection)
    if seq is None or state.log_seq is None or changes != state.changes or seq < state.log_seq:
        return None
    if seq - state.log_seq > FOLLOW_AT_MOST or last - state.last_session > FOLLOW_AT_MOST:
        return None
    touched: set[int] = set()
    for rowid, agent, session_id, parent_id in connection.execute(
        "SELECT rowid, agent, id, parent_id FROM sessions WHERE rowid > ?", (state.last_session,)
    ):
        touched.add(rowid)
        for child in state.waiting.pop((agent, session_id), ()):  # children stored before their parent
            state.link(child, rowid)
            touched.add(child)
        if parent_id:
            row = connection.execute(
                "SELECT rowid FROM sessions WHERE agent = ? AND id = ?", (agent, parent_id)
            ).fetchone()
            if row is None:
                state.waiting.setdefault((agent, parent_id), set()).add(rowid)
            else:
                state.link(rowid, row[0])
    for session, path in connection.execute(
        "SELECT session, path FROM place_log WHERE seq > ? AND seq <= ?", (state.log_seq, seq)
    ):
        verdict = verdicts.get(path)
        if verdict is None:
            verdict = verdicts[path] = judge(path)
        if verdict == CLOSED:
            state.closed.add(session)
        if verdict != OUTSIDE:
            state.owned.add(session)
        touched.add(session)
    added: set[int] = set()
    removed: set[int] = set()
    for session in state.below(touched):
        now = state.status(session)
        if now and session not in state.kept:
            state.kept.add(session)
            added.add(session)
        elif not now and session in state.kept:
            state.kept.discard(session)
            removed.add(session)
    state.log_seq, state.last_session = seq, last
    return added, removed
