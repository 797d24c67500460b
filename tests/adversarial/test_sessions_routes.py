"""Routes match what the computer means: sessions and cron jobs of a closed project, however they reach it.

The attacks (issue 7, section 3), each through a real `gateway serve` and the SDK's client, with a canary word in the
closed project's items that must be in no answer of any tool or resource: a session that starts in an open folder
and `cd`s into a closed one; a session whose tool call edits a file of a closed project; a subagent transcript with
no working directory under a closed parent; a cron job whose answers go to a closed project's sender. The symlink and
`~` cases check that the gate resolves links and takes the account's home as well as `$HOME`.
"""

from __future__ import annotations

import json
import os
import pwd
from pathlib import Path

import anyio
import pytest
from gateway_cron import store as cron_store
from gateway_sessions import store
from gateway_sessions.importing import import_agent

from gateway.testing import folders_of, listed_resources, serve_client, write_config

CANARY = "xylocarpcanary"
OPEN_WORD = "plumtree"  # in the open project's session, and in every closed one too (search must not tell)


def _projects(home: Path, **vault_routes) -> list[dict]:
    return [
        {"id": "orchard", "name": "Orchard", "ai": True, "paths": [str(home / "src" / "orchard")]},
        {
            "id": "vault",
            "name": "Vault",
            "ai": False,
            "paths": vault_routes.pop("paths", [str(home / "src" / "vault")]),
            "senders": ["keeper@example.net"],
            **vault_routes,
        },
    ]


def _line(session_id: str, n: int, role: str, content, cwd: str | None, agent_id: str = "") -> dict:
    line = {
        "type": role,
        "uuid": f"{session_id}-{agent_id}-{n}",
        "sessionId": session_id,
        "timestamp": f"2026-03-02T09:{n:02d}:00.000Z",
        "message": {
            "role": role,
            "content": content,
            **({"id": f"msg-{session_id}-{agent_id}-{n}"} if role == "assistant" else {}),
        },
    }
    if cwd is not None:
        line["cwd"] = cwd
    if agent_id:
        line["agentId"], line["isSidechain"] = agent_id, True
    return line


def _transcript(home: Path, session_id: str, lines: list[dict], subagent: str = "") -> None:
    folder = home / ".claude" / "projects" / "-home-ada-src"
    path = (
        folder / session_id / "subagents" / f"agent-{subagent}.jsonl"
        if subagent
        else folder / f"{session_id}.jsonl"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def _home_with_folders(home: Path) -> Path:
    for name in ("orchard", "vault", "cellar"):
        (home / "src" / name).mkdir(parents=True, exist_ok=True)
    # The control: a session of the open project, found by the common word.
    _transcript(
        home,
        "open-orchard",
        [_line("open-orchard", 1, "user", f"prune the {OPEN_WORD} rows", str(home / "src" / "orchard"))],
    )
    return home


def _import(home: Path) -> None:
    connection = store.open_for_writing(store.default_path(folders_of(home).for_plugin("sessions").data))
    try:
        report = import_agent(connection, "claude-code")
        assert not report.failed, report.failed
    finally:
        connection.close()


def _text(result) -> str:
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {}, ensure_ascii=False)


async def _sweep(client, session_ids: list[str], cron: bool = False) -> tuple[list[str], set[str]]:
    """Everything every tool and resource gives; and the session ids the list shows."""
    given: list[str] = []
    for query in (CANARY, OPEN_WORD, f"{CANARY[:5]}*", "ledger OR fence OR digest"):
        given.append(_text(await client.call_tool("rousseau_search_sessions", {"query": query})))
    listed = await client.call_tool("rousseau_list_sessions", {"limit": 200})
    given.append(_text(listed))
    shown = {session["id"] for session in listed.structured_content["sessions"]}
    for session_id in session_ids:
        given.append(_text(await client.call_tool("rousseau_read_session", {"id": session_id})))
    if cron:
        given.append(_text(await client.call_tool("rousseau_cron_list", {})))
    resources = await listed_resources(client)
    given.append(json.dumps([resource.model_dump(mode="json") for resource in resources], ensure_ascii=False))
    uris = [str(resource.uri) for resource in resources]
    uris += [f"rousseau://sessions/{session_id}" for session_id in session_ids]
    if cron:
        uris += ["rousseau://cron/vault-mail", "rousseau://cron/orchard-water"]
    for uri in uris:
        try:
            read = await client.read_resource(uri)
            given.append(json.dumps(read.model_dump(mode="json"), ensure_ascii=False))
        except Exception as refusal:  # noqa: BLE001 - a refusal is an answer too: it must hold no canary
            given.append(str(refusal))
    return given, shown


def _serve_and_sweep(
    home: Path, projects: list[dict], session_ids: list[str], cron: bool = False
) -> set[str]:
    plugins = ["sessions", "cron"] if cron else ["sessions"]
    write_config(home, {"gateway": {"plugins": plugins}}, projects=projects)

    async def run():
        async with serve_client(home) as client:
            return await _sweep(client, session_ids, cron)

    given, shown = anyio.run(run)
    for answer in given:
        assert CANARY not in answer
    assert "open-orchard" in shown, "the open project's session is still shown"
    return shown


