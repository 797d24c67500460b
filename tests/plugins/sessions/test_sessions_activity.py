"""sessions_touching, search_tool_calls, agent_week and the resume commands, called through the gateway as a host
would, on stores made from sessions whose tool calls name files by links, relative paths and shell commands."""

from __future__ import annotations

import shlex
import sqlite3
from pathlib import Path

import gateway_sessions
import pytest
from gateway_sessions import store
from gateway_sessions.model import Message, Session
from gateway_sessions.resume import resume_command
from gateway_sessions.store import calls

from gateway.testing import make_gateway
from tests.plugins.sessions.sessions_helpers import store_path

HAND_IMPORTED = {"plugins": {"sessions": {"refresh": False}}}
CARD = "4539 1488 0343 6467"


def _use(key: str, name: str, arguments: dict, when: str) -> Message:
    return Message(key=key, role="assistant", blocks=[{"type": "tool_use", "id": f"call-{key}", "name": name,
                                                       "input": arguments}], timestamp=when)


def _result(key: str, call: str, text: str, when: str) -> Message:
    return Message(key=key, role="user", blocks=[{"type": "tool_result", "tool_use_id": call, "content": text}],
                   timestamp=when)


def _ask(key: str, text: str, when: str) -> Message:
    return Message(key=key, role="user", blocks=[{"type": "text", "text": text}], timestamp=when)


def _save(home: Path, *sessions: Session) -> None:
    connection = store.open_for_writing(store_path(home))
    try:
        for session in sessions:
            store.upsert(connection, session)
    finally:
        connection.close()


@pytest.fixture
def worktree(gateway_home: Path) -> dict[str, Path]:
    """Real folders: an orchard project reached through a link, and a closed vault."""
    real = gateway_home / "src" / "orchard"
    (real / "src").mkdir(parents=True)
    (real / "src" / "app.py").write_text("print('pears')\n")
    link = gateway_home / "work"
    link.symlink_to(gateway_home / "src")
    vault = gateway_home / "src" / "vault"
    vault.mkdir()
    return {"real": real, "link": link / "orchard", "vault": vault, "home": gateway_home}


def _sessions(places: dict[str, Path]) -> list[Session]:
    real, link, vault = str(places["real"]), str(places["link"]), str(places["vault"])
    through_link = Session(
        agent="claude-code", id="pear linked", cwd=link, created_at="2026-03-02T09:00:00Z",
        updated_at="2026-03-02T09:05:00Z",
        messages=[
            _ask("u1", f"Fix the pear printer; the card on file is {CARD}", "2026-03-02T09:00:00Z"),
            _use("a1", "Read", {"file_path": "src/app.py"}, "2026-03-02T09:01:00Z"),  # relative, through the link
            _result("u2", "call-a1", f"print('pears')  # paid with {CARD}", "2026-03-02T09:01:05Z"),
            _use("a2", "Edit", {"file_path": f"{link}/src/app.py", "old_string": "pears", "new_string": "quinces"},
                 "2026-03-02T09:02:00Z"),
            _use("a3", "Bash", {"command": "python src/app.py && git diff README.md"}, "2026-03-02T09:03:00Z"),
        ],
    )
    plain = Session(
        agent="codex", id="0199-plain", cwd=real, created_at="2026-03-03T10:00:00Z", updated_at="2026-03-03T10:02:00Z",
        messages=[
            _ask("1", "Write the changelog", "2026-03-03T10:00:00Z"),
            _use("2", "apply_patch", {"input": "*** Begin Patch\n*** Add File: CHANGELOG.md\n+quinces\n*** End Patch"},
                 "2026-03-03T10:01:00Z"),
        ],
    )
    closed = Session(
        agent="claude-code", id="vault-session", cwd=real, created_at="2026-03-04T10:00:00Z",
        updated_at="2026-03-04T10:01:00Z",
        messages=[
            _ask("u1", "Compare app.py with the vault copy (rowancanary)", "2026-03-04T10:00:00Z"),
            _use("a1", "Read", {"file_path": f"{real}/src/app.py"}, "2026-03-04T10:00:10Z"),
            _use("a2", "Bash", {"command": f"diff src/app.py {vault}/app.py"}, "2026-03-04T10:00:20Z"),
        ],
    )
    return [through_link, plain, closed]


