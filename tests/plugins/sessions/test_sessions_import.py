"""Importers and the store: the agents' real formats, incremental upserts, broken lines, files left untouched."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from gateway_sessions import store
from gateway_sessions.importers import claude_code, codex, gemini, opencode

from tests.plugins.sessions.sessions_helpers import (
    FIXTURES,
    NOTES,
    PEARS,
    PLUMS,
    SUBAGENT,
    import_all,
    make_opencode_db,
    place_fixtures,
    store_path,
)


def _messages(home: Path, session_id: str) -> list[store.StoredMessage]:
    reader = store.reader(store_path(home))
    return list(reader.messages(reader.find(session_id)))


def _check_index(home: Path) -> None:
    """FTS5's own check that the index holds exactly the stored texts (it raises when it does not)."""
    connection = store.open_for_writing(store_path(home))
    connection.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
    connection.close()


def _tree_fingerprint(root: Path) -> dict[str, tuple[str, int]]:
    return {
        str(path): (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_claude_code_streamed_reply_is_one_message_with_its_blocks_merged():
    session = claude_code.read(
        FIXTURES / "claude-code" / "-home-ada-src-orchard" / f"{PEARS}.jsonl"
    ).sessions[0]
    reply = session.messages[1]
    assert reply.key == "msg_01PearThinking"
    assert [block["type"] for block in reply.blocks] == ["thinking", "text"]
    assert [m.role for m in session.messages] == ["user", "assistant", "assistant", "user", "assistant"]


def test_claude_code_meta_lines_are_skipped_and_broken_lines_counted():
    parsed = claude_code.read(FIXTURES / "claude-code" / "-home-ada-src-orchard" / f"{PEARS}.jsonl")
    assert parsed.broken_lines == 1
    texts = " ".join(json.dumps(m.blocks) for m in parsed.sessions[0].messages)
    assert "local-command-caveat" not in texts


def test_claude_code_title_comes_from_a_summary_only_when_its_leaf_is_in_the_file():
    session = claude_code.read(
        FIXTURES / "claude-code" / "-home-ada-src-orchard" / f"{PEARS}.jsonl"
    ).sessions[0]
    assert session.title == "Pear importer crash on empty crates"


def test_claude_code_custom_title_wins_and_keeps_the_working_directory():
    session = claude_code.read(
        FIXTURES / "claude-code" / "-home-ada-src-orchard" / f"{NOTES}.jsonl"
    ).sessions[0]
    assert session.title == "Orchard release notes"
    assert session.cwd == "/home/ada/src/orchard"
    assert (session.created_at, session.updated_at) == ("2026-03-03T14:00:00Z", "2026-03-03T14:02:00Z")


def test_claude_code_subagent_file_is_its_own_session_under_its_parent():
    path = FIXTURES / "claude-code" / "-home-ada-src-orchard" / NOTES / "subagents" / "agent-a1b2c3d.jsonl"
    session = claude_code.read(path).sessions[0]
    assert (session.id, session.parent_id) == (SUBAGENT, NOTES)
    assert session.title == "Check CHANGELOG.md lists the crate parser fix."


def test_title_without_the_agents_own_is_the_first_user_words_on_one_line(tmp_path: Path):
    path = tmp_path / "s.jsonl"
    line = {
        "type": "user",
        "uuid": "u1",
        "sessionId": "s1",
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": "Sort the\nmedlars   by weight " + "and colour " * 20},
    }
    path.write_text(json.dumps(line) + "\n")
    title = claude_code.read(path).sessions[0].title
    assert title.startswith("Sort the medlars by weight and colour")
    assert "\n" not in title and len(title) <= 80 and title.endswith("…")


def test_codex_skips_injected_context_and_keeps_tool_calls_as_blocks():
    path = next((FIXTURES / "codex").rglob("rollout-*.jsonl"))
    parsed = codex.read(path)
    session = parsed.sessions[0]
    assert (session.id, session.cwd) == (PLUMS, "/home/ada/src/orchard")
    assert session.title == "Rename the plum module to prune everywhere."
    assert [m.role for m in session.messages] == ["user", "assistant", "assistant", "tool", "assistant"]
    assert session.messages[2].blocks[0] == {
        "type": "tool_use",
        "id": "call_PlumSearch",
        "name": "shell",
        "input": {"command": ["rg", "-l", "import plum"]},
    }
    assert "environment_context" not in json.dumps([m.blocks for m in session.messages])
    assert parsed.broken_lines == 1


def test_codex_reads_zstandard_compressed_rollouts(tmp_path: Path):
    import zstandard

    plain = next((FIXTURES / "codex").rglob("rollout-*.jsonl"))
    packed = tmp_path / (plain.name + ".zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    assert codex.sources(tmp_path) == [packed]
    from_zst, from_plain = codex.read(packed).sessions[0], codex.read(plain).sessions[0]
    assert from_zst.messages == from_plain.messages
    assert from_zst.id == from_plain.id


def test_import_reads_the_default_places_and_reports_broken_lines(gateway_home: Path):
    place_fixtures(gateway_home)
    claude, codex_report = import_all(gateway_home)
    assert (claude.files_read, claude.sessions, claude.broken_lines) == (4, 4, 1)
    assert (codex_report.files_read, codex_report.messages, codex_report.broken_lines) == (1, 5, 1)
    assert any("could not be read" in line for line in claude.lines())


def test_reimport_reads_only_changed_files_and_makes_no_duplicates(imported_home: Path):
    reader = store.reader(store_path(imported_home))
    before = reader.connection.execute("SELECT count(*) FROM messages").fetchone()[0]
    claude, codex_report = import_all(imported_home)
    assert (claude.files_read, claude.files_unchanged) == (0, 4)
    assert codex_report.files_unchanged == 1
    # Touched but identical: read again, still no duplicates.
    path = imported_home / ".claude" / "projects" / "-home-ada-src-orchard" / f"{PEARS}.jsonl"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    assert import_all(imported_home)[0].files_read == 1
    assert reader.connection.execute("SELECT count(*) FROM messages").fetchone()[0] == before
    assert reader.connection.execute("SELECT count(*) FROM sessions").fetchone()[0] == 5


def test_reimport_picks_up_appended_and_edited_messages(imported_home: Path):
    path = imported_home / ".claude" / "projects" / "-home-ada-src-orchard" / f"{NOTES}.jsonl"
    lines = path.read_text().splitlines()
    edited = json.loads(lines[1])
    edited["message"]["content"][0]["text"] = "Release notes redrafted with loquat support."
    appended = dict(
        json.loads(lines[0]), uuid="c2000000-0000-4000-8000-000000000009", timestamp="2026-03-05T10:00:00Z"
    )
    appended["message"] = {"role": "user", "content": "Thanks, ship it."}
    path.write_text("\n".join([lines[0], json.dumps(edited), lines[2], json.dumps(appended)]) + "\n")
    import_all(imported_home)
    messages = _messages(imported_home, NOTES)
    assert [m.text for m in messages][1:] == [
        "Release notes redrafted with loquat support.",
        "Thanks, ship it.",
    ]
    reader = store.reader(store_path(imported_home))
    assert reader.find(NOTES).updated_at == "2026-03-05T10:00:00Z"
    assert reader.find(NOTES).message_count == 3
    assert [h.session.id for h in reader.search("loquat", 5).hits] == [NOTES]
    assert reader.search("drafted", 5).hits == []
    _check_index(imported_home)


def test_sessions_stay_when_the_agent_deletes_its_transcripts(imported_home: Path):
    (imported_home / ".claude" / "projects" / "-home-ada-src-orchard" / f"{PEARS}.jsonl").unlink()
    import_all(imported_home)
    assert len(_messages(imported_home, PEARS)) == 5


def test_import_never_modifies_the_agents_files(gateway_home: Path):
    place_fixtures(gateway_home)
    roots = [gateway_home / ".claude", gateway_home / ".codex"]
    before = [_tree_fingerprint(root) for root in roots]
    import_all(gateway_home)
    import_all(gateway_home)
    assert [_tree_fingerprint(root) for root in roots] == before


def test_a_file_that_cannot_be_read_is_reported_and_the_others_import(gateway_home: Path):
    place_fixtures(gateway_home)
    bad = (
        gateway_home
        / ".codex"
        / "sessions"
        / "2026"
        / "03"
        / "02"
        / "rollout-2026-03-02T11-00-00-broken.jsonl.zst"
    )
    bad.write_bytes(b"this is not zstandard")
    _claude, codex_report = import_all(gateway_home)
    assert codex_report.sessions == 1
    assert [path for path, _reason in codex_report.failed] == [str(bad)]
    assert "was not imported" in codex_report.lines()[-1]


def test_store_is_in_wal_mode_and_the_mcp_side_opens_it_read_only(imported_home: Path):
    reader = store.reader(store_path(imported_home))
    assert reader.connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with pytest.raises(Exception, match="readonly"):
        reader.connection.execute("DELETE FROM sessions")


def test_list_query_walks_the_updated_at_index(imported_home: Path):
    reader = store.reader(store_path(imported_home))
    for closed in ([], ["/home/ada/src/vault"]):
        sql, params = store.recent_query(20, closed)
        plan = reader.connection.execute(f"EXPLAIN QUERY PLAN {sql}", params).fetchall()
        details = " ".join(row[-1] for row in plan)
        assert "idx_sessions_updated_at" in details
        assert "TEMP B-TREE" not in details


GEMINI = FIXTURES / "gemini" / "tmp"


def test_gemini_keeps_the_last_version_of_each_record_and_honours_rewinds():
    path = next(GEMINI.glob("orchard/chats/*.jsonl"))
    parsed = gemini.read(path)
    session = parsed.sessions[0]
    assert session.id == "1a2b3c4d-5555-4e6f-9a0b-112233445566"
    assert [m.key for m in session.messages] == ["g-m1", "g-m2", "g-m3", "g-m7"]
    assert [m.role for m in session.messages] == ["user", "assistant", "assistant", "user"]
    tool_blocks = [b for b in session.messages[1].blocks if b["type"].startswith("tool")]
    assert [b["type"] for b in tool_blocks] == ["tool_use", "tool_result"]
    assert "varnishpetal" in tool_blocks[1]["content"]
    assert parsed.dropped[session.id] == ["g-m4", "g-m5"]
    assert parsed.broken_lines == 1


def test_gemini_title_cwd_and_times_come_from_its_metadata_and_projects_file(gateway_home: Path):
    place_fixtures(gateway_home)
    path = next((gateway_home / ".gemini" / "tmp").glob("orchard/chats/*.jsonl"))
    session = gemini.read(path).sessions[0]
    assert session.title == "Fig varieties in stock"
    assert session.cwd == "/home/ada/src/orchard"
    assert (session.created_at, session.updated_at) == ("2026-03-05T10:00:00Z", "2026-03-05T10:00:30Z")


def test_gemini_older_single_json_sessions_are_read_too():
    sessions = [gemini.read(path).sessions[0] for path in gemini.sources(GEMINI)]
    old = next(s for s in sessions if s.id == "9f8e7d6c-6666-4a7b-8c9d-aabbccddeeff")
    assert old.title == "Summarise the walnut grafting notes."
    assert [m.role for m in old.messages] == ["user", "assistant"]
    assert old.cwd == ""


def test_gemini_rewind_removes_what_an_earlier_import_kept(gateway_home: Path):
    place_fixtures(gateway_home)
    path = next((gateway_home / ".gemini" / "tmp").glob("orchard/chats/*.jsonl"))
    lines = path.read_text().splitlines()
    rewind = lines.index('{"$rewindTo":"g-m4"}')
    original = path.read_text()
    path.write_text("\n".join(lines[:rewind]) + "\n")
    import_all(gateway_home, agents=("gemini",))
    assert len(_messages(gateway_home, "1a2b3c4d-5555-4e6f-9a0b-112233445566")) == 5
    path.write_text(original)
    import_all(gateway_home, agents=("gemini",))
    texts = [m.text for m in _messages(gateway_home, "1a2b3c4d-5555-4e6f-9a0b-112233445566")]
    assert not any("pomegranate" in text for text in texts)
    _check_index(gateway_home)


def test_opencode_sessions_messages_and_parts_are_read_from_its_database(tmp_path: Path):
    path = make_opencode_db(tmp_path / "opencode.db")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    parsed = opencode.read(path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    apricot, child = parsed.sessions
    assert (apricot.id, apricot.title, apricot.cwd) == (
        "ses_01JOrchardApricot",
        "Apricot drying schedule",
        "/home/ada/src/orchard",
    )
    assert [b["type"] for b in apricot.messages[1].blocks] == ["thinking", "tool_use", "tool_result", "text"]
    assert apricot.created_at == "2026-03-08T09:00:00Z"
    assert (child.parent_id, child.title) == ("ses_01JOrchardApricot", "Find the drying table.")
    assert parsed.broken_lines == 1


def test_opencode_import_is_skipped_while_its_database_is_unchanged(gateway_home: Path):
    place_fixtures(gateway_home)
    first = import_all(gateway_home, agents=("opencode",))[0]
    assert (first.files_read, first.sessions, first.messages, first.broken_lines) == (1, 2, 3, 1)
    assert import_all(gateway_home, agents=("opencode",))[0].files_unchanged == 1