def test_a_session_that_cds_into_a_closed_project_is_kept(gateway_home: Path):
    home = _home_with_folders(gateway_home)
    _transcript(
        home,
        "cd-vault",
        [
            _line("cd-vault", 1, "user", f"look at the {OPEN_WORD} first", str(home / "src" / "orchard")),
            _line("cd-vault", 2, "user", f"now the {CANARY} ledger", str(home / "src" / "vault")),
        ],
    )
    _import(home)
    shown = _serve_and_sweep(home, _projects(home), ["cd-vault", "open-orchard"])
    assert "cd-vault" not in shown


def test_a_session_whose_tool_call_edits_a_closed_project_file_is_kept(gateway_home: Path):
    home = _home_with_folders(gateway_home)
    orchard, secret = str(home / "src" / "orchard"), str(home / "src" / "vault" / "notes" / "fence.md")
    edit = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "Edit",
        "input": {"file_path": secret, "old_string": "a", "new_string": CANARY},
    }
    _transcript(
        home,
        "edit-vault",
        [
            _line("edit-vault", 1, "user", f"fix the {OPEN_WORD} fence note with {CANARY}", orchard),
            _line("edit-vault", 2, "assistant", [edit], orchard),
            _line(
                "edit-vault", 3, "assistant", [{"type": "text", "text": f"Done: {CANARY} written."}], orchard
            ),
        ],
    )
    # A relative path from the same working directory reaches the closed project too.
    relative = {
        "type": "tool_use",
        "id": "toolu_2",
        "name": "Read",
        "input": {"file_path": "../vault/ledger.txt"},
    }
    _transcript(
        home,
        "read-vault",
        [
            _line("read-vault", 1, "user", f"{OPEN_WORD}: read the ledger, {CANARY}", orchard),
            _line("read-vault", 2, "assistant", [relative], orchard),
        ],
    )
    _import(home)
    shown = _serve_and_sweep(home, _projects(home), ["edit-vault", "read-vault", "open-orchard"])
    assert not {"edit-vault", "read-vault"} & shown


def test_a_subagent_with_no_working_directory_under_a_closed_parent_is_kept(gateway_home: Path):
    home = _home_with_folders(gateway_home)
    _transcript(
        home,
        "vault-parent",
        [_line("vault-parent", 1, "user", f"{OPEN_WORD} {CANARY} ledger", str(home / "src" / "vault"))],
    )
    _transcript(
        home,
        "vault-parent",
        [
            _line(
                "vault-parent", 1, "user", f"summarise the {OPEN_WORD} {CANARY} ledger", None, agent_id="b7"
            ),
            _line(
                "vault-parent",
                2,
                "assistant",
                [{"type": "text", "text": f"The {CANARY} ledger balances."}],
                None,
                agent_id="b7",
            ),
        ],
        subagent="b7",
    )
    _import(home)
    shown = _serve_and_sweep(home, _projects(home), ["vault-parent", "vault-parent:agent-b7", "open-orchard"])
    assert not {"vault-parent", "vault-parent:agent-b7"} & shown


def _add_jobs(home: Path, vault_job_cwd: str = "", vault_deliver: str = "keeper@example.net") -> None:
    path = cron_store.default_path(folders_of(home).for_plugin("cron").data)
    connection = cron_store.open_for_writing(path)
    try:
        for name, prompt, deliver, cwd in (
            ("vault-mail", f"Send the {CANARY} digest", vault_deliver, vault_job_cwd),
            (
                "orchard-water",
                f"Water the {OPEN_WORD} rows",
                "ada@example.org",
                str(home / "src" / "orchard"),
            ),
        ):
            cron_store.add(
                connection, cron_store.Job(name, "@daily", prompt, deliver, True, "UTC", cwd, "", "")
            )
    finally:
        connection.close()


def _cron_shown(home: Path, projects: list[dict]) -> list[str]:
    write_config(home, {"gateway": {"plugins": ["sessions", "cron"]}}, projects=projects)

    async def run():
        async with serve_client(home) as client:
            given, _shown = await _sweep(client, [], cron=True)
            listed = await client.call_tool("rousseau_cron_list", {})
            return (
                given,
                [job["name"] for job in listed.structured_content["jobs"]],
                listed.structured_content["left_out"],
            )

    given, names, left_out = anyio.run(run)
    for answer in given:
        assert CANARY not in answer
    assert left_out == 1
    return names


@pytest.mark.parametrize(
    "deliver", ["keeper@example.net", "mail:Keeper@Example.net", "Keeper <keeper@example.net>"]
)
def test_a_cron_job_delivering_to_a_closed_projects_sender_is_kept(gateway_home: Path, deliver: str):
    home = _home_with_folders(gateway_home)
    _import(home)
    # Its working directory is in the open project: where its answers go closes it all the same.
    _add_jobs(home, vault_job_cwd=str(home / "src" / "orchard"), vault_deliver=deliver)
    assert _cron_shown(home, _projects(home)) == ["orchard-water"]


