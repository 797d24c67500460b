"""Streamable HTTP: loopback only, a bearer token, the Origin checked, and the same gateway behind it."""

from __future__ import annotations

import os
import socket
import subprocess
import time

import anyio
import httpx2
import pytest

from gateway.api.context import home_environment
from gateway.testing import folders_of, read_audit, write_config
from gateway.wire.http import parse_address
from tests.forkserver import gateway_command

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "web-host", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory):
    """One server for the module: no test changes what the next one is answered (each opens its own sessions)."""
    gateway_home = tmp_path_factory.mktemp("http") / "home"
    gateway_home.mkdir()
    write_config(gateway_home, {"gateway": {"plugins": ["hello"]}})
    port = free_port()
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(gateway_home)}
    stderr = gateway_home.parent / "stderr"  # a file, not a pipe: nobody reads it while the module's tests run
    log = stderr.open("wb")
    process = subprocess.Popen(gateway_command("serve", "--http", f"127.0.0.1:{port}"),
                               env=env, stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + 120  # a guard against a hang: a loaded machine takes seconds to start a server
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert process.poll() is None, stderr.read_text()
            assert time.monotonic() < deadline, f"gateway serve --http did not listen on {port} within 120 s"
            time.sleep(0.1)
    token = (folders_of(gateway_home).state / "http-token").read_text().strip()
    yield f"http://127.0.0.1:{port}/mcp", token, gateway_home
    process.terminate()
    process.wait(10)
    log.close()


def test_a_request_without_the_token_is_refused(http_server):
    url, _token, _home = http_server
    assert httpx2.post(url, json=INIT, headers=ACCEPT).status_code == 401
    assert httpx2.post(url, json=INIT, headers={**ACCEPT, "Authorization": "Bearer wrong"}).status_code == 401


def test_a_foreign_origin_is_refused(http_server):
    url, token, _home = http_server
    headers = {**ACCEPT, "Authorization": f"Bearer {token}", "Origin": "http://evil.example.com"}
    assert httpx2.post(url, json=INIT, headers=headers).status_code == 403


def test_the_token_file_is_the_persons_alone(http_server):
    _url, _token, home = http_server
    assert (folders_of(home).state / "http-token").stat().st_mode & 0o077 == 0


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_host_calls_a_tool_over_http_with_the_sdk_client(http_server, mode):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    url, token, home = http_server
    audited_before = len(read_audit(home))

    async def session():
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http,
            Client(streamable_http_client(url, http_client=http), mode=mode) as client,
        ):
            assert client.protocol_version == {"legacy": "2025-11-25", "auto": "2026-07-28"}[mode]
            assert [t.name for t in (await client.list_tools()).tools] == ["hello", "echo", "whose", "list_cards", "read_card"]
            result = await client.call_tool("hello", {"name": "Web"})
            assert result.content[0].text == "Hello, Web!"

    anyio.run(session)
    assert [e["transport"] for e in read_audit(home)[audited_before:] if e.get("tool") == "hello"] == ["http"]


@pytest.mark.parametrize("address", ["0.0.0.0:8000", "192.0.2.1:80", "example.com:80", "127.0.0.1:99999", "x"])
def test_only_loopback_addresses_are_served(address):
    import click

    with pytest.raises(click.BadParameter):
        parse_address(address)


def test_the_bearer_scheme_is_read_whatever_its_case_and_the_token_exactly(http_server):
    url, token, _home = http_server
    for accepted in (f"bearer {token}", f"BEARER {token}", f"Bearer  {token}"):
        assert httpx2.post(url, json=INIT, headers={**ACCEPT, "Authorization": accepted}).status_code == 200, accepted
    for refused in (f"Basic {token}", f"bearer{token}", f"bearer {token.upper()}x", f"{token}", "bearer"):
        assert httpx2.post(url, json=INIT, headers={**ACCEPT, "Authorization": refused}).status_code == 401, refused
