"""Imports written several files to a transaction, new messages indexed once per batch: the same store as file by file,
and a consistent one whatever interrupts them."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from gateway_sessions import importing, store
from gateway_sessions.importers import Parsed, claude_code, json_lines
from gateway_sessions.importing import import_agent
from gateway_sessions.model import Message, Session, iso

from tests.plugins.sessions.sessions_helpers import place_fixtures

AGENTS = ("claude-code", "codex", "gemini", "opencode")
QUERIES = ("pear", "orchard", "crate*", "release notes", "fig", "apricot", "prune OR plum", "ka*")


def _import(path: Path, agents=AGENTS, **options) -> list[importing.Report]:
    connection = store.open_for_writing(path)
    try:
        return [import_agent(connection, agent, **options) for agent in agents]
    finally:
        connection.close()


def _contents(path: Path) -> dict[str, object]:
    """Everything a store holds that an import decides, independent of rowids; and the search answers."""
    connection = sqlite3.connect(path)
    sessions = connection.execute(
        "SELECT agent, id, parent_id, title, cwd, created_at, updated_at, message_count, source FROM sessions "
        "ORDER BY agent, id"
    ).fetchall()
    messages = connection.execute(
        "SELECT s.agent, s.id, m.key, m.seq, m.role, m.created_at, m.text, m.blocks "
        "FROM messages AS m JOIN sessions AS s ON s.rowid = m.session ORDER BY s.agent, s.id, m.key"
    ).fetchall()
    sources = connection.execute(
        "SELECT path, agent, size, broken_lines FROM sources ORDER BY path"
    ).fetchall()
    connection.close()
    reader = store.Reader(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True))
    searches = {
        query: [
            (hit.session.agent, hit.session.id, round(hit.rank, 9)) for hit in reader.search(query, 20).hits
        ]
        for query in QUERIES
    }
    reader.close()
    return {"sessions": sessions, "messages": messages, "sources": sources, "searches": searches}


def _assert_consistent(path: Path) -> None:
    """The index holds exactly the stored messages (FTS5's own check, and one entry per row), counts are right."""
    connection = sqlite3.connect(path)
    connection.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
    indexed = connection.execute("SELECT count(*) FROM messages_fts_docsize").fetchone()[0]
    assert indexed == connection.execute("SELECT count(*) FROM messages").fetchone()[0]
    wrong_counts = connection.execute(
        "SELECT id FROM sessions AS s WHERE message_count != (SELECT count(*) FROM messages WHERE session = s.rowid)"
    ).fetchall()
    assert wrong_counts == []
    connection.close()


def _touch_all(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            status = path.stat()
            os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000))


def test_a_batched_first_import_gives_the_same_store_as_file_by_file_and_a_reimport(
    gateway_home: Path, tmp_path: Path
):
    place_fixtures(gateway_home)
    batched, one_by_one = tmp_path / "batched.db", tmp_path / "one-by-one.db"
    reports = _import(batched)  # each agent's files in one transaction (the fixtures are small)
    assert [report.failed for report in reports] == [[]] * len(AGENTS)
    _import(one_by_one, batch_messages=1)  # a transaction for each file
    _assert_consistent(batched)
    _assert_consistent(one_by_one)
    assert _contents(batched) == _contents(one_by_one)
    before = _contents(batched)
    assert sum(len(hits) for hits in before["searches"].values()) > 5
    # Every file read again (touched): every message upserted over itself, nothing new, nothing lost.
    _touch_all(gateway_home)
    again = _import(batched)
    assert sum(report.files_read for report in again) == sum(report.files_read for report in reports)
    _assert_consistent(batched)
    assert _contents(batched) == before


def _claude_line(session_id: str, uuid: str, role: str, text: str, second: int) -> str:
    message: dict = {"role": role, "content": text}
    if role == "assistant":
        message = {"id": f"msg_{uuid}", "role": role, "content": [{"type": "text", "text": text}]}
    return json.dumps(
        {
            "type": role,
            "uuid": uuid,
            "sessionId": session_id,
            "cwd": "/home/ada/src/orchard",
            "timestamp": f"2026-04-01T10:00:{second:02d}.250Z",
            "message": message,
        }
    )


