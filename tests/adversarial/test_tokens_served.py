"""Named HTTP tokens played through a real `gateway serve --http`, spoken to with the SDK's own client: the token
a host presents chooses its profile. A host holding the `chatgpt` token (a profile that opens only `garden`) gets
nothing of `dupont`, open to other hosts, through any tool, resource or prompt; the served token still gives the
default; a token file without a profile is refused, and so is a token revoked, from its next request on."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx2
import pytest
from click.testing import CliRunner

from gateway.commands.cli import main
from gateway.testing import folders_of, read_audit, write_config
from tests.gateway.test_cli_http import first_line, free_port, start

GARDEN_WORD = "quillwort"
DUPONT_WORD = "groutmoss"  # only in dupont's note: it must reach no chatgpt answer
PROJECTS = [
    {"id": "garden", "name": "Community garden", "ai": True, "paths": ["~/Notes/garden"]},
    {"id": "dupont", "name": "Dupont kitchen", "ai": True, "paths": ["~/Notes/dupont"]},
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    """One server for the module: (home, url, served token, chatgpt token)."""
    home = tmp_path_factory.mktemp("tokens") / "home"
    notes = home / "Notes"
    (notes / "garden").mkdir(parents=True)
    (notes / "dupont").mkdir(parents=True)
    (notes / "garden" / "Beds.md").write_text(f"# Beds\n\nThe {GARDEN_WORD} bed needs water.\n")
    (notes / "dupont" / "Tiles.md").write_text(f"# Tiles\n\nThe {GARDEN_WORD} {DUPONT_WORD} for the kitchen.\n")
    write_config(home, {
        "gateway": {"plugins": ["mail", "hello"]},
        "plugins": {"mail": {"notes": str(notes)}},
        "profiles": {"chatgpt": {"projects": ["garden"]}},
    }, projects=PROJECTS)
    chatgpt = token_add(home, "chatgpt", "chatgpt")
    port = free_port()
    process = start(home, port)
    try:
        assert first_line(process).startswith("Serving MCP"), "the server did not start"
        served_token = (folders_of(home).state / "http-token").read_text().strip()
        yield home, f"http://127.0.0.1:{port}/mcp", served_token, chatgpt
    finally:
        process.terminate()
        process.wait(10)
        process.stderr.close()


def cli(home: Path, *arguments: str):
    from gateway.api.context import home_environment

    env = {**home_environment(home), "GATEWAY_CONFIG": None, "GATEWAY_PROFILE": None}
    return CliRunner().invoke(main, list(arguments), env=env)


def token_add(home: Path, name: str, profile: str) -> str:
    result = cli(home, "token", "add", name, "--profile", profile)
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()[0].strip()


async def everything(url: str, token: str, client_name: str) -> list[tuple[str, str]]:
    """(what was asked, all the host received) for every tool, resource and prompt the token's host is offered."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp_types import Implementation

    from gateway.testing import listed_resources

    answers: list[tuple[str, str]] = []

    async def asked(label: str, call) -> None:
        try:
            result = await call
            answers.append((label, json.dumps(result.model_dump(mode="json"), ensure_ascii=False)))
        except Exception as refusal:  # noqa: BLE001 - an error is an answer too: it must hold nothing kept
            answers.append((label, str(refusal)))

    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy",
               client_info=Implementation(name=client_name, version="1")) as client,
    ):
        tools = (await client.list_tools()).tools
        answers.append(("tools/list", json.dumps([t.model_dump(mode="json") for t in tools])))
        arguments = {"query": GARDEN_WORD, "address": "sioul:note/dupont/Tiles.md", "path": "~/Notes/dupont",
                     "id": "dupont", "project": "dupont", "name": "Tiles"}
        for tool in tools:
            properties = (tool.input_schema or {}).get("properties") or {}
            required = (tool.input_schema or {}).get("required") or []
            given = {key: value for key, value in arguments.items() if key in properties}
            if all(key in given for key in required):
                await asked(f"{tool.name} {given}", client.call_tool(tool.name, given))
            if given and not required:
                await asked(f"{tool.name} {{}}", client.call_tool(tool.name, {}))
        try:
            resources = await listed_resources(client)
        except Exception as refusal:  # noqa: BLE001
            resources, refused = [], str(refusal)
        else:
            refused = json.dumps([r.model_dump(mode="json") for r in resources])
        answers.append(("resources/list", refused))
        for uri in dict.fromkeys([str(r.uri) for r in resources] + ["sioul:note/dupont/Tiles.md"]):
            await asked(f"resources/read {uri}", client.read_resource(uri))
        try:
            prompts = (await client.list_prompts()).prompts
        except Exception as refusal:  # noqa: BLE001
            prompts = []
            answers.append(("prompts/list", str(refusal)))
        for prompt in prompts:
            names = [a.name for a in prompt.arguments or []]
            given = {name: arguments.get(name, GARDEN_WORD) for name in names}
            await asked(f"prompts/get {prompt.name}", client.get_prompt(prompt.name, given))
    return answers


