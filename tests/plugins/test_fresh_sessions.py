"""Issue 13: what an agent wrote a minute ago is in the next answer of a real `gateway serve`, with no import run."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult

from gateway.testing import folders_of, serve_client, write_config
from tests.plugins.fresh_helpers import claude_session, open_projects


def _search(home: Path, words: list[str], before=None, extra_env=None) -> list[dict]:
    """Search each word in turn on one connection; `before(i)` runs before the i-th search."""
    found: list[dict] = []

    async def session() -> None:
        async with serve_client(home, extra_env=extra_env) as client:
            for i, word in enumerate(words):
                if before is not None:
                    before(i)
                result = await client.call_tool("rousseau_search_sessions", {"query": word})
                assert not result.is_error, result.content
                found.append({"data": result.structured_content, "text": result.content[0].text})

    anyio.run(session)
    return found


def _watches_of_server(home: Path) -> int | None:
    """How many folders the `gateway serve` of `home` watches through an inotify descriptor (None: it has none)."""
    for process in Path("/proc").iterdir():
        try:
            if b"serve" not in (process / "cmdline").read_bytes():
                continue
            if f"HOME={home}".encode() not in (process / "environ").read_bytes().split(b"\0"):
                continue
            watches = None
            for descriptor in (process / "fd").iterdir():
                if os.readlink(descriptor) == "anon_inode:inotify":
                    info = (process / "fdinfo" / descriptor.name).read_text()
                    watches = (watches or 0) + info.count("inotify wd:")
            return watches
        except OSError:  # not ours, or gone meanwhile
            continue
    raise AssertionError("no gateway serve found for this home")


@pytest.mark.parametrize("notifications", ["inotify", "stats"])
@pytest.mark.usefixtures("real_exec")  # reads the server's /proc (its command line, environment, descriptors)
def test_a_session_written_while_connected_is_found_by_the_next_search(gateway_home, notifications):
    home = gateway_home
    write_config(home, {"gateway": {"plugins": ["sessions"]}}, open_projects(home))
    orchard = home / "src" / "orchard"
    claude_session(home, "first", ["graft the pear trees", "done"], orchard)
    watches: list[int | None] = []

    def write_later(i: int) -> None:
        if i == 1:
            watches.append(_watches_of_server(home))
            claude_session(home, "second", ["prune the quincetree rows", "pruned"], orchard)
        if i == 2:
            claude_session(home, "second", ["and water the quincetree seedlings"], orchard, append=True, first=3)
        if i == 3:
            claude_session(home, "third", ["the medlar in a new project"], orchard, project="-home-ada-new")

    # Without notifications (none on this system, or turned off): each call stats, and finds the same.
    extra_env = {"GATEWAY_FILE_NOTIFICATIONS": "0"} if notifications == "stats" else None
    first, second, third, fourth = _search(home, ["quincetree", "quincetree", "seedlings", "medlar"],
                                           before=write_later, extra_env=extra_env)
    assert first["data"]["hits"] == []
    assert [hit["id"] for hit in second["data"]["hits"]] == ["second"]
    assert [hit["id"] for hit in third["data"]["hits"]] == ["second"]
    assert [hit["id"] for hit in fourth["data"]["hits"]] == ["third"]
    if notifications == "inotify":  # the server watched the folders (Claude Code's and its project's at least)
        assert watches[0] is not None and watches[0] >= 2
    else:
        assert watches == [None]


def _store(home: Path) -> Path:
    return folders_of(home).for_plugin("sessions").data / "sessions.db"


def _stored(home: Path, sql: str) -> list[tuple]:
    path = _store(home)
    if not path.exists():
        return []
    connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        return connection.execute(sql).fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        connection.close()


def _backlog(home: Path, sessions: int, messages: int) -> None:
    orchard = home / "src" / "orchard"
    for n in range(sessions):
        texts = [f"backlog {n} line {i} of the greengage harvest" for i in range(messages)]
        claude_session(home, f"backlog-{n:03d}", texts, orchard, project=f"-home-ada-p{n % 10}")


def test_past_the_budget_the_answer_says_so_and_the_next_call_has_everything(gateway_home):
    home = gateway_home
    write_config(home, {"gateway": {"plugins": ["sessions"], "refresh_budget_ms": 1}}, open_projects(home))
    _backlog(home, sessions=150, messages=40)
    answers: list[CallToolResult] = []

    async def session() -> None:
        async with serve_client(home) as client:
            answers.append(await client.call_tool("rousseau_list_sessions", {"limit": 200}))
            with anyio.fail_after(120):  # the import goes on by itself, no call needed
                while _stored(home, "SELECT COUNT(*) FROM sessions") != [(150,)]:
                    await anyio.sleep(0.2)
            # Stored is not yet finished: the refresh still closes the store and judges where the new sessions
            # belong after its last commit; a call landing then rightly says so (with every session already).
            with anyio.fail_after(60):
                while True:
                    answers.append(await client.call_tool("rousseau_list_sessions", {"limit": 200}))
                    if "still being read" not in answers[-1].content[0].text:
                        break
                    await anyio.sleep(0.2)

    anyio.run(session)
    first, *between, last = answers
    assert not first.is_error and "still being read" in first.content[0].text
    assert len(first.structured_content["sessions"]) < 150
    assert all(len(answer.structured_content["sessions"]) == 150 for answer in between)
    assert not last.is_error and "still being read" not in last.content[0].text
    assert len(last.structured_content["sessions"]) == 150


def test_two_servers_refreshing_at_once_leave_one_copy_of_each_message(gateway_home):
    home = gateway_home
    write_config(home, {"gateway": {"plugins": ["sessions"], "refresh_budget_ms": 60_000}}, open_projects(home))
    totals: list[int] = []

    async def one_server(started: anyio.Event, go: anyio.Event, ready: list) -> None:
        async with serve_client(home) as client:
            await client.list_tools()
            ready.append(1)
            started.set()
            await go.wait()
            for _ in range(2):
                result = await client.call_tool("rousseau_list_sessions", {"limit": 200})
                assert not result.is_error, result.content
                totals.append(len(result.structured_content["sessions"]))

    async def both() -> None:
        go, ready = anyio.Event(), []
        async with anyio.create_task_group() as tasks:
            for _ in range(2):
                started = anyio.Event()
                tasks.start_soon(one_server, started, go, ready)
                await started.wait()
            _backlog(home, sessions=60, messages=30)  # written while both are connected
            go.set()

    anyio.run(both)
    assert totals == [60, 60, 60, 60]
    assert _stored(home, "SELECT COUNT(*) FROM messages") == [(60 * 30,)]
    assert _stored(home, "SELECT COUNT(*) FROM messages_fts_docsize") == [(60 * 30,)]
    assert _stored(home, "SELECT id FROM sessions WHERE message_count != 30") == []


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")  # the handshake era's way, which we serve
def test_the_sdk_client_hears_of_new_sessions_and_of_a_subscribed_one_changing(gateway_home):
    home = gateway_home
    write_config(home, {"gateway": {"plugins": ["sessions"]}}, open_projects(home))
    orchard = home / "src" / "orchard"
    claude_session(home, "watched", ["plant the damson"], orchard)
    heard: list[str] = []

    async def handler(message) -> None:
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if method:
            uri = getattr(getattr(root, "params", None), "uri", None)
            heard.append(f"{method} {uri}" if uri else method)

    async def session() -> None:
        async with serve_client(home, message_handler=handler) as client:
            capabilities = client.server_capabilities.resources
            assert capabilities.list_changed and capabilities.subscribe
            await client.call_tool("rousseau_list_sessions", {})  # the first import
            await client.subscribe_resource("rousseau://sessions/watched")
            heard.clear()
            claude_session(home, "watched", ["and water the damson"], orchard, append=True, first=2)
            claude_session(home, "newcomer", ["a new session about sloes"], orchard)
            await client.call_tool("rousseau_search_sessions", {"query": "sloes"})
            with anyio.fail_after(30):
                while not {"notifications/resources/updated rousseau://sessions/watched",
                           "notifications/resources/list_changed"} <= set(heard):
                    await anyio.sleep(0.1)
            # With no call at all: a subscriber hears of a change within the server's few seconds of polling.
            heard.clear()
            claude_session(home, "watched", ["the damson fruits"], orchard, append=True, first=3)
            with anyio.fail_after(30):
                while "notifications/resources/updated rousseau://sessions/watched" not in heard:
                    await anyio.sleep(0.1)

    anyio.run(session)


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")
def test_a_resource_the_host_cannot_read_cannot_be_subscribed_to(gateway_home):
    home = gateway_home
    write_config(home, {"gateway": {"plugins": ["sessions"]}}, open_projects(home))
    claude_session(home, "kept", ["the vault combination"], home / "src" / "vault")
    refusals: list[str] = []

    async def session() -> None:
        async with serve_client(home) as client:
            await client.call_tool("rousseau_list_sessions", {})
            for uri in ("rousseau://sessions/kept", "rousseau://sessions/nowhere"):
                try:
                    await client.subscribe_resource(uri)
                except MCPError as error:
                    refusals.append(str(error))

    anyio.run(session)
    assert len(refusals) == 2
