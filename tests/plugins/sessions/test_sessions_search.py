"""How search ranks: exactly FTS5's BM25 over every match, one session per hit, and an older store upgraded."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import gateway_sessions
import pytest
from click.testing import CliRunner
from gateway_sessions import store
from gateway_sessions.cli import commands
from gateway_sessions.model import Message, Session

from gateway import Folders, PluginHost
from gateway.testing import make_gateway, write_config
from tests.plugins.sessions.sessions_helpers import CANARY, CLOSED_VAULT, VAULT, import_all, store_path

# These stores are imported by hand from some agents only: no call-time refresh adds the others.
HAND_IMPORTED = {"plugins": {"sessions": {"refresh": False}}}

# The search index as the first versions of the plugin made it (no prefix indexes).
OLD_FTS = "text, content='messages', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2'"


def _add(home: Path, sessions: list[tuple[str, list[str]]], cwd: str = "/home/ada/src/orchard") -> None:
    """Sessions (id, texts of their messages), imported in this order: the later, the newer their rowids."""
    connection = store.open_for_writing(store_path(home))
    for n, (session_id, texts) in enumerate(sessions):
        moment = f"2026-06-01T{n // 60:02d}:{n % 60:02d}:00Z"
        store.upsert(
            connection,
            Session(
                agent="codex",
                id=session_id,
                title=f"session {session_id}",
                cwd=cwd,
                created_at=moment,
                updated_at=moment,
                messages=[
                    Message(key=f"m{i}", role="user", blocks=[{"type": "text", "text": text}])
                    for i, text in enumerate(texts)
                ],
            ),
        )
    connection.close()


def _text(loquats: int, filler: int) -> str:
    """More loquats and fewer other words rank better (BM25: term frequency, and length against the average)."""
    return " ".join(["loquat"] * loquats + [f"filler{n}" for n in range(filler)])


def _exact(home: Path, query: str, limit: int, leave_out: str = "") -> list[tuple[str, float]]:
    """(session id, rank) of the best `limit` sessions by FTS5's own ORDER BY rank over every match (ties: the newer
    message first), each session by its best message (sessions whose id begins with `leave_out` passed over)."""
    connection = sqlite3.connect(store_path(home))
    rows = connection.execute(
        "SELECT messages_fts.rowid, rank, s.id FROM messages_fts JOIN messages AS m ON m.rowid = messages_fts.rowid "
        "JOIN sessions AS s ON s.rowid = m.session WHERE messages_fts MATCH ? ORDER BY rank, messages_fts.rowid DESC",
        (query,),
    ).fetchall()
    best: dict[str, float] = {}
    for _rowid, rank, session_id in rows:
        if not (leave_out and session_id.startswith(leave_out)):
            best.setdefault(session_id, rank)
    connection.close()
    return list(best.items())[:limit]


def _hits(answer) -> list[tuple[str, float]]:
    return [(hit["id"], hit["rank"]) for hit in answer.data["hits"]]


def _same(got: list[tuple[str, float]], expected: list[tuple[str, float]]) -> bool:
    return [i for i, _ in got] == [i for i, _ in expected] and all(
        rank == pytest.approx(other) for (_, rank), (_, other) in zip(got, expected, strict=True)
    )


@pytest.fixture
def loquat_home(gateway_home: Path) -> Path:
    """Twelve sessions that match `loquat`, the older ones ranking better (shorter messages, more loquats), after
    thirty that do not (so that the word is rare enough for its IDF to count)."""
    _add(gateway_home, [(f"m{n:02d}", [f"medlar jam number {n}"]) for n in range(30)])
    _add(gateway_home, [(f"q{n:02d}", [_text(1 + (11 - n) // 3, 4 + 3 * n)]) for n in range(12)])
    return gateway_home


def test_prefix_and_word_queries_give_fts5s_own_bm25_order(loquat_home: Path):
    gateway = make_gateway(plugins=[gateway_sessions], home=loquat_home, config=HAND_IMPORTED)
    for query in ("loq*", "loquat", "lo*", "loqu*", "loquat OR filler3"):
        answer = gateway.call("rousseau_search_sessions", {"query": query, "limit": 5})
        assert not answer.is_error, answer.text
        assert _same(_hits(answer), _exact(loquat_home, query, 5)), query
        ranks = [rank for _, rank in _hits(answer)]
        assert ranks == sorted(ranks)
        assert set(answer.data) == {"hits", "left_out"}  # no sampling, nothing more to say


def test_the_best_match_is_found_when_it_is_the_oldest_of_more_than_1000_matching_messages(gateway_home: Path):
    # The oldest message is the best by BM25 (the word three times in four words); 1,200 newer ones match once in
    # 12 to 30 words each, in 300 sessions; and 3,000 messages that do not match keep the word's IDF positive.
    _add(gateway_home, [("oldest", ["loquat loquat loquat jam"])])
    _add(gateway_home, [(f"newer{n:03d}", [_text(1, 11 + (n + i) % 19) for i in range(4)]) for n in range(300)])
    _add(gateway_home, [(f"other{n:03d}", ["medlar jam"] * 10) for n in range(300)])
    gateway = make_gateway(plugins=[gateway_sessions], home=gateway_home, config=HAND_IMPORTED)
    for query in ("loquat", "loq*", "lo*", "loquat OR persimmon"):
        answer = gateway.call("rousseau_search_sessions", {"query": query})
        assert answer.data["hits"][0]["id"] == "oldest", query
        assert answer.text.splitlines()[0].startswith("session oldest (rank -")
        assert _same(_hits(answer), _exact(gateway_home, query, 20)), query


def test_sessions_holding_most_of_the_best_messages_still_give_the_exact_best_sessions(
    gateway_home: Path, monkeypatch: pytest.MonkeyPatch
):
    # Two chatty sessions hold the 40 best messages; the others match once each, less well (and many messages do not
    # match, so that the word's IDF counts).
    _add(gateway_home, [(f"other{n:02d}", ["medlar jam"] * 10 + [_text(1, 6 + n)]) for n in range(30)])
    _add(gateway_home, [(f"chatty{n}", [_text(3, 1) for _ in range(20)]) for n in range(2)])
    monkeypatch.setattr(store.reads, "OVERFETCH", 2)
    monkeypatch.setattr(store.reads, "OVERFETCH_AT_LEAST", 10)  # 10 messages first: two sessions only
    reader = store.reader(store_path(gateway_home))
    found = reader.search("loquat", 5)
    assert found.per_session and found.fetched == 10
    gateway = make_gateway(plugins=[gateway_sessions], home=gateway_home, config=HAND_IMPORTED)
    for limit in (1, 2, 5, 20):
        answer = gateway.call("rousseau_search_sessions", {"query": "loquat", "limit": limit})
        assert _same(_hits(answer), _exact(gateway_home, "loquat", limit)), limit
    assert [i for i, _ in _hits(answer)][:2] == ["chatty1", "chatty0"]  # equal ranks: the newer first
    # The 10 best messages (equal ranks, the newer first) are all chatty1's: enough for one session, not for two.
    assert reader.search("loquat", 1).per_session is False
    assert reader.search("loquat", 2).per_session is True


def test_a_closed_projects_better_messages_push_no_open_session_out(
    loquat_home: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(store.reads, "OVERFETCH", 1)
    monkeypatch.setattr(store.reads, "OVERFETCH_AT_LEAST", 3)
    before = make_gateway(plugins=[gateway_sessions], projects=CLOSED_VAULT, home=loquat_home, config=HAND_IMPORTED)
    open_answer = before.call("rousseau_search_sessions", {"query": "loquat", "limit": 3})
    # Better ranked messages, in the closed project: the same open sessions must be found, in the same order (the
    # rank values, as FTS5 computes them, use IDF and average length over the whole index, so they move).
    _add(loquat_home, [(f"vault{n}", [_text(9, 1)]) for n in range(6)], cwd="/home/ada/src/vault")
    after = make_gateway(plugins=[gateway_sessions], projects=CLOSED_VAULT, home=loquat_home, config=HAND_IMPORTED)
    closed_answer = after.call("rousseau_search_sessions", {"query": "loquat", "limit": 3})
    assert [i for i, _ in _hits(closed_answer)] == [i for i, _ in _hits(open_answer)]
    assert _same(_hits(closed_answer), _exact(loquat_home, "loquat", 3, leave_out="vault"))
    assert closed_answer.data["left_out"] == 6 and "vault" not in closed_answer.text


def test_snippets_are_placed_on_the_match_whatever_the_query_syntax(gateway_home: Path):
    words = " ".join(f"filler{n}" for n in range(80))
    _add(gateway_home, [("long", [f"{words} the medlar harvest starts today {words}"])])
    gateway = make_gateway(plugins=[gateway_sessions], home=gateway_home, config=HAND_IMPORTED)
    for query in (
        "medlar",
        "medl*",
        '"harvest starts"',
        "text: medlar",
        "medlar NOT persimmon",
        "NEAR(medlar today)",
    ):
        snippet = gateway.call("rousseau_search_sessions", {"query": query}).data["hits"][0]["snippet"]
        assert "medlar harvest starts" in snippet, query
        assert snippet.startswith("…") and snippet.endswith("…") and len(snippet) <= 205


def test_the_gates_verdicts_follow_the_manifest_from_one_call_to_the_next(imported_home: Path):
    def search(projects):
        gateway = make_gateway(plugins=[gateway_sessions], projects=projects, home=imported_home, config=HAND_IMPORTED)
        answer = gateway.call("rousseau_search_sessions", {"query": CANARY})
        return [hit["id"] for hit in answer.data["hits"]], answer.data["left_out"]

    opened = [dict(project, ai=True) for project in CLOSED_VAULT]
    assert search(opened) == ([VAULT], 0)
    assert search(CLOSED_VAULT) == ([], 1)
    assert search(opened) == ([VAULT], 0)
    _add(imported_home, [("vault-2", [f"{CANARY} again"])], cwd="/home/ada/src/vault")  # the store changes
    assert search(CLOSED_VAULT) == ([], 2)


def _make_old(home: Path) -> None:
    """Turn the store into one an earlier version made: the same data, the search index without prefix indexes."""
    connection = store.open_for_writing(store_path(home))
    connection.execute("BEGIN")
    connection.execute("DROP TABLE messages_fts")
    connection.execute(f"CREATE VIRTUAL TABLE messages_fts USING fts5({OLD_FTS})")
    connection.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
    connection.execute("COMMIT")
    connection.close()


def _index_sql(home: Path) -> str:
    connection = sqlite3.connect(store_path(home))
    try:
        return connection.execute("SELECT sql FROM sqlite_master WHERE name = 'messages_fts'").fetchone()[0]
    finally:
        connection.close()


def _import(home: Path):
    host = PluginHost(name="sessions", folders=Folders.from_environment().for_plugin("sessions"), settings={})
    (group,) = commands(host)
    return CliRunner().invoke(group, ["import"])


def test_an_older_store_is_searched_as_it_is_and_upgraded_by_the_next_import(loquat_home: Path):
    write_config(loquat_home, {"gateway": {"plugins": ["sessions"]}})
    _make_old(loquat_home)
    assert "prefix" not in _index_sql(loquat_home)
    gateway = make_gateway(plugins=[gateway_sessions], home=loquat_home, config=HAND_IMPORTED)
    old = gateway.call("rousseau_search_sessions", {"query": "loq*", "limit": 4})
    assert not old.is_error and len(old.data["hits"]) == 4
    assert "`gateway sessions import` upgrades it" in old.text

    result = _import(loquat_home)
    assert result.exit_code == 0, result.output
    assert "upgrading the search index of the sessions store" in result.output
    assert "search index upgraded: 42 messages indexed again" in result.output
    assert "prefix='2 3 4'" in _index_sql(loquat_home)
    connection = store.open_for_writing(store_path(loquat_home))
    connection.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
    connection.close()

    new = gateway.call("rousseau_search_sessions", {"query": "loq*", "limit": 4})
    assert _same(_hits(new), _hits(old)) and "upgrades it" not in new.text
    assert "upgrading" not in _import(loquat_home).output  # once only


def test_an_upgrade_that_fails_leaves_the_old_index_whole(loquat_home: Path, monkeypatch: pytest.MonkeyPatch):
    _make_old(loquat_home)
    # The new index cannot be made (after the old one was dropped, in the same transaction).
    monkeypatch.setattr(
        store.schema,
        "FTS_ARGUMENTS",
        "text, content='messages', content_rowid='rowid', tokenize='no_such_tokenizer'",
    )
    with pytest.raises(sqlite3.OperationalError, match="tokenize"):
        store.open_for_writing(store_path(loquat_home))
    assert " ".join(_index_sql(loquat_home).split()).endswith(f"fts5({OLD_FTS})")
    monkeypatch.undo()
    reader = store.reader(store_path(loquat_home))
    assert len(reader.search("loquat", 20).hits) == 12
    assert reader.index_outdated()


def test_the_fixtures_store_is_made_with_the_current_index(imported_home: Path):
    reader = store.reader(store_path(imported_home))
    assert not reader.index_outdated()
    import_all(imported_home)
    assert "prefix='2 3 4'" in _index_sql(imported_home)
