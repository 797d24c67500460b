"""The importers of Cursor, Cline and its forks, and Aider: each against a fixture in its own format (a broken record
and a record cut short included), read again incrementally, and an agent whose files are absent costing nothing."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from gateway_sessions import store
from gateway_sessions.importers import aider, amp, cline, continue_, copilot, cursor, goose, qwen
from gateway_sessions.importing import import_agent
from gateway_sessions.refresh import look

from tests.forkserver import gateway_command
from tests.plugins.sessions.more_agents import (
    AIDER_FILE,
    AMP_THREAD,
    CLINE_TASK,
    CONTINUE_CUT,
    CONTINUE_SESSION,
    COPILOT_SESSION,
    CURSOR_CHAT,
    CURSOR_VAULT,
    GOOSE_SESSION,
    QWEN_SESSION,
    ROO_TASK,
    place_aider,
    place_amp,
    place_cline,
    place_continue,
    place_copilot,
    place_cursor,
    place_goose,
    place_qwen,
)
from tests.plugins.sessions.sessions_helpers import store_path


def _import(home: Path, agent: str, root: Path | None = None):
    connection = store.open_for_writing(store_path(home))
    try:
        return import_agent(connection, agent, root)
    finally:
        connection.close()


def _calls(home: Path, session_id: str) -> list[tuple[int, str, str]]:
    connection = sqlite3.connect(store_path(home))
    try:
        return connection.execute(
            "SELECT c.seq, c.tool, p.path || ' ' || p.action FROM tool_calls AS c JOIN sessions AS s ON s.rowid = c.session "
            "JOIN tool_call_paths AS p ON p.call = c.rowid AND p.literal = 1 WHERE s.id = ? ORDER BY c.seq, p.path",
            (session_id,),
        ).fetchall()
    finally:
        connection.close()


def _session(home: Path, session_id: str) -> dict:
    connection = sqlite3.connect(store_path(home))
    connection.row_factory = sqlite3.Row
    try:
        row = connection.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return dict(row) if row else {}
    finally:
        connection.close()


def test_cursor_chats_come_with_their_tool_calls_and_workspace(gateway_home):
    place_cursor(gateway_home)
    report = _import(gateway_home, "cursor")
    # The composer header that is not JSON and the bubble cut short are counted, the rest imported.
    assert (report.sessions, report.broken_lines) == (2, 2)
    chat = _session(gateway_home, CURSOR_CHAT)
    assert chat["agent"] == "cursor" and chat["title"] == "Cherry yield chart"
    assert chat["cwd"] == "/home/ada/src/orchard"  # from the bubbles' workspace
    assert (chat["created_at"], chat["updated_at"]) == ("2026-03-02T10:00:00Z", "2026-03-02T10:10:00Z")
    assert _calls(gateway_home, CURSOR_CHAT) == [
        (1, "read_file", "/home/ada/src/orchard/data/yield.csv read"),
        (2, "edit_file", "/home/ada/src/orchard/charts/yield.py edit"),
    ]
    vault = _session(gateway_home, CURSOR_VAULT)
    assert vault["cwd"] == "/home/ada/src/vault"  # from the workspace database that lists the chat
    assert _calls(gateway_home, CURSOR_VAULT) == [(1, "run_terminal_cmd", "/home/ada/src/vault/keys/current.pem ran")]


def test_cursor_reads_only_a_changed_database_and_keeps_what_it_had(gateway_home):
    database = place_cursor(gateway_home)
    _import(gateway_home, "cursor")
    again = _import(gateway_home, "cursor")
    assert (again.files_read, again.files_unchanged) == (0, 1)
    connection = sqlite3.connect(database)
    bubble = {"_v": 3, "type": 1, "bubbleId": "b6", "text": "Now label the axes", "createdAt": "2026-03-02T10:05:00.000Z"}
    connection.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"bubbleId:{CURSOR_CHAT}:b6", json.dumps(bubble)))
    header = json.loads(connection.execute(
        "SELECT value FROM cursorDiskKV WHERE key = ?", (f"composerData:{CURSOR_CHAT}",)).fetchone()[0])
    header["fullConversationHeadersOnly"].append({"bubbleId": "b6", "type": 1})
    connection.execute("UPDATE cursorDiskKV SET value = ? WHERE key = ?", (json.dumps(header), f"composerData:{CURSOR_CHAT}"))
    connection.commit()
    connection.close()
    third = _import(gateway_home, "cursor")
    assert third.files_read == 1
    assert _session(gateway_home, CURSOR_CHAT)["message_count"] == 5
    assert len(_calls(gateway_home, CURSOR_CHAT)) == 2  # the calls were not indexed twice


def test_cline_tasks_give_xml_and_native_tool_calls_and_survive_a_broken_and_a_cut_element(gateway_home):
    place_cline(gateway_home)
    report = _import(gateway_home, "cline")
    assert report.sessions == 2
    assert report.broken_lines == 2  # the element broken in the middle and the one cut short at the end
    task = _session(gateway_home, CLINE_TASK)
    assert task["agent"] == "cline" and task["cwd"] == "/home/ada/src/orchard"
    assert task["title"] == "Why does the graft scheduler skip Sundays?"  # the <task> unwrapped
    assert (task["created_at"], task["updated_at"]) == ("2026-03-03T11:00:00Z", "2026-03-03T11:05:00Z")
    assert _calls(gateway_home, CLINE_TASK) == [
        (1, "read_file", "/home/ada/src/orchard/src/graft.py read"),
        (3, "replace_in_file", "/home/ada/src/orchard/src/graft.py edit"),
        (5, "execute_command", "/home/ada/src/orchard/tests/test_graft.py ran"),
    ]
    connection = sqlite3.connect(store_path(gateway_home))
    texts = [row[0] for row in connection.execute(
        "SELECT m.text FROM messages AS m JOIN sessions AS s ON s.rowid = m.session WHERE s.id = ? ORDER BY m.seq",
        (CLINE_TASK,))]
    connection.close()
    assert not any("environment_details" in text or "medlarquirk" in text for text in texts)  # injected, results
    assert texts[-1] == "Done: Sundays are scheduled again."  # the element after the broken one is kept
    roo = _session(gateway_home, ROO_TASK)
    assert roo["agent"] == "roo-code" and roo["cwd"] == "/home/ada/src/vault"
    assert roo["created_at"] == "2026-03-04T11:00:00Z"


def test_cline_task_read_again_when_it_grows_only_adds_the_new_messages(gateway_home):
    root = place_cline(gateway_home)
    _import(gateway_home, "cline")
    history = next(root.rglob(f"{CLINE_TASK}/{cline.HISTORY}"))
    messages = cline.json_array(history, cline.Parsed())
    # Written whole again, as Cline does: the broken element as it was meant, the cut one finished, one more.
    messages[messages.index(None)] = {"role": "assistant", "content": [{"type": "text", "text": "half a thought"}]}
    messages[-1] = {"role": "assistant", "content": [{"type": "text", "text": "All tests pass."}]}
    messages.append({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_02", "name": "write_to_file",
         "input": {"path": "docs/sundays.md", "content": "Sundays are fine."}}]})
    history.write_text(json.dumps(messages))
    again = _import(gateway_home, "cline")
    assert (again.files_read, again.files_unchanged, again.broken_lines) == (1, 1, 0)
    assert _calls(gateway_home, CLINE_TASK)[-1] == (10, "write_to_file", "/home/ada/src/orchard/docs/sundays.md write")
    assert len(_calls(gateway_home, CLINE_TASK)) == 4


def test_aider_histories_become_one_session_a_run_with_their_edits(gateway_home):
    repositories = place_aider(gateway_home)
    report = _import(gateway_home, "aider", repositories)
    assert report.sessions == 2 and report.broken_lines == 1  # the header whose time cannot be read
    folder = str(repositories / "orchard")
    connection = sqlite3.connect(store_path(gateway_home))
    sessions = connection.execute("SELECT id, cwd, title, message_count FROM sessions ORDER BY created_at").fetchall()
    connection.close()
    first, second = sessions
    assert first[0].startswith("aider-") and first[0].endswith("-20260302T083000")  # TZ is UTC in tests
    assert first[1] == folder and first[2] == "/add src/prune.py"
    assert _calls(gateway_home, first[0]) == [
        (2, "add", f"{folder}/src/prune.py read"),  # [0] is aider's banner, [1] the /add typed
        (5, "edit", f"{folder}/src/prune.py edit"),
        (6, "run_command", f"{folder} ran"),
        (6, "run_command", f"{folder}/tests/test_prune.py ran"),
    ]
    assert second[2] == "What does the orchard README say about quince grafts?" and second[3] == 2


def test_aider_history_grown_by_a_new_run_keeps_the_old_ones_as_they_were(gateway_home):
    repositories = place_aider(gateway_home)
    _import(gateway_home, "aider", repositories)
    history = repositories / "orchard" / AIDER_FILE
    with history.open("a") as file:
        file.write("nter.\n\n\n# aider chat started at 2026-03-05 09:00:00\n\n\n#### /add README.md  \n"
                   "> Added README.md to the chat  \n")
    again = _import(gateway_home, "aider", repositories)
    assert again.sessions == 3 and again.files_read == 1
    connection = sqlite3.connect(store_path(gateway_home))
    last_reply = connection.execute(
        "SELECT m.text FROM messages AS m JOIN sessions AS s ON s.rowid = m.session "
        "WHERE m.role = 'assistant' ORDER BY s.created_at DESC, m.seq DESC LIMIT 1 OFFSET 0").fetchone()[0]
    calls = connection.execute("SELECT count(*) FROM tool_calls").fetchone()[0]
    connection.close()
    assert last_reply == "It says quince grafts are done in late winter."  # the half-written line, now whole
    assert calls == 4  # add, edit, run in the first run; add in the new one: none indexed twice


def test_agents_whose_files_are_absent_cost_nothing(gateway_home):
    importers = (("cursor", cursor), ("cline", cline), ("aider", aider), ("copilot", copilot), ("goose", goose),
                 ("continue", continue_), ("qwen", qwen), ("amp", amp))
    for agent, importer in importers:
        report = _import(gateway_home, agent)
        assert report.found_nothing and report.files_read == 0
        watched = look(agent, importer.default_root())
        assert watched.files == {}
        assert watched.changed() == []  # one stat of a missing place (or of an empty folder's time), nothing read
    assert not (gateway_home / ".config" / "Cursor").exists()


def test_copilot_cli_events_give_the_session_its_calls_and_results(gateway_home):
    place_copilot(gateway_home)
    report = _import(gateway_home, "copilot")
    assert (report.sessions, report.broken_lines) == (1, 2)  # the broken event and the one cut short
    session = _session(gateway_home, COPILOT_SESSION)
    assert session["agent"] == "copilot" and session["cwd"] == "/home/ada/src/orchard"
    assert session["title"] == "Why is the apricot test flaky?"
    assert _calls(gateway_home, COPILOT_SESSION) == [
        (1, "view", "/home/ada/src/orchard/tests/test_apricot.py read"),
        (3, "bash", "/home/ada/src/orchard/tests/test_apricot.py ran"),
    ]
    connection = sqlite3.connect(store_path(gateway_home))
    results = dict(connection.execute("SELECT call_id, result FROM tool_results"))
    connection.close()
    assert results == {"tc1": "def test_apricot(): assert ripe()", "tc2": "1 failed"}


def test_qwen_code_records_give_calls_and_skip_a_broken_line(gateway_home):
    place_qwen(gateway_home)
    report = _import(gateway_home, "qwen")
    assert (report.sessions, report.messages, report.broken_lines) == (1, 4, 2)
    session = _session(gateway_home, QWEN_SESSION)
    assert session["cwd"] == "/home/ada/src/orchard" and session["title"] == "Count the plum rows in data/plums.csv"
    assert _calls(gateway_home, QWEN_SESSION) == [(1, "read_file", "/home/ada/src/orchard/data/plums.csv read")]
    grown = next((gateway_home / ".qwen").rglob(f"{QWEN_SESSION}.jsonl"))
    with grown.open("a") as file:
        file.write('ars?"}]}}\n')  # the cut line finished
    again = _import(gateway_home, "qwen")
    assert (again.files_read, again.broken_lines) == (1, 1)
    assert _session(gateway_home, QWEN_SESSION)["message_count"] == 5


def test_continue_sessions_read_whole_and_cut_short(gateway_home):
    place_continue(gateway_home)
    report = _import(gateway_home, "continue")
    assert report.sessions == 2 and report.broken_lines == 2  # the item that is not one, the file cut short
    session = _session(gateway_home, CONTINUE_SESSION)
    assert session["title"] == "Graft calendar export" and session["cwd"] == "/home/ada/src/orchard"
    assert session["created_at"] == "2026-03-08T09:00:00Z"  # from sessions.json
    assert _calls(gateway_home, CONTINUE_SESSION) == [
        (1, "read_file", "/home/ada/src/orchard/src/calendar.py read"),
        (3, "create_new_file", "/home/ada/src/orchard/src/ics.py write"),
    ]
    cut = _session(gateway_home, CONTINUE_CUT)
    assert cut["cwd"] == "/home/ada/src/vault" and cut["message_count"] == 1
    assert cut["title"] == "List the sealed keys"  # "New Session" is Continue's placeholder, not a title


def test_amp_threads_give_calls_and_results(gateway_home):
    place_amp(gateway_home)
    report = _import(gateway_home, "amp")
    assert (report.sessions, report.broken_lines) == (1, 1)  # the message of no known role
    session = _session(gateway_home, AMP_THREAD)
    assert session["title"] == "Peach harvest report" and session["cwd"] == "/home/ada/src/orchard"
    assert _calls(gateway_home, AMP_THREAD) == [
        (1, "create_file", "/home/ada/src/orchard/reports/peach.md write"),
        (3, "Bash", "/home/ada/src/orchard ran"),
        (3, "Bash", "/home/ada/src/orchard/reports/peach.md ran"),
    ]
    thread = gateway_home / ".local" / "share" / "amp" / "threads" / f"{AMP_THREAD}.json"
    text = thread.read_text()
    thread.write_text(text[: text.index('"messageId": 3')])  # rewritten, cut short by a crash
    again = _import(gateway_home, "amp")
    assert again.files_read == 1 and again.broken_lines == 1
    assert _session(gateway_home, AMP_THREAD)["message_count"] == 4  # nothing lost from the store


def test_goose_database_gives_sessions_with_editor_commands_as_verbs(gateway_home):
    place_goose(gateway_home)
    report = _import(gateway_home, "goose")
    assert (report.sessions, report.broken_lines) == (1, 1)  # the message whose content was cut
    session = _session(gateway_home, GOOSE_SESSION)
    assert session["title"] == "Cider press wiring" and session["cwd"] == "/home/ada/src/orchard"
    assert _calls(gateway_home, GOOSE_SESSION) == [
        (1, "developer__text_editor", "/home/ada/src/orchard/press/driver.py read"),
        (3, "developer__text_editor", "/home/ada/src/orchard/press/driver.py edit"),
    ]
    assert _import(gateway_home, "goose").files_unchanged == 1


def test_doctor_says_where_each_new_agent_found_its_files_and_that_it_is_read_by_the_next_call(gateway_home):
    import os
    import subprocess

    from gateway.api.context import home_environment
    from gateway.testing import write_config

    write_config(gateway_home, {"gateway": {"plugins": ["sessions"]},
                                "plugins": {"sessions": {"aider": str(gateway_home / "src")}}})
    place_cursor(gateway_home)
    place_cline(gateway_home)
    place_aider(gateway_home)
    for place in (place_copilot, place_qwen, place_continue, place_amp):
        place(gateway_home)
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(gateway_home)}
    said = subprocess.run(gateway_command("doctor"), env=env, capture_output=True, text=True,
                          timeout=120).stdout
    home = gateway_home
    for name, count, place in (
        ("Cursor", 1, home / ".config" / "Cursor" / "User" / "globalStorage" / "state.vscdb"),
        ("Cline, Roo Code and Kilo Code", 2, home / ".config"),
        ("Aider", 1, home / "src"),
        ("GitHub Copilot CLI", 1, home / ".copilot" / "session-state"),
        ("Continue", 2, home / ".continue" / "sessions"),
        ("Qwen Code", 1, home / ".qwen"),
        ("Amp", 1, home / ".local" / "share" / "amp" / "threads"),
    ):
        assert f"stale    sessions: {name} transcripts ({count}) at {place}: {count} of {count} transcripts" in said
    assert f"-        sessions: no Goose transcripts at {home / '.local/share/goose/sessions/sessions.db'}" in said