def test_one_session_in_two_files_of_one_batch_is_indexed_before_it_is_updated(tmp_path: Path):
    """The second file edits a message the first wrote in the same transaction: the edit is indexed, not both."""
    projects = tmp_path / "projects" / "-home-ada-src-orchard"
    projects.mkdir(parents=True)
    (projects / "a.jsonl").write_text(
        "\n".join(
            [
                _claude_line("s-shared", "u1", "user", "Grade the quince harvest", 0),
                _claude_line("s-shared", "a1", "assistant", "The quince crates weigh nine kilos", 1),
            ]
        )
        + "\n"
    )
    (projects / "b.jsonl").write_text(
        "\n".join(
            [
                _claude_line("s-shared", "u1", "user", "Grade the medlar harvest", 0),
                _claude_line("s-shared", "u2", "user", "Then the sloe hedges", 2),
            ]
        )
        + "\n"
    )
    stores = {}
    for name, batch in (("together", store.BATCH_MESSAGES), ("apart", 1)):
        path = tmp_path / f"{name}.db"
        connection = store.open_for_writing(path)
        report = import_agent(connection, "claude-code", tmp_path / "projects", batch_messages=batch)
        connection.close()
        assert (report.files_read, report.sessions) == (2, 2)
        _assert_consistent(path)
        stores[name] = _contents(path)
        reader = store.reader(path)
        session = reader.find("s-shared")
        assert [m.text for m in reader.messages(session)] == [
            "Grade the medlar harvest",
            "The quince crates weigh nine kilos",
            "Then the sloe hedges",
        ]
        assert session.message_count == 3
        assert [hit.session.id for hit in reader.search("medlar", 5).hits] == ["s-shared"]
        assert reader.search("harvest quince", 5).hits == []  # the first version of u1 is gone from the index
    assert stores["together"] == stores["apart"]


def _session(session_id: str, texts: list[str]) -> Session:
    return Session(
        agent="gemini",
        id=session_id,
        cwd="/home/ada/src/orchard",
        created_at="2026-05-01T09:00:00Z",
        updated_at="2026-05-01T09:00:00Z",
        messages=[
            Message(key=f"m{i}", role="user", blocks=[{"type": "text", "text": text}])
            for i, text in enumerate(texts)
        ],
    )


@pytest.mark.parametrize("one_transaction", [True, False])
def test_a_rewind_that_deletes_the_last_row_then_new_messages_in_the_same_batch(
    tmp_path: Path, one_transaction: bool
):
    """Deleting the newest row lets the next insert take its rowid again: that row must still be indexed."""
    path = tmp_path / "store.db"
    connection = store.open_for_writing(path)
    writes = store.Writes.begin(connection)
    writes.upsert(_session("s-rewound", ["almond blossom", "walnut husk", "hazel catkin"]))
    if not one_transaction:
        writes.commit()
        writes = store.Writes.begin(connection)
    writes.upsert(_session("s-rewound", ["almond blossom", "walnut husk"]), dropped=["m2"])
    writes.upsert(_session("s-after", ["chestnut roasting"]))
    writes.commit()
    connection.close()
    _assert_consistent(path)
    reader = store.reader(path)
    assert [hit.session.id for hit in reader.search("chestnut", 5).hits] == ["s-after"]
    assert reader.search("catkin", 5).hits == []
    assert reader.find("s-rewound").message_count == 2


def _interrupt(monkeypatch: pytest.MonkeyPatch, where: str, at_call: int) -> None:
    """Make the `at_call`-th file's reading (KeyboardInterrupt, as Ctrl-C) or writing (an error) fail."""
    calls = {"n": 0}
    if where == "read":
        real = claude_code.read

        def read(path: Path) -> Parsed:
            calls["n"] += 1
            if calls["n"] == at_call:
                raise KeyboardInterrupt
            return real(path)

        monkeypatch.setattr(claude_code, "read", read)
    else:
        real_record = store.record_source

        def record_source(*args, **kwargs) -> None:
            # Called after the file's sessions were written, before the file is recorded as read.
            calls["n"] += 1
            if calls["n"] == at_call:
                raise RuntimeError("disk on fire")
            real_record(*args, **kwargs)

        monkeypatch.setattr(store, "record_source", record_source)