@pytest.fixture
def in_utc(computer_zone_is) -> None:  # noqa: ANN001
    """The days below are UTC days: on a contributor's computer in another zone too (a session at 09:00 UTC is
    still the day before in Hawaii)."""
    computer_zone_is("UTC")


@pytest.fixture
def activity_gateway(worktree, in_utc):
    _save(worktree["home"], *_sessions(worktree))
    projects = [
        {"id": "orchard", "name": "Orchard", "ai": True, "paths": [str(worktree["real"])]},
        {"id": "vault", "name": "Vault", "ai": False, "paths": [str(worktree["vault"])]},
    ]
    return make_gateway(plugins=[gateway_sessions], projects=projects, home=worktree["home"], config=HAND_IMPORTED)


def test_the_new_tools_follow_rousseaus_three_in_order(activity_gateway):
    assert activity_gateway.list_tools() == [
        "rousseau_search_sessions", "rousseau_list_sessions", "rousseau_read_session",
        "sessions_touching", "search_tool_calls", "agent_week",
    ]


def test_sessions_touching_a_file_finds_a_relative_path_and_a_linked_one_by_the_real_path(activity_gateway, worktree):
    answer = activity_gateway.call("sessions_touching", {"path": str(worktree["real"] / "src" / "app.py")})
    assert not answer.is_error, answer.text
    found = answer.data["sessions"]
    assert [entry["id"] for entry in found] == ["pear linked"]  # the vault session is kept back
    entry = found[0]
    assert entry["actions"] == {"read": 1, "edit": 1, "ran": 1}
    assert entry["messages"] == [1, 3, 4]
    assert entry["address"] == "rousseau://sessions/pear linked"
    assert entry["resume"] == f"cd {shlex.quote(str(worktree['link']))} && claude --resume 'pear linked'"
    assert answer.data["left_out"] == 1
    assert "did: edited ×1, read ×1, ran a command naming it ×1 (messages 1, 3, 4)" in answer.text


def test_sessions_touching_a_folder_takes_everything_under_it_newest_first(activity_gateway, worktree):
    answer = activity_gateway.call("sessions_touching", {"path": str(worktree["link"])})
    assert [entry["id"] for entry in answer.data["sessions"]] == ["0199-plain", "pear linked"]
    assert answer.data["sessions"][0]["actions"] == {"write": 1}
    since = activity_gateway.call("sessions_touching", {"path": str(worktree["real"]), "since": "2026-03-03"})
    assert [entry["id"] for entry in since.data["sessions"]] == ["0199-plain"]
    sibling = activity_gateway.call("sessions_touching", {"path": str(worktree["real"]) + "x"})
    assert sibling.data["sessions"] == [] and sibling.text.startswith("(no sessions)")


def test_sessions_touching_refuses_a_relative_path_with_a_sentence(activity_gateway):
    answer = activity_gateway.call("sessions_touching", {"path": "src/app.py"})
    assert answer.is_error and "absolute" in answer.text


def test_search_tool_calls_by_tool_words_and_path_with_results_masked(activity_gateway, worktree):
    by_tool = activity_gateway.call("search_tool_calls", {"tool": "bash"})
    assert [(c["session"], c["message"]) for c in by_tool.data["calls"]] == [("pear linked", 4)]
    by_words = activity_gateway.call("search_tool_calls", {"query": "git READ*"})
    assert [c["tool"] for c in by_words.data["calls"]] == ["Bash"]
    read = activity_gateway.call("search_tool_calls", {"path": str(worktree["real"] / "src"), "tool": "Read"})
    (call,) = read.data["calls"]
    assert call["paths"] == {str(worktree["link"] / "src" / "app.py"): "read"}
    assert "…6467" in call["result"] and CARD not in read.text and "4539" not in str(read.data)
    assert "<<<data " in read.text  # arguments and results are framed


def test_a_masked_number_is_found_by_no_tool_call_search(activity_gateway):
    for query in ("4539", "4539148803436467", "0343", "1488*"):
        answer = activity_gateway.call("search_tool_calls", {"query": query})
        assert answer.data["calls"] == [], query
    assert activity_gateway.call("search_tool_calls", {}).is_error


