"""A host on a profile gets only what the profile allows, played through a real `gateway serve --profile`: a host
on `chatgpt`, which opens only `garden`, gets nothing of `dupont` (open to other hosts) through any tool or
resource; tools the profile does not offer are neither listed nor called; every audit line names the profile; a
profile the config does not define closes everything."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from gateway.testing import read_audit, serve_client, write_config

CANARY = "quillwort"
PROJECTS = [
    {"id": "garden", "name": "Community garden", "ai": True, "paths": ["~/Notes/garden"]},
    {"id": "dupont", "name": "Dupont kitchen", "ai": True, "paths": ["~/Notes/dupont"]},
]


@pytest.fixture
def home(gateway_home: Path) -> Path:
    notes = gateway_home / "Notes"
    (notes / "garden").mkdir(parents=True)
    (notes / "dupont").mkdir(parents=True)
    (notes / "garden" / "Beds.md").write_text(f"# Beds\n\nThe {CANARY} bed needs water.\n")
    (notes / "dupont" / "Tiles.md").write_text(f"# Tiles\n\nThe {CANARY} grout for the kitchen.\n")
    write_config(gateway_home, {
        "gateway": {"plugins": ["mail", "hello"]},
        "plugins": {"mail": {"notes": str(notes)}},
        "profiles": {"chatgpt": {"projects": ["garden"], "tools": ["search_notes", "read_note", "find", "whose"]}},
    }, projects=PROJECTS)
    return gateway_home


def _text(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def test_a_profile_host_gets_nothing_of_a_project_its_profile_does_not_open(home: Path) -> None:
    async def play() -> None:
        async with serve_client(home, extra_env={"GATEWAY_PROFILE": "chatgpt"}, client_name="chatgpt") as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert tools == {"search_notes", "read_note", "find", "whose"}
            found = _text(await client.call_tool("search_notes", {"query": CANARY}))
            assert "Beds" in found and "Tiles" not in found and "1 note left out" in found
            found = _text(await client.call_tool("find", {"query": CANARY}))
            assert "Beds" in found and "Tiles" not in found and "grout" not in found
            refused = await client.call_tool("read_note", {"address": "sioul:note/dupont/Tiles.md"})
            assert refused.is_error and "grout" not in _text(refused)
            whose = await client.call_tool("whose", {"path": str(home / "Notes" / "dupont")})
            assert whose.is_error and "closed to AI agents" in _text(whose)
            try:
                read = await client.read_resource("sioul:note/dupont/Tiles.md")
                assert "grout" not in str(read)
            except MCPError as error:
                assert "grout" not in str(error)
            with pytest.raises(MCPError) as hidden:
                await client.call_tool("search_mail", {"query": "x"})
            assert "does not offer it" in str(hidden.value)
        # The same gateway, on no profile: dupont is open to that host.
        async with serve_client(home) as client:
            found = _text(await client.call_tool("search_notes", {"query": CANARY}))
            assert "Beds" in found and "Tiles" in found

    anyio.run(play)
    lines = read_audit(home)
    mine = [line for line in lines if line.get("client") == "chatgpt" and line.get("tool")]
    assert mine and all(line.get("profile") == "chatgpt" for line in mine)
    assert all("profile" not in line for line in lines if line.get("client") == "test-host")


def test_an_undefined_profile_closes_everything(home: Path) -> None:
    async def play() -> None:
        async with serve_client(home, extra_env={"GATEWAY_PROFILE": "nosuch"}) as client:
            result = await client.call_tool("search_notes", {"query": CANARY})
            assert result.is_error and "the profile 'nosuch' is not defined" in _text(result)
            assert CANARY not in _text(result)

    anyio.run(play)


def test_setup_starts_a_hosts_gateway_on_its_profile(gateway_home: Path) -> None:
    import json

    from click.testing import CliRunner

    from gateway.commands.cli import main

    printed = CliRunner().invoke(main, ["setup", "--host", "cursor", "--profile", "chatgpt"])
    entry = json.JSONDecoder().raw_decode(printed.output.split("\n", 1)[1])[0]["mcpServers"]["gateway"]
    assert entry["args"][-3:] == ["serve", "--profile", "chatgpt"]
