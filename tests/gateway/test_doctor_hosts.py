"""`gateway doctor` reads the hosts' configs and warns when the gateway shares a host with a server that can carry
data out (a fetcher, a browser, a shell, a mail sender, an HTTP client, a remote server), naming it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gateway.commands.cli import main
from gateway.commands.hosts import is_gateway, servers_of, way_out

GATEWAY = {"command": "/home/ada/.venv/bin/gateway", "args": ["serve"]}


def _doctor() -> str:
    return CliRunner().invoke(main, ["doctor"]).output


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_host_with_a_fetch_server_beside_the_gateway_is_warned_of(gateway_home: Path) -> None:
    _write(gateway_home / ".cursor" / "mcp.json", json.dumps({"mcpServers": {
        "gateway": GATEWAY, "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}}}))
    said = _doctor()
    assert "WARNING  cursor runs the gateway beside the server 'fetch'" in said and "fetches web pages" in said


def test_a_shell_server_in_vs_codes_commented_config_is_warned_of(gateway_home: Path) -> None:
    _write(gateway_home / ".config" / "Code" / "User" / "mcp.json", """{
    // mine
    "servers": {
        "gateway": {"type": "stdio", "command": "python3", "args": ["-m", "gateway", "serve"]},
        "commander": {"command": "npx", "args": ["-y", "@wonderwhy-er/desktop-commander"]},
    },
}""")
    said = _doctor()
    assert "vscode runs the gateway beside the server 'commander'" in said and "runs shell commands" in said


def test_claude_codes_project_servers_and_codexs_toml_are_read(gateway_home: Path) -> None:
    _write(gateway_home / ".claude.json", json.dumps({"mcpServers": {"gateway": GATEWAY}, "projects": {
        "/home/ada/site": {"mcpServers": {"pw": {"command": "npx", "args": ["@playwright/mcp@latest"]}}}}}))
    _write(gateway_home / ".codex" / "config.toml",
           '[mcp_servers.gateway]\ncommand = "gateway"\nargs = ["serve"]\n\n'
           '[mcp_servers.remote]\nurl = "https://tools.example.com/mcp"\n')
    said = _doctor()
    assert "claude-code runs the gateway beside the server 'pw'" in said and "drives a browser" in said
    assert "codex runs the gateway beside the server 'remote'" in said and "is a remote server" in said


def test_no_warning_without_a_way_out_or_without_the_gateway(gateway_home: Path) -> None:
    _write(gateway_home / ".cursor" / "mcp.json", json.dumps({"mcpServers": {
        "gateway": GATEWAY, "git": {"command": "uvx", "args": ["mcp-server-git", "--repository", "."]}}}))
    _write(gateway_home / ".gemini" / "settings.json", json.dumps({"mcpServers": {
        "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}}}))  # no gateway in this host
    said = _doctor()
    assert "runs the gateway beside" not in said


def test_the_judging_words() -> None:
    assert is_gateway("gw", {"command": "python", "args": ["-m", "gateway", "serve"]})
    assert not is_gateway("gateway-docs", {"command": "npx", "args": ["docs-server"]})
    assert way_out("local", {"url": "http://127.0.0.1:8000/mcp"}) is None
    assert way_out("mail", {"command": "npx", "args": ["postmark-mcp"]}) == "sends mail or messages"
    assert servers_of("vscode", '{"servers": {"a": {"command": "x"}}}') == {"a": {"command": "x"}}