def test_listing_and_reading_carry_the_resume_command_without_changing_the_seeds_lines(activity_gateway, worktree):
    listed = activity_gateway.call("rousseau_list_sessions", {})
    by_id = {s["id"]: s for s in listed.data["sessions"]}
    assert by_id["0199-plain"]["resume"] == f"cd {shlex.quote(str(worktree['real']))} && codex resume 0199-plain"
    assert "resume" not in listed.text
    read = activity_gateway.call("rousseau_read_session", {"id": "pear linked"})
    assert read.data["resume"].endswith("claude --resume 'pear linked'")
    assert read.text.splitlines()[0] == "id: pear linked" and "resume" not in read.text


@pytest.mark.parametrize(
    ("agent", "session_id", "cwd", "words"),
    [
        ("claude-code", "it's a \"quoted\" id; rm -rf ~", "/home/ada/my src/o'brien", ["claude", "--resume"]),
        ("codex", "id with spaces", "/tmp/a b", ["codex", "resume"]),
        ("gemini", "g-1", "", ["gemini", "--resume"]),
        ("opencode", "ses_1", "/x", ["opencode", "--session"]),
    ],
)
def test_resume_commands_are_one_word_per_id_and_folder_whatever_they_hold(agent, session_id, cwd, words):
    command = resume_command(agent, session_id, cwd)
    split = shlex.split(command)
    if cwd:
        assert split[:3] == ["cd", cwd, "&&"]
        split = split[3:]
    assert split == [*words, session_id]


def test_a_subagent_resumes_its_parent_and_an_editor_chat_has_no_command():
    assert resume_command("claude-code", "abc:agent-1", "/w", "abc") == "cd /w && claude --resume abc"
    assert resume_command("cursor", "3c1e", "/w") == ""
    assert resume_command("aider", "aider-1", "/w") == "cd /w && aider --restore-chat-history"


def test_agent_week_gives_each_day_by_project_with_files_and_masked_first_prompts(activity_gateway, worktree):
    answer = activity_gateway.call("agent_week", {"start": "2026-03-01", "days": 7})
    assert not answer.is_error, answer.text
    days = {day["date"]: day["projects"] for day in answer.data["days"]}
    assert len(days) == 7 and days["2026-03-01"] == [] and days["2026-03-04"] == []  # the vault's day: kept back
    (orchard,) = days["2026-03-02"]
    assert orchard["name"] == "Orchard" and orchard["agents"] == ["claude-code"]
    assert orchard["files"][0] == {"path": str(worktree["link"] / "src" / "app.py"), "calls": 3}  # read, edit, ran
    prompt = orchard["sessions"][0]["first_prompt"]
    assert prompt.startswith("Fix the pear printer") and "…6467" in prompt and "4539" not in answer.text
    assert answer.data["left_out"] == 1 and "rowancanary" not in answer.text
    assert "<<<data " in answer.text


def test_the_week_resource_reads_as_the_tool_does(activity_gateway):
    import re

    assert "rousseau://week" in [resource.uri for resource in activity_gateway.catalogue().resources]
    unframed = lambda text: re.sub(r"(data|end of data) [0-9a-f]{16}", r"\1 MARK", text)  # noqa: E731
    read = activity_gateway.read("rousseau://week")
    assert not read.is_error and read.text.startswith("agent sessions ")
    assert unframed(read.text) == unframed(activity_gateway.call("agent_week", {}).text)


def test_tool_calls_are_indexed_once_however_often_a_session_is_written(gateway_home, worktree):
    sessions = _sessions(worktree)
    _save(gateway_home, *sessions)
    grown = sessions[0]
    grown.messages.append(_use("a4", "Write", {"file_path": "notes.md", "content": "x"}, "2026-03-02T09:04:00Z"))
    _save(gateway_home, grown)
    grown.messages[3] = _use("a2", "Edit", {"file_path": "src/other.py"}, "2026-03-02T09:02:00Z")  # changed
    _save(gateway_home, grown)
    connection = sqlite3.connect(store_path(gateway_home))
    rows = connection.execute(
        "SELECT c.seq, c.tool, p.path FROM tool_calls AS c JOIN sessions AS s ON s.rowid = c.session "
        "JOIN tool_call_paths AS p ON p.call = c.rowid AND p.literal = 1 WHERE s.id = 'pear linked' ORDER BY c.seq"
    ).fetchall()
    connection.close()
    link = worktree["link"]
    assert [(seq, tool) for seq, tool, _ in rows] == [(1, "Read"), (3, "Edit"), (4, "Bash"), (4, "Bash"), (5, "Write")]
    assert rows[1][2] == f"{link}/src/other.py" and rows[-1][2] == f"{link}/notes.md"


