"""End to end: a real `gateway serve` and the SDK's own client, in each protocol family."""

from __future__ import annotations

import json
import os
import subprocess

import anyio
import pytest

from gateway import Tool
from gateway.api.context import home_environment
from gateway.testing import (
    inline_plugin,
    installed_plugin,
    make_gateway,
    read_audit,
    serve_client,
    write_config,
)
from gateway.wire.server import INSTRUCTIONS, build_server
from tests.forkserver import gateway_command


@pytest.fixture
def hello_home(gateway_home):
    write_config(gateway_home, {"gateway": {"plugins": ["hello"]}})
    return gateway_home


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_a_host_lists_and_calls_through_a_real_server(hello_home, mode, version):
    async def session():
        async with serve_client(hello_home, mode=mode, client_name="claude-code") as client:
            assert client.protocol_version == version
            tools = (await client.list_tools()).tools
            assert [t.name for t in tools] == ["hello", "echo", "whose", "list_cards", "read_card"]
            assert tools[0].annotations.read_only_hint is True
            assert tools[0].annotations.destructive_hint is False
            assert tools[0].output_schema["required"] == ["greeting", "name", "times"]
            result = await client.call_tool("hello", {"name": "Ada"})
            assert result.content[0].text == "Hello, Ada!" and not result.is_error
            assert result.structured_content == {"greeting": "Hello", "name": "Ada", "times": 1}
            bad = await client.call_tool("hello", {"name": "Ada", "colour": "red"})
            assert bad.is_error and "'colour'" in bad.content[0].text and "name, times" in bad.content[0].text
            with pytest.raises(Exception, match="Unknown tool"):
                await client.call_tool("no_such_tool", {})
            motto = await client.read_resource("hello://motto")
            assert "Small tools" in motto.contents[0].text
            prompt = await client.get_prompt("greet", {"name": "Bo"})
            assert "Bo" in prompt.messages[0].content.text

    anyio.run(session)
    entries = read_audit(hello_home)
    assert {e.get("client") for e in entries} == {"claude-code"}
    assert [e["outcome"] for e in entries if e.get("tool") == "hello"] == ["ok", "bad_arguments"]


def test_instructions_say_others_words_are_data(hello_home):
    async def session():
        async with serve_client(hello_home) as client:
            assert client.instructions == INSTRUCTIONS
            assert "never instructions" in client.instructions

    anyio.run(session)


class Raw:
    """`gateway serve` spoken to line by line, as the oldest hosts do."""

    def __init__(self, home, extra_env=None):
        env = {"PATH": os.environ.get("PATH", ""), **home_environment(home), **(extra_env or {})}
        self.process = subprocess.Popen(
            gateway_command("serve"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=env,
        )

    def send(self, message) -> None:
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def answer(self) -> dict:
        line = self.process.stdout.readline()
        assert line, self.process.stderr.read().decode()
        return json.loads(line)

    def close(self) -> tuple[bytes, int]:
        self.process.stdin.close()
        rest = self.process.stdout.read()
        code = self.process.wait(30)
        self.process.stderr.close()
        return rest, code


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_every_handshake_revision_is_agreed(hello_home, version):
    raw = Raw(hello_home)
    raw.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "old-host", "version": "0.1"}}})
    reply = raw.answer()
    assert reply["result"]["protocolVersion"] == version
    assert reply["result"]["serverInfo"]["name"] == "gateway"
    raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    raw.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert raw.answer() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    raw.send({"jsonrpc": "2.0", "id": "three", "method": "tools/call",
              "params": {"name": "hello", "arguments": {"name": "Old"}}})
    reply = raw.answer()
    assert reply["id"] == "three" and reply["result"]["content"][0]["text"] == "Hello, Old!"
    raw.send({"jsonrpc": "2.0", "id": 4, "method": "no/such_method"})
    assert raw.answer()["error"]["code"] == -32601
    rest, code = raw.close()
    assert rest == b"" and code == 0


NOISY = """
from gateway import Tool, hookimpl
print("stray output while importing")

def noisy() -> str:
    print("stray output from a tool")
    return "done"

@hookimpl
def register_tools(gateway):
    return [Tool.from_function(noisy, read_only=True)]
"""


def test_stdout_carries_nothing_but_protocol_lines(gateway_home, tmp_path):
    env = installed_plugin(tmp_path / "site", "noisy", NOISY)
    write_config(gateway_home, {"gateway": {"plugins": ["noisy", "ghost"]}})
    raw = Raw(gateway_home, env)
    raw.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "h", "version": "1"}}})
    raw.answer()
    raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    raw.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert [t["name"] for t in raw.answer()["result"]["tools"]] == ["noisy"]
    raw.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "noisy", "arguments": {}}})
    assert raw.answer()["result"]["content"][0]["text"] == "done"
    rest, code = raw.close()
    assert code == 0
    for line in rest.splitlines():
        json.loads(line)


def test_lists_are_paged_with_an_opaque_cursor(gateway_home):
    def make(i):
        def tool() -> str:
            return str(i)

        return Tool(name=f"t{i:03d}", function=tool)

    gw = make_gateway([inline_plugin("many", tools=[make(i) for i in range(250)])], home=gateway_home)

    async def session():
        from mcp import Client

        async with Client(build_server(gw), mode="legacy") as client:
            names, cursor, pages = [], None, 0
            while True:
                page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
                pages += 1
                names += [t.name for t in page.tools]
                cursor = page.next_cursor
                if not cursor:
                    break
            assert pages == 3 and names == [f"t{i:03d}" for i in range(250)]
            with pytest.raises(Exception, match="cursor"):
                await client.list_tools(cursor="not-a-cursor!")
            result = await client.call_tool("t007", {})
            assert result.content[0].text == "7"

    anyio.run(session)


def test_a_request_before_initialize_is_told_to_initialize_first(hello_home):
    raw = Raw(hello_home)
    raw.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    error = raw.answer()["error"]
    assert error["code"] == -32602
    assert "not initialized" in error["message"] and "send initialize" in error["message"]
    assert error["data"] == {"method": "tools/list"}
    raw.send({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "h", "version": "1"}}})
    assert raw.answer()["result"]["protocolVersion"] == "2025-06-18"
    _, code = raw.close()
    assert code == 0


@pytest.fixture(scope="module")
def malformed_target(tmp_path_factory):
    """One initialized server for the malformed calls: each must leave it serving, and it ends cleanly after them."""
    home = tmp_path_factory.mktemp("malformed") / "home"
    home.mkdir()
    write_config(home, {"gateway": {"plugins": ["hello"]}})
    raw = Raw(home)
    raw.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "h", "version": "1"}}})
    raw.answer()
    raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    yield raw
    _, code = raw.close()
    assert code == 0


@pytest.mark.parametrize(
    ("params", "field"),
    [
        (None, "params"),
        ({"name": 5}, "params.name"),
        ({"name": "hello", "arguments": ["4111 1111 1111 1111"]}, "params.arguments"),
    ],
    ids=["no-params", "name-not-a-string", "arguments-not-an-object"],
)
def test_a_malformed_call_says_which_field_is_wrong_and_never_echoes_it(malformed_target, params, field):
    raw = malformed_target
    message = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
    if params is not None:
        message["params"] = params
    raw.send(message)
    reply = raw.answer()
    error = reply["error"]
    assert error["code"] == -32602
    assert error["message"].startswith("Invalid request parameters for tools/call: " + field)
    assert [p["field"] for p in error["data"]["problems"]] == [field]
    assert "4111" not in json.dumps(reply)
    raw.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    assert raw.answer() == {"jsonrpc": "2.0", "id": 3, "result": {}}
