"""The search's lists of very common words and prefixes (store/impact.py): exactly FTS5's own ranking, through every
kind of write an import makes, with the lists small enough that they answer and that the fallback is hit."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from gateway_sessions import store
from gateway_sessions.model import Message, Session
from gateway_sessions.store import impact

WORDS = ["ka", "kasa", "kasador", "kaso", "lo", "lomi", "mi", "ren", "tus", "ba", "qui", "dor", "kasabi", "sa"]
QUERIES = ["kasa", "kasa*", "ka*", "k*", "lo", "lo*", "mi", "ren*", "zzz*", "kasabi"]


@pytest.fixture
def small_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    # Low enough that a store of a few hundred messages has lists, shallow enough that some searches walk past them.
    monkeypatch.setattr(impact, "THRESHOLD", 15)
    monkeypatch.setattr(impact, "DEPTH", 12)
    monkeypatch.setattr(impact, "REDISCOVER_AT_LEAST", 10)
    # The phrases worked out again only when the store doubles: most imports keep the lists up by themselves.
    monkeypatch.setattr(impact, "REDISCOVER_GROWTH", 2.0)


def _text(rng: random.Random) -> str:
    weights = [1 / (rank + 1) for rank in range(len(WORDS))]
    return " ".join(rng.choices(WORDS, weights=weights, k=rng.randint(1, 14)))


def _session(rng: random.Random, n: int, messages: list[tuple[str, str]]) -> Session:
    return Session(
        agent="claude-code",
        id=f"s{n}",
        cwd=f"/home/ada/project{n % 4}",
        created_at=f"2026-01-{1 + n % 28:02d}T00:00:00Z",
        messages=[Message(key=key, role="user", blocks=[{"type": "text", "text": text}]) for key, text in messages],
    )


def _thirty_sessions(path: Path, rng: random.Random) -> sqlite3.Connection:
    """A store of 30 sessions of 6 messages written through the importer's writes; its writing connection."""
    connection = store.open_for_writing(path)
    writes = store.Writes.begin(connection)
    for n in range(30):
        writes.upsert(_session(rng, n, [(f"m{i}", _text(rng)) for i in range(6)]))
    writes.commit()
    return connection


def _exact(connection: sqlite3.Connection, query: str, limit: int, kept: set[int]) -> list[tuple[int, int]]:
    """FTS5's own ORDER BY rank walked until `limit` sessions (the bench's exact_search): (session, message)."""
    seen: dict[int, int] = {}
    for rowid, session in connection.execute(
        "SELECT f.rowid, m.session FROM messages_fts AS f JOIN messages AS m ON m.rowid = f.rowid "
        "WHERE messages_fts MATCH ? ORDER BY rank, f.rowid DESC",
        (query,),
    ):
        if session not in seen and session not in kept:
            seen[session] = rowid
            if len(seen) == limit:
                break
    return list(seen.items())