def test_a_token_on_a_profile_gets_nothing_of_a_project_its_profile_does_not_open(served) -> None:
    home, url, served_token, chatgpt = served
    as_chatgpt = anyio.run(everything, url, chatgpt, "chatgpt-host")
    leaks = [f"{label}: {text[:200]}" for label, text in as_chatgpt if DUPONT_WORD in text]
    assert not leaks, leaks
    assert any("Beds" in text for _label, text in as_chatgpt), "garden's note should reach the chatgpt host"
    assert len(as_chatgpt) > 10
    # The served token is today's default (no profile): dupont is open to that host, so the samples prove something.
    as_default = anyio.run(everything, url, served_token, "default-host")
    assert any(DUPONT_WORD in text for _label, text in as_default)
    lines = read_audit(home)
    mine = [line for line in lines if line.get("client") == "chatgpt-host"]
    assert mine and all(line.get("profile") == "chatgpt" and line.get("token") == "chatgpt" for line in mine)
    theirs = [line for line in lines if line.get("client") == "default-host"]
    assert theirs and all(line.get("token") == "default" and "profile" not in line for line in theirs)
    assert not any(chatgpt in json.dumps(line) for line in lines), "a token's secret is never logged"


def test_a_host_of_the_2026_era_is_given_its_tokens_profile_on_every_request(served) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    home, url, served_token, chatgpt = served

    async def search(token: str) -> str:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as client,  # no handshake: each request alone
        ):
            assert client.protocol_version == "2026-07-28"
            return str((await client.call_tool("search_notes", {"query": GARDEN_WORD})).content)

    as_chatgpt = anyio.run(search, chatgpt)
    assert "Beds" in as_chatgpt and DUPONT_WORD not in as_chatgpt and "Tiles" not in as_chatgpt
    assert DUPONT_WORD in anyio.run(search, served_token)


def _post(url: str, token: str) -> httpx2.Response:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
    return httpx2.post(url, json=initialize, timeout=30, headers={
        "Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"})


def test_a_token_file_without_a_profile_is_refused(served) -> None:
    home, url, _served_token, _chatgpt = served
    secret = token_add(home, "noprofile", "chatgpt")
    assert _post(url, secret).status_code == 200
    kept = folders_of(home).state / "tokens" / "noprofile.json"
    body = json.loads(kept.read_text())
    del body["profile"]
    kept.write_text(json.dumps(body))
    refused = _post(url, secret)
    assert refused.status_code == 401 and "Authorization: Bearer" in refused.json()["error"]


def test_a_token_naming_a_profile_the_config_does_not_define_gets_nothing(served) -> None:
    home, url, _served_token, _chatgpt = served
    secret = token_add(home, "orphan", "chatgpt")
    kept = folders_of(home).state / "tokens" / "orphan.json"
    kept.write_text(kept.read_text().replace('"chatgpt"', '"nosuch"'))
    answers = anyio.run(everything, url, secret, "orphan-host")
    assert not any(GARDEN_WORD in text or DUPONT_WORD in text for _label, text in answers), answers
    assert any("the profile 'nosuch' is not defined" in text for _label, text in answers)


def test_a_revoked_token_is_refused_at_the_next_request(served) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    home, url, _served_token, _chatgpt = served
    secret = token_add(home, "laptop", "chatgpt")

    async def play() -> None:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"}, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
        ):
            found = await client.call_tool("search_notes", {"query": GARDEN_WORD})
            assert "Beds" in str(found.content)
            assert cli(home, "token", "revoke", "laptop").exit_code == 0
            # The same session, its very next request: refused by the HTTP layer before the gateway hears of it.
            refused = await http.post(url, json={"jsonrpc": "2.0", "id": 99, "method": "tools/list"},
                                      headers={"Accept": "application/json, text/event-stream"})
            assert refused.status_code == 401

    anyio.run(play)
    assert _post(url, secret).status_code == 401
