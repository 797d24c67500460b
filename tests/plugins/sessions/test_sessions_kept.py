"""The gate's kept-back sessions followed as the store grows (store/kept.py) are exactly those worked out whole.

Random stores are grown step by step through the importer's own writes (new sessions, subagents stored before or
after their parent, new places for old sessions, a session removed); after each step the reader's ``kept_back``,
which followed the changes, must equal what a fresh look at the whole store finds, for either choice about what lies
outside every project and for two gates used in turn.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from gateway_sessions import store
from gateway_sessions.model import Message, Session
from gateway_sessions.store.kept import CLOSED, OPEN, OUTSIDE, work_out

PLACES = [f"/home/ada/src/{name}{n}" for name in ("vault", "orchard", "loose") for n in range(4)]


def verdict_of(closed: str):
    """A gate: places under /home/ada/src/<closed>* are closed, vault and orchard are projects, loose is outside."""

    def judge(path: str) -> int:
        if "/loose" in path:
            return OUTSIDE
        return CLOSED if f"/{closed}" in path else OPEN

    return judge


def session(rng: random.Random, number: int, parent: str = "") -> Session:
    places = set(rng.sample(PLACES, rng.randint(0, 2)))
    return Session(
        agent="claude-code",
        id=f"s{number}",
        parent_id=parent,
        cwd=places.pop() if places else "",
        cwds=places,
        created_at=f"2026-11-{1 + number % 28:02d}T10:00:00Z",
        messages=[Message(key=f"m{number}", role="user", blocks=[{"type": "text", "text": f"note {number}"}])],
    )


def grow(connection: sqlite3.Connection, rng: random.Random, stored: list[int]) -> None:
    """One step: a few sessions written in one transaction, as an import does."""
    writes = store.Writes.begin(connection)
    for _ in range(rng.randint(1, 3)):
        kind = rng.random()
        if kind < 0.45 or not stored:
            number = len(stored) + rng.randint(0, 3)  # sometimes a subagent's parent stored later
            parent = f"s{rng.randint(0, number + 2)}" if rng.random() < 0.5 else ""
            writes.upsert(session(rng, number, parent))
            stored.append(number)
        elif kind < 0.9:  # an old session seen again, with a new place
            number = rng.choice(stored)
            grown = session(rng, number)
            grown.cwds.add(rng.choice(PLACES))
            writes.upsert(grown)
        else:
            writes.commit()
            connection.execute("DELETE FROM sessions WHERE id = ?", (f"s{rng.choice(stored)}",))
            writes = store.Writes.begin(connection)
    writes.commit()


def kept_now(reader: store.Reader) -> set[int]:
    return {row[0] for row in reader.connection.execute("SELECT rowid FROM temp.kept_back")}


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("outside_open", [True, False])
def test_followed_kept_back_sessions_equal_those_worked_out_whole(tmp_path: Path, seed: int, outside_open: bool):
    rng = random.Random(seed)
    path = tmp_path / "sessions.db"
    writer = store.open_for_writing(path)
    writer.execute("PRAGMA foreign_keys=ON")
    stored: list[int] = []
    grow(writer, rng, stored)
    reader = store.reader(path)
    assert reader is not None
    gates = {"vault": {}, "orchard": {}}
    for step in range(40):
        grow(writer, rng, stored)
        gate = "vault" if step % 5 else "orchard"  # now and then the other gate, whose view is older
        with reader.snapshot():
            count = reader.keep_back(gate, gates[gate], verdict_of(gate), outside_open)
            followed = kept_now(reader)
            whole = work_out(reader.connection, {}, verdict_of(gate), outside_open).kept
        assert followed == whole, f"step {step}"
        assert count == len(whole)
    writer.close()


def test_a_subagent_stored_before_its_parent_in_a_closed_project_is_kept_back_once_the_parent_arrives(
    tmp_path: Path,
):
    path = tmp_path / "sessions.db"
    writer = store.open_for_writing(path)
    child = Session(agent="claude-code", id="child", parent_id="parent", created_at="2026-11-02T10:00:00Z")
    store.upsert(writer, child)
    reader = store.reader(path)
    judge = verdict_of("vault")
    verdicts: dict[str, int] = {}
    with reader.snapshot():
        assert reader.keep_back("vault", verdicts, judge, True) == 0
    parent = Session(agent="claude-code", id="parent", cwd="/home/ada/src/vault1", created_at="2026-11-01T10:00:00Z")
    store.upsert(writer, parent)
    with reader.snapshot():
        assert reader.keep_back("vault", verdicts, judge, True) == 2
        rows = dict(reader.connection.execute("SELECT id, rowid FROM sessions"))
        assert kept_now(reader) == {rows["child"], rows["parent"]}
    writer.close()
