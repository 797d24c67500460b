"""What else a host runs beside the gateway, for `gateway doctor`: the servers that give an agent a way out.

Private data, text from strangers and a way to send data out are together what every published exfiltration
through MCP used. The gateway gives the first two by design, under its gate and masks; the third is another
server in the same host: a fetcher or a browser, a shell, a mail sender, an HTTP client, or any remote server
(one reached by URL receives whatever the agent sends it). Doctor reads each host's config that `gateway
setup` knows, finds the hosts that start the gateway, and names the servers beside it that can reach out,
with what to do.

A server is judged by its name, its command and its arguments, against words that such servers carry in their
package or program names (`fetch`, `browser`, `playwright`, `shell`, `terminal`, `smtp`...), and by having a
URL. This is a warning, never a block: the person may have reasons, and a server the words miss is not called
safe, only not named.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

from gateway.commands.jsonc import JsoncError, loads
from gateway.commands.setup import HOSTS, config_file

# Each kind of way out, and the words in a server's name, command or arguments that say it.
_WAYS_OUT: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("fetches web pages", re.compile(r"fetch|firecrawl|crawl|scrap|web-?search|brave-search|tavily|exa-mcp|jina")),
    ("drives a browser", re.compile(r"browser|playwright|puppeteer|chrome|selenium|browserbase|stagehand")),
    ("runs shell commands", re.compile(r"shell|terminal|desktop-commander|\bexec\b|command-runner|bash|iterm")),
    ("sends mail or messages", re.compile(r"smtp|gmail|sendgrid|postmark|mailgun|resend|slack|discord|telegram"
                                          r"|twilio|whatsapp|outlook")),
    ("makes HTTP requests", re.compile(r"\bhttp\b|http-client|curl|requests|\bapi\b|openapi|postman|webhook")),
)


@frozen
class WayOut:
    """A server beside the gateway in a host, and how it can carry data out."""

    host: str
    config: Path
    server: str
    how: str


def servers_of(host: str, text: str) -> dict[str, Mapping[str, Any]]:
    """Every MCP server a host's config names (Claude Code's per-project servers too), by name."""
    if host == "codex":
        data: Any = tomllib.loads(text)
        found = data.get("mcp_servers", {}) if isinstance(data, Mapping) else {}
        return {str(k): v for k, v in found.items() if isinstance(v, Mapping)}
    data = loads(text)
    if not isinstance(data, Mapping):
        return {}
    key = "servers" if host == "vscode" else "mcpServers"
    found = dict(data.get(key, {})) if isinstance(data.get(key), Mapping) else {}
    if host == "claude-code" and isinstance(data.get("projects"), Mapping):
        for project in data["projects"].values():
            if isinstance(project, Mapping) and isinstance(project.get(key), Mapping):
                for name, entry in project[key].items():
                    found.setdefault(str(name), entry)
    return {str(k): v for k, v in found.items() if isinstance(v, Mapping)}


def is_gateway(name: str, entry: Mapping[str, Any]) -> bool:
    """Does this entry start this gateway (`gateway serve`, or `python -m gateway serve`)?"""
    words = _words(name, entry)
    return "serve" in words and ("gateway" in words or any(w.endswith("/gateway") for w in words))


def way_out(name: str, entry: Mapping[str, Any]) -> str | None:
    """How this server can carry data out of the host, or None when nothing in it says so."""
    url = entry.get("url") or entry.get("serverUrl") or entry.get("httpUrl")
    if isinstance(url, str) and re.match(r"https?://", url) and not re.match(
            r"https?://(localhost|127\.|\[::1\])", url):
        return "is a remote server (whatever the agent sends it leaves this computer)"
    text = " ".join(_words(name, entry)).lower()
    for how, pattern in _WAYS_OUT:
        if pattern.search(text):
            return how
    return None


def _words(name: str, entry: Mapping[str, Any]) -> list[str]:
    words = [name, str(entry.get("command", ""))]
    args = entry.get("args", [])
    if isinstance(args, list):
        words += [str(a) for a in args]
    return [w for w in words if w]


def ways_out(hosts: tuple[str, ...] = HOSTS) -> Iterator[WayOut | tuple[str, Path, str]]:
    """For each host whose config starts the gateway, each other server that can reach out (a `WayOut`); a
    config that cannot be read is given as (host, path, why)."""
    for host in hosts:
        scopes = ("user", "workspace") if host == "vscode" else ("user",)
        for scope in scopes:
            path = config_file(host, scope)
            try:
                text = path.read_text(encoding="utf-8")
            except OSError:
                continue
            try:
                servers = servers_of(host, text)
            except (JsoncError, tomllib.TOMLDecodeError, ValueError) as error:
                yield host, path, f"cannot be read ({error})"
                continue
            if not any(is_gateway(name, entry) for name, entry in servers.items()):
                continue
            for name, entry in servers.items():
                if is_gateway(name, entry):
                    continue
                how = way_out(name, entry)
                if how:
                    yield WayOut(host, path, name, how)
