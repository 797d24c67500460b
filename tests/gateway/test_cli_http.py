"""`gateway serve --http`: announced once the port listens, a port in use said in one sentence (exit 1), and the
token's file named wherever a token is asked for."""

from __future__ import annotations

import os
import selectors
import socket
import subprocess

import anyio
import httpx2
import pytest
from click.testing import CliRunner

from gateway.api.context import home_environment
from gateway.commands.cli import main
from gateway.testing import folders_of, write_config
from tests.forkserver import gateway_command
from tests.plugins.fresh_helpers import claude_session, open_projects


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(home, port: int) -> subprocess.Popen:
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(home)}
    return subprocess.Popen(gateway_command("serve", "--http", f"127.0.0.1:{port}"),
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def first_line(process: subprocess.Popen, within: float = 60) -> str:
    """The first line the server writes on stderr ('' if it ends or stays silent)."""
    with selectors.DefaultSelector() as selector:
        selector.register(process.stderr, selectors.EVENT_READ)
        if selector.select(within):
            return process.stderr.readline()
    return ""


@pytest.fixture
def home(gateway_home):
    write_config(gateway_home, {"gateway": {"plugins": ["hello"]}})
    return gateway_home


def test_a_port_in_use_is_one_sentence_and_exit_1(home):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = start(home, port)
        try:
            _out, err = process.communicate(timeout=60)
        finally:
            process.kill()
    assert process.returncode == 1
    assert "Serving MCP" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and f"127.0.0.1:{port} is already in use" in lines[0], err


def test_the_address_is_announced_once_it_listens(home):
    port = free_port()
    process = start(home, port)
    try:
        line = first_line(process)
        assert line.startswith(f"Serving MCP on http://127.0.0.1:{port}/mcp"), line
        # Told the address, a host connects at once: the port already listens.
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        token_file = folders_of(home).state / "http-token"
        assert str(token_file) in line
        refused = httpx2.post(f"http://127.0.0.1:{port}/mcp", json={}, headers={"Accept": "application/json"})
        assert refused.status_code == 401
        assert str(token_file) in refused.json()["error"] and "Authorization: Bearer" in refused.json()["error"]
    finally:
        process.terminate()
        process.wait(10)
        process.stderr.close()


def test_serve_help_names_the_token_file(home):
    result = CliRunner().invoke(main, ["serve", "--help"])
    assert result.exit_code == 0
    flat = " ".join(result.output.split())
    assert str(folders_of(home).state / "http-token") in flat and "Authorization: Bearer" in flat


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")  # the handshake era's way, served on HTTP too
def test_an_http_session_hears_of_new_sessions_and_of_a_subscribed_one_changing(gateway_home):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    home = gateway_home
    write_config(home, {"gateway": {"plugins": ["sessions"]}}, open_projects(home))
    orchard = home / "src" / "orchard"
    claude_session(home, "watched", ["prune the medlar"], orchard)
    heard: list[str] = []

    async def handler(message) -> None:
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if method:
            uri = getattr(getattr(root, "params", None), "uri", None)
            heard.append(f"{method} {uri}" if uri else method)

    port = free_port()
    process = start(home, port)
    try:
        assert first_line(process).startswith("Serving MCP")
        token = (folders_of(home).state / "http-token").read_text().strip()

        async def session() -> None:
            # The SDK's own read timeout for streams a server holds open (httpx's 5 s would cut the GET stream that
            # carries the notifications, and the client would miss what is sent while it reconnects).
            timeout = httpx2.Timeout(30, read=300)
            async with (
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=timeout) as http,
                Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http), mode="legacy",
                       message_handler=handler) as client,
            ):
                capabilities = client.server_capabilities.resources
                assert capabilities.list_changed and capabilities.subscribe
                await client.call_tool("rousseau_list_sessions", {})  # the first import
                await client.subscribe_resource("rousseau://sessions/watched")
                heard.clear()
                claude_session(home, "watched", ["and graft the medlar"], orchard, append=True, first=2)
                claude_session(home, "newcomer", ["a new session about quinces"], orchard)
                await client.call_tool("rousseau_search_sessions", {"query": "quinces"})
                with anyio.fail_after(30):
                    while not {"notifications/resources/updated rousseau://sessions/watched",
                               "notifications/resources/list_changed"} <= set(heard):
                        await anyio.sleep(0.1)
                # With no call at all: the server's poll for subscribers runs on HTTP too.
                heard.clear()
                claude_session(home, "watched", ["the medlar fruits"], orchard, append=True, first=3)
                with anyio.fail_after(30):
                    while "notifications/resources/updated rousseau://sessions/watched" not in heard:
                        await anyio.sleep(0.1)

        anyio.run(session)
    finally:
        process.terminate()
        process.wait(10)
        process.stderr.close()


def test_an_http_host_of_the_2026_era_hears_through_a_listen_stream(gateway_home):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated

    home = gateway_home
    write_config(home, {"gateway": {"plugins": ["sessions"]}}, open_projects(home))
    orchard, vault = home / "src" / "orchard", home / "src" / "vault"
    claude_session(home, "watched", ["prune the medlar"], orchard)
    claude_session(home, "kept", ["the vault's medlar"], vault)
    heard: list = []
    honored = []
    port = free_port()
    process = start(home, port)
    try:
        assert first_line(process).startswith("Serving MCP")
        token = (folders_of(home).state / "http-token").read_text().strip()

        async def session() -> None:
            timeout = httpx2.Timeout(30, read=300)  # the listen stream is held open
            async with (
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=timeout) as http,
                Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client,
            ):
                assert client.session.protocol_version == "2026-07-28"  # the SDK's default mode settles there
                await client.call_tool("rousseau_list_sessions", {})  # the first import
                uris = ["rousseau://sessions/watched", "rousseau://sessions/kept"]
                async with client.listen(resources_list_changed=True, resource_subscriptions=uris) as sub:
                    honored.append(sub.honored)

                    async def hear() -> None:
                        async for event in sub:
                            heard.append(event)

                    async with anyio.create_task_group() as tasks:
                        tasks.start_soon(hear)
                        claude_session(home, "watched", ["and graft the medlar"], orchard, append=True, first=2)
                        claude_session(home, "kept", ["the vault's key"], vault, append=True, first=2)
                        claude_session(home, "newcomer", ["a new session about quinces"], orchard)
                        # No call: the server's poll for listeners runs on HTTP too (list_changed may wait its
                        # turn, 20 s after the first import's).
                        with anyio.fail_after(60):
                            while not {ResourceUpdated(uri=uris[0]), ResourcesListChanged()} <= set(heard):
                                await anyio.sleep(0.1)
                        tasks.cancel_scope.cancel()

        anyio.run(session)
    finally:
        process.terminate()
        process.wait(10)
        process.stderr.close()
    assert honored[0].resource_subscriptions == ["rousseau://sessions/watched"]
    assert ResourceUpdated(uri="rousseau://sessions/kept") not in heard