def test_a_store_made_before_the_index_of_tool_calls_gets_it_at_the_next_open(gateway_home, worktree):
    _save(gateway_home, *_sessions(worktree))
    connection = sqlite3.connect(store_path(gateway_home))
    connection.execute("DELETE FROM meta WHERE key = 'tool_calls'")
    connection.execute("DROP TABLE tool_call_words")
    connection.execute("DELETE FROM tool_calls")
    connection.commit()
    connection.close()
    said: list[str] = []
    store.open_for_writing(store_path(gateway_home), say=said.append).close()
    connection = sqlite3.connect(store_path(gateway_home))
    assert calls.is_built(connection)
    assert connection.execute("SELECT count(*) FROM tool_calls").fetchone()[0] == 6
    assert connection.execute("SELECT count(*) FROM tool_call_words").fetchone()[0] > 0
    connection.close()
    assert said and said[0].startswith("indexing the tool calls")


def test_a_card_number_in_a_path_is_masked_in_every_answer_that_names_the_path(activity_gateway, worktree):
    real = worktree["real"]
    _save(worktree["home"], Session(
        agent="claude-code", id="card path", cwd=str(real), created_at="2026-03-05T10:00:00Z",
        updated_at="2026-03-05T10:00:00Z",
        messages=[_use("a1", "Write", {"file_path": f"receipts/{CARD}.txt", "content": "x"}, "2026-03-05T10:00:00Z")],
    ))
    given = [
        activity_gateway.call("sessions_touching", {"path": str(real / "receipts")}),
        activity_gateway.call("search_tool_calls", {"tool": "Write"}),
        activity_gateway.call("agent_week", {"start": "2026-03-05", "days": 1}),
    ]
    assert [entry["id"] for entry in given[0].data["sessions"]] == ["card path"]
    for answer in given:
        assert "…6467" in answer.text and "4539" not in answer.text and "4539" not in str(answer.data)


@pytest.mark.parametrize(("computer", "gateway_zone"), [("Europe/Paris", None), ("UTC", "Europe/Paris")])
def test_agent_week_cuts_each_day_at_its_own_midnight_in_summer_and_in_winter(worktree, computer_zone_is, computer,
                                                                               gateway_zone):
    """22:30 UTC is 23:30 the same day in Paris in winter (+01:00) and 00:30 the next day in summer (+02:00):
    whatever the season of the day the test runs, one of the two has another offset than today. Paris is the
    computer's zone, or `[gateway] timezone` on a computer in UTC."""
    computer_zone_is(computer)
    _agent_week_in_paris(worktree, gateway_zone)


def _agent_week_in_paris(worktree: dict[str, Path], gateway_zone: str | None) -> None:
    real = str(worktree["real"])
    _save(worktree["home"], *(
        Session(agent="codex", id=f"night-{day}", cwd=real, created_at=f"{day}T22:30:00Z",
                updated_at=f"{day}T22:31:00Z", messages=[_ask("1", "Prune the pear tree", f"{day}T22:30:00Z")])
        for day in ("2026-01-16", "2026-07-16")))
    config = {**HAND_IMPORTED, **({"gateway": {"timezone": gateway_zone}} if gateway_zone else {})}
    gateway = make_gateway(plugins=[gateway_sessions], home=worktree["home"], config=config,
                           projects=[{"id": "orchard", "name": "Orchard", "ai": True, "paths": [real]}])
    for start, night in (("2026-01-16", "2026-01-16"), ("2026-07-16", "2026-07-17")):
        answer = gateway.call("agent_week", {"start": start, "days": 2})
        assert not answer.is_error, answer.text
        busy = [day["date"] for day in answer.data["days"] if day["projects"]]
        assert busy == [night], answer.text
