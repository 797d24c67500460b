"""Where a session belongs: every working directory it records and every path its tool calls name, kept per session."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import gateway_sessions
from click.testing import CliRunner
from gateway_sessions import store
from gateway_sessions.cli import commands
from gateway_sessions.importers import codex, gemini
from gateway_sessions.model import Message, Session, paths_of, title_of, tool_paths

from gateway import Folders, PluginHost
from gateway.privacy import MASKS_VERSION
from gateway.testing import make_gateway
from tests.plugins.sessions.sessions_helpers import (
    CLOSED_VAULT,
    NOTES,
    PEARS,
    PLUMS,
    SUBAGENT,
    import_all,
    store_path,
)

# These stores are imported by hand from some agents only: no call-time refresh adds the others.
HAND_IMPORTED = {"plugins": {"sessions": {"refresh": False}}}


def _use(name: str, **arguments) -> dict:
    return {"type": "tool_use", "id": "t", "name": name, "input": arguments}


def test_tool_calls_name_their_files_in_each_agents_spelling():
    blocks = [
        _use("Edit", file_path="/home/ada/src/vault/a.md", old_string="x", new_string="y"),
        _use("NotebookEdit", notebook_path="/home/ada/src/vault/b.ipynb"),
        _use("Grep", pattern="TODO", path="src"),
        _use("read_many_files", paths=["/srv/c.txt", "d.txt"]),
        _use("write", filePath="/home/ada/e.txt"),
        _use("shell", command=["ls"], workdir="/home/ada/src/cellar"),
        _use(
            "apply_patch",
            input="*** Begin Patch\n*** Update File: f.py\n@@\n*** Add File: /tmp/g.py\n*** End Patch",
        ),
        _use("WebFetch", url="https://example.org/path"),
        {"type": "text", "text": "file_path=/not/a/tool/call"},
    ]
    assert tool_paths(blocks, "/home/ada/src/orchard") == {
        "/home/ada/src/vault/a.md",
        "/home/ada/src/vault/b.ipynb",
        "/home/ada/src/orchard/src",
        "/srv/c.txt",
        "/home/ada/src/orchard/d.txt",
        "/home/ada/e.txt",
        "/home/ada/src/cellar",
        "/home/ada/src/orchard/f.py",
        "/tmp/g.py",
    }
    # Without a working directory, a relative path says nothing: it is not kept.
    assert tool_paths([_use("Read", file_path="notes.md")]) == set()


def test_a_sessions_places_are_its_working_directories_and_its_tool_calls_paths():
    session = Session(
        agent="claude-code",
        id="s",
        cwd="/home/ada/src/orchard",
        cwds={"/home/ada/src/orchard", "/home/ada/src/vault"},
        messages=[Message("m", "assistant", [_use("Read", file_path="../cellar/x")])],
    )
    assert paths_of(session) == {"/home/ada/src/orchard", "/home/ada/src/vault", "/home/ada/src/cellar/x"}


def test_codex_and_gemini_record_every_working_directory(tmp_path: Path):
    rollout = tmp_path / "rollout-2026-03-02T10-00-00-0199a1b2-3c4d-7e5f-8a9b-0c1d2e3f4a5c.jsonl"
    rollout.write_text(
        "\n".join(
            json.dumps(line)
            for line in (
                {
                    "timestamp": "2026-03-02T10:00:00Z",
                    "type": "session_meta",
                    "payload": {"id": "c1", "cwd": "/a"},
                },
                {"timestamp": "2026-03-02T10:01:00Z", "type": "turn_context", "payload": {"cwd": "/b"}},
            )
        )
    )
    (session,) = codex.read(rollout).sessions
    assert (session.cwd, session.cwds) == ("/a", {"/b"})
    chat = tmp_path / "tmp" / "p" / "chats" / "session-1.json"
    chat.parent.mkdir(parents=True)
    chat.write_text(json.dumps({"sessionId": "g1", "directories": ["/c", "/d"], "messages": []}))
    (session,) = gemini.read(chat).sessions
    assert session.cwds == {"/c", "/d"}


def test_the_store_keeps_each_sessions_places(imported_home: Path):
    connection = sqlite3.connect(store_path(imported_home))
    places = {}
    for session_id, path in connection.execute(
        "SELECT s.id, p.path FROM session_paths AS p JOIN sessions AS s ON s.rowid = p.session"
    ):
        places.setdefault(session_id, set()).add(path)
    connection.close()
    assert "/home/ada/src/orchard" in places[PEARS]
    assert places[SUBAGENT] == {"/home/ada/src/orchard"}
    assert PLUMS in places


def test_titles_are_masked_whole_then_cut():
    card = "4539 1488 0343 6467"
    words = Session(
        agent="codex",
        id="t",
        messages=[Message("m", "user", [{"type": "text", "text": f"{'word ' * 14}card {card}"}])],
    )
    assert "4539" not in title_of(words) and "1488" not in title_of(words)
    given = Session(agent="codex", id="u", given_title=f"Pay card {card}")
    assert title_of(given) == "Pay card [card …6467]"


def _import():
    host = PluginHost(name="sessions", folders=Folders.from_environment().for_plugin("sessions"), settings={})
    (group,) = commands(host)
    return CliRunner().invoke(group, ["import"])


def test_an_import_masks_a_store_of_other_masks_again_once(imported_home: Path):
    connection = sqlite3.connect(store_path(imported_home), isolation_level=None)
    connection.execute("UPDATE meta SET value = ? WHERE key = 'masks_version'", (str(MASKS_VERSION + 1),))
    connection.execute("DELETE FROM session_paths")
    connection.close()
    result = _import()
    assert result.exit_code == 0, result.output
    assert "masking the sessions store again with this version's masks" in result.output
    assert "masked and indexed in" in result.output
    assert "masking" not in _import().output
    reader = store.reader(store_path(imported_home))
    assert reader.masks_current() and "/home/ada/src/orchard" in reader.paths()
    connection = store.open_for_writing(store_path(imported_home))
    connection.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
    connection.close()


def test_a_store_made_before_masking_is_masked_by_the_first_call(imported_home: Path):
    """A store of the previous version: no meta table, raw text, first words cut raw, no places."""
    path = store_path(imported_home)
    connection = sqlite3.connect(path, isolation_level=None)
    for rowid, blocks in connection.execute("SELECT rowid, blocks FROM messages").fetchall():
        text = "\n\n".join(b["text"] for b in json.loads(blocks) if b.get("type") == "text").strip()
        connection.execute("UPDATE messages SET text = ? WHERE rowid = ?", (text, rowid))
    for trigger in ("sessions_removed", "sessions_reparented", "session_paths_logged", "session_paths_removed"):
        connection.execute(f"DROP TRIGGER {trigger}")  # none of the gate's log either
    connection.execute("DROP TABLE place_log")
    connection.execute("DROP TABLE meta")
    connection.execute("DROP TABLE session_paths")
    connection.execute("ALTER TABLE sessions DROP COLUMN given_title")
    connection.close()
    gateway = make_gateway(plugins=[gateway_sessions], projects=CLOSED_VAULT, home=imported_home, config=HAND_IMPORTED)
    read = gateway.call("rousseau_read_session", {"id": NOTES})
    assert not read.is_error and "4111 1111 1111 1111" not in read.text
    assert read.data["title"] == "Orchard release notes"  # the agent's own title, told from first words
    connection = sqlite3.connect(path)
    assert connection.execute("SELECT value FROM meta").fetchone()[0] == str(MASKS_VERSION)
    assert connection.execute("SELECT given_title FROM sessions WHERE id = ?", (NOTES,)).fetchone()[0]
    assert (
        connection.execute("SELECT given_title FROM sessions WHERE id = ?", (SUBAGENT,)).fetchone()[0] == ""
    )
    connection.close()
    import_all(imported_home)  # and the next import finds nothing to do


def test_a_store_of_other_masks_that_cannot_be_masked_again_gives_nothing(imported_home: Path, monkeypatch):
    connection = sqlite3.connect(store_path(imported_home), isolation_level=None)
    connection.execute("UPDATE meta SET value = ? WHERE key = 'masks_version'", (str(MASKS_VERSION - 1),))
    connection.close()

    def read_only(*_args, **_kwargs):
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(store, "open_for_writing", read_only)
    gateway = make_gateway(plugins=[gateway_sessions], home=imported_home, config=HAND_IMPORTED)
    for tool, arguments in (
        ("rousseau_search_sessions", {"query": "crate"}),
        ("rousseau_list_sessions", {}),
        ("rousseau_read_session", {"id": PEARS}),
    ):
        answer = gateway.call(tool, arguments)
        assert answer.is_error and "`gateway sessions import`" in answer.text, answer.text
        assert "crate" not in answer.text