@pytest.mark.parametrize("where", ["read", "write"])
@pytest.mark.parametrize("batch", [1, store.BATCH_MESSAGES])
def test_an_import_interrupted_mid_batch_leaves_a_consistent_store_and_the_next_one_finishes_it(
    gateway_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, batch: int
):
    place_fixtures(gateway_home)
    path = tmp_path / "interrupted.db"
    _import(path, agents=("codex",))  # already imported before: must survive
    kept = _contents(path)
    with monkeypatch.context() as patch:
        _interrupt(patch, where, at_call=3)
        with pytest.raises((KeyboardInterrupt, RuntimeError)):
            _import(path, agents=("claude-code",), batch_messages=batch)
    _assert_consistent(path)
    connection = sqlite3.connect(path)
    recorded = connection.execute("SELECT path FROM sources WHERE agent = 'claude-code'").fetchall()
    sessions = connection.execute("SELECT count(*) FROM sessions WHERE agent = 'claude-code'").fetchone()[0]
    connection.close()
    # A file a transaction each: the first two are committed. All in one: nothing of it is.
    assert len(recorded) == sessions == (2 if batch == 1 else 0)
    now = _contents(path)
    assert [row for row in now["sessions"] if row[0] == "codex"] == kept["sessions"]
    assert [row for row in now["messages"] if row[0] == "codex"] == kept["messages"]
    # The next import reads what was not committed, and the store is that of an import never interrupted.
    report = _import(path, agents=("claude-code",))[0]
    assert report.files_read == 4 - len(recorded)
    _assert_consistent(path)
    clean = tmp_path / "clean.db"
    _import(clean, agents=("codex", "claude-code"))
    assert _contents(path) == _contents(clean)


def test_the_writers_index_options_stay_those_of_this_version(tmp_path: Path):
    """open_for_writing sets FTS5's hashsize (a writing setting); the index itself is still current."""
    path = tmp_path / "store.db"
    store.open_for_writing(path).close()
    connection = store.open_for_writing(path)
    assert store.index_is_current(connection)
    hashsize = connection.execute("SELECT v FROM messages_fts_config WHERE k = 'hashsize'").fetchone()
    assert hashsize == (store.HASHSIZE,)
    connection.close()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-03-03T14:00:00.000Z", "2026-03-03T14:00:00Z"),
        ("2026-03-03T14:00:59.123456Z", "2026-03-03T14:00:59Z"),
        ("2026-03-03T23:59:59Z", "2026-03-03T23:59:59Z"),
        ("2026-03-03T14:00:00+02:00", "2026-03-03T12:00:00Z"),
        ("2026-03-03T14:00:00", "2026-03-03T14:00:00Z"),
        ("2024-02-29T10:00:00Z", "2024-02-29T10:00:00Z"),
        ("2026-02-29T10:00:00Z", ""),
        ("2026-13-01T10:00:00Z", ""),
        ("2026-03-03T24:00:00Z", ""),
        ("2026-03-03T14:00:60Z", ""),
        ("not a time", ""),
        (1_772_546_400, "2026-03-03T14:00:00Z"),
        (1_772_546_400_000, "2026-03-03T14:00:00Z"),
    ],
)
def test_iso_gives_the_same_form_on_its_quick_path_and_through_datetime(value, expected):
    assert iso(value) == expected


def test_blank_lines_are_passed_over_and_broken_ones_counted():
    parsed = Parsed()
    records = list(
        json_lines(iter(["\n", "   \n", "{broken\n", "[1, 2]\n", '{"type": "user"}\n', ""]), parsed)
    )
    assert records == [{"type": "user"}]
    assert parsed.broken_lines == 2