# --- links and homes: these pass once the gate resolves links and `~` (gateway/gate/access.py, fix7/gate) ---------------


def test_a_session_whose_working_directory_is_a_link_into_a_closed_project_is_kept(gateway_home: Path):
    home = _home_with_folders(gateway_home)
    (home / "links").mkdir()
    os.symlink(home / "src" / "vault", home / "links" / "shortcut")
    _transcript(
        home,
        "via-link",
        [_line("via-link", 1, "user", f"{OPEN_WORD} {CANARY}", str(home / "links" / "shortcut"))],
    )
    _import(home)
    shown = _serve_and_sweep(home, _projects(home), ["via-link", "open-orchard"])
    assert "via-link" not in shown


def test_a_route_written_through_a_link_keeps_the_physical_path(gateway_home: Path):
    home = _home_with_folders(gateway_home)
    os.symlink(home / "src" / "cellar", home / "cellar-link")
    _transcript(
        home,
        "in-cellar",
        [_line("in-cellar", 1, "user", f"{OPEN_WORD} {CANARY}", str(home / "src" / "cellar"))],
    )
    _import(home)
    shown = _serve_and_sweep(
        home, _projects(home, paths=[str(home / "cellar-link")]), ["in-cellar", "open-orchard"]
    )
    assert "in-cellar" not in shown


def test_a_cron_job_whose_working_directory_is_a_link_into_a_closed_project_is_kept(gateway_home: Path):
    home = _home_with_folders(gateway_home)
    (home / "links").mkdir()
    os.symlink(home / "src" / "vault", home / "links" / "shortcut")
    _import(home)
    _add_jobs(home, vault_job_cwd=str(home / "links" / "shortcut"), vault_deliver="log")
    assert _cron_shown(home, _projects(home)) == ["orchard-water"]


def test_a_tilde_route_covers_the_accounts_home_whatever_the_servers_home(gateway_home: Path):
    home = _home_with_folders(gateway_home)
    account_home = pwd.getpwuid(os.getuid()).pw_dir
    assert os.path.realpath(account_home) != os.path.realpath(
        home
    )  # the server runs with HOME = the test home
    attic = os.path.join(account_home, "gateway-test-attic-that-does-not-exist")
    _transcript(home, "in-attic", [_line("in-attic", 1, "user", f"{OPEN_WORD} {CANARY}", attic)])
    _import(home)
    projects = _projects(home, paths=["~/gateway-test-attic-that-does-not-exist"])
    shown = _serve_and_sweep(home, projects, ["in-attic", "open-orchard"])
    assert "in-attic" not in shown


def test_a_closed_projects_best_ranked_messages_neither_show_nor_push_open_sessions_out(gateway_home: Path):
    """The search oracle on exact ranking: 300 sessions of the closed project hold the best matches of the common
    word (short messages saying it three times), more than the first pass of a search takes; the open sessions that
    match less well are still the hits, in their order, and the count left out is the same whatever the words."""
    home = _home_with_folders(gateway_home)
    vault = str(home / "src" / "vault")
    for n in range(300):
        words = f"{OPEN_WORD} {OPEN_WORD} {OPEN_WORD} {CANARY}"
        _transcript(home, f"vault-{n:03d}", [_line(f"vault-{n:03d}", 1, "user", words, vault)])
    orchard = str(home / "src" / "orchard")
    for n in range(3):
        filler = " ".join(f"row{k}" for k in range(5 + 10 * n))
        _transcript(home, f"orchard-{n}", [_line(f"orchard-{n}", 1, "user", f"{OPEN_WORD} {filler}", orchard)])
    for n in range(200):  # unrelated sessions, so that the word is not in most messages (its IDF counts)
        _transcript(home, f"cellar-{n:03d}", [_line(f"cellar-{n:03d}", 1, "user", "medlar jam", orchard)])
    _import(home)
    write_config(home, {"gateway": {"plugins": ["sessions"]}}, projects=_projects(home))

    async def run():
        async with serve_client(home) as client:
            answers = {
                query: await client.call_tool("rousseau_search_sessions", {"query": query, "limit": 4})
                for query in (OPEN_WORD, f"{OPEN_WORD[:4]}*", CANARY, "medlar")
            }
            return answers, _text(await client.call_tool("rousseau_list_sessions", {"limit": 200}))

    answers, listed = anyio.run(run)
    for query in (OPEN_WORD, f"{OPEN_WORD[:4]}*"):
        hits = [hit["id"] for hit in answers[query].structured_content["hits"]]
        # The shorter open message ranks better: the control session's ("prune the plumtree rows", 4 words), then
        # orchard-0's (6), orchard-1's (16), orchard-2's (26).
        assert hits == ["open-orchard", "orchard-0", "orchard-1", "orchard-2"], query
    assert answers[CANARY].structured_content["hits"] == []
    left_out = {answer.structured_content["left_out"] for answer in answers.values()}
    assert left_out == {300}
    for answer in [*answers.values()]:
        assert CANARY not in _text(answer) and "vault-" not in _text(answer)
    assert CANARY not in listed and "vault-" not in listed