def _check(path: Path, limit: int, kept: set[int]) -> tuple[int, int]:
    """Every query's hits equal FTS5's ranking; (answered from a list, answered by FTS5)."""
    connection = sqlite3.connect(path, isolation_level=None)
    reader = store.Reader(connection)
    connection.executemany("INSERT INTO temp.kept_back(rowid) VALUES (?)", ((r,) for r in kept))
    from_list = fallback = 0
    for query in QUERIES:
        found = reader.search(query, limit, gated=bool(kept))
        got = [(hit.session.rowid, hit.message_rowid) for hit in found.hits]
        assert got == _exact(connection, query, limit, kept), (query, found.from_list)
        if found.from_list:
            ranks = dict(
                connection.execute(
                    "SELECT rowid, bm25(messages_fts) FROM messages_fts WHERE messages_fts MATCH ?", (query,)
                )
            )
            assert [hit.rank for hit in found.hits] == [ranks[hit.message_rowid] for hit in found.hits]
            from_list += 1
        else:
            fallback += 1
    reader.close()
    return from_list, fallback


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_hits_equal_fts5_ranking_through_imports_rewinds_and_changes(
    tmp_path: Path, small_lists: None, seed: int
) -> None:
    rng = random.Random(seed)
    path = tmp_path / "sessions.db"
    connection = store.open_for_writing(path)
    sessions: dict[int, list[tuple[str, str]]] = {}
    from_list = fallback = 0
    for step in range(8):
        writes = store.Writes.begin(connection)
        for _ in range(rng.randint(3, 12)):  # new sessions
            n = len(sessions)
            sessions[n] = [(f"m{i}", _text(rng)) for i in range(rng.randint(1, 12))]
            writes.upsert(_session(rng, n, sessions[n]))
        for n in rng.sample(sorted(sessions), k=min(len(sessions), 4)):  # rewinds, changed texts, new lines
            messages = sessions[n]
            dropped = []
            if len(messages) > 1 and rng.random() < 0.5:
                dropped = [key for key, _text in rng.sample(messages, k=rng.randint(1, len(messages) - 1))]
                messages = [(key, text) for key, text in messages if key not in dropped]
            if messages and rng.random() < 0.5:
                at = rng.randrange(len(messages))
                messages[at] = (messages[at][0], _text(rng))
            messages.append((f"n{step}", _text(rng)))
            sessions[n] = messages
            writes.upsert(_session(rng, n, messages), dropped=dropped)
        writes.commit()
        all_sessions = [row[0] for row in connection.execute("SELECT rowid FROM sessions")]
        kept = set(rng.sample(all_sessions, k=len(all_sessions) // 5))
        for limit in (3, 20):
            answered, missed = _check(path, limit, kept)
            from_list += answered
            fallback += missed
            answered, missed = _check(path, limit, set())
            from_list += answered
            fallback += missed
    connection.close()
    assert from_list and fallback  # both paths were checked


def test_the_score_is_bm25_for_every_stored_message(tmp_path: Path, small_lists: None) -> None:
    rng = random.Random(5)
    path = tmp_path / "sessions.db"
    connection = _thirty_sessions(path, rng)
    phrases = connection.execute("SELECT id, phrase, df FROM impact_phrases").fetchall()
    assert {"kasa", "kasa*", "k*"} <= {phrase for _id, phrase, _df in phrases}
    rows, tokens = impact.totals(connection)
    assert rows == connection.execute("SELECT count(*) FROM messages").fetchone()[0]
    checked = 0
    for pid, phrase, df in phrases:
        ranks = dict(
            connection.execute("SELECT rowid, bm25(messages_fts) FROM messages_fts WHERE messages_fts MATCH ?", (phrase,))
        )
        assert df == len(ranks)
        for tf, dl, message in connection.execute(
            "SELECT tf, dl, message FROM impact_entries WHERE phrase = ?", (pid,)
        ):
            assert impact.bm25(tf, dl, df, rows, tokens) == ranks[message]  # bit for bit
            checked += 1
    assert checked > 100


def test_a_phrase_marked_for_rebuild_answers_through_fts5(tmp_path: Path, small_lists: None) -> None:
    rng = random.Random(9)
    path = tmp_path / "sessions.db"
    connection = _thirty_sessions(path, rng)
    reader = store.Reader(sqlite3.connect(path, isolation_level=None))
    assert reader.search("kasa*", 3).from_list
    connection.execute("UPDATE impact_phrases SET stale = 1 WHERE phrase = 'kasa*'")
    found = reader.search("kasa*", 3)
    assert not found.from_list
    assert [(h.session.rowid, h.message_rowid) for h in found.hits] == _exact(reader.connection, "kasa*", 3, set())
    # The next import's commit makes it again.
    writes = store.Writes.begin(connection)
    writes.upsert(_session(rng, 99, [("m0", "kasa lo")]))
    writes.commit()
    assert reader.search("kasa*", 3).from_list
    reader.close()
    connection.close()


def test_an_existing_store_gets_its_lists_when_opened_for_writing(tmp_path: Path, small_lists: None) -> None:
    rng = random.Random(11)
    path = tmp_path / "sessions.db"
    connection = _thirty_sessions(path, rng)
    connection.execute("DELETE FROM impact_built")  # as a store made before the lists
    connection.execute("DELETE FROM impact_phrases")
    connection.close()
    said: list[str] = []
    connection = store.open_for_writing(path, said.append)
    assert any("lists" in sentence for sentence in said)
    assert connection.execute("SELECT count(*) FROM impact_phrases").fetchone()[0] > 0
    connection.close()


def test_a_write_the_lists_did_not_see_sends_the_search_to_fts5(tmp_path: Path, small_lists: None) -> None:
    rng = random.Random(13)
    path = tmp_path / "sessions.db"
    connection = _thirty_sessions(path, rng)
    reader = store.Reader(sqlite3.connect(path, isolation_level=None))
    assert reader.search("kasa", 3).from_list
    # A message removed by hand (the triggers keep the index right, but nothing counts it out of the lists) ...
    best = reader.search("kasa", 1).hits[0].message_rowid
    connection.execute("DELETE FROM messages WHERE rowid = ?", (best,))
    found = reader.search("kasa", 3)
    assert not found.from_list
    assert [(h.session.rowid, h.message_rowid) for h in found.hits] == _exact(reader.connection, "kasa", 3, set())
    # ... and one added by hand, with its index entry.
    writes = store.Writes.begin(connection)
    writes.commit()  # the removal counted out at the next import's commit
    assert reader.search("kasa", 3).from_list
    connection.execute("INSERT INTO messages(session, key, seq, role, text, blocks) VALUES (1, 'x', 99, 'user', "
                       "'kasa kasa kasa', '[]')")
    connection.execute("INSERT INTO messages_fts(rowid, text) VALUES (last_insert_rowid(), 'kasa kasa kasa')")
    found = reader.search("kasa", 3)
    assert not found.from_list
    assert [(h.session.rowid, h.message_rowid) for h in found.hits] == _exact(reader.connection, "kasa", 3, set())
    connection.close()
    # The next import makes the lists again (they cannot know what such a write did).
    said: list[str] = []
    store.open_for_writing(path, said.append).close()
    assert any("lists" in sentence for sentence in said)
    found = reader.search("kasa", 3)
    assert found.from_list
    assert [(h.session.rowid, h.message_rowid) for h in found.hits] == _exact(reader.connection, "kasa", 3, set())
    reader.close()
