"""`gateway setup --host NAME`: the entry that makes a host start `gateway serve`, printed or merged in."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

HOSTS = ("claude-code", "claude-desktop", "cursor", "vscode", "codex", "gemini")


class SetupError(Exception):
    """The host's config cannot be merged into safely; the message says why and what to do."""


def command() -> tuple[str, list[str]]:
    """How a host starts the gateway: the installed script if on PATH, else this Python with -m gateway."""
    found = shutil.which("gateway")
    if found:
        return str(Path(found).resolve()), ["serve"]
    return sys.executable, ["-m", "gateway", "serve"]


def config_file(host: str) -> Path:
    home = Path.home()
    if host == "claude-desktop":
        if sys.platform == "darwin":
            return home / "Library/Application Support/Claude/claude_desktop_config.json"
        if sys.platform == "win32":
            return Path(os.environ.get("APPDATA", home)) / "Claude/claude_desktop_config.json"
        return Path(os.environ.get("XDG_CONFIG_HOME", home / ".config")) / "Claude/claude_desktop_config.json"
    return {
        "claude-code": home / ".claude.json",
        "cursor": home / ".cursor/mcp.json",
        "vscode": Path.cwd() / ".vscode/mcp.json",
        "codex": Path(os.environ.get("CODEX_HOME", home / ".codex")) / "config.toml",
        "gemini": home / ".gemini/settings.json",
    }[host]


def _server(host: str) -> dict[str, Any]:
    program, args = command()
    if host == "vscode":
        return {"type": "stdio", "command": program, "args": args}
    return {"command": program, "args": args}


def entry_for(host: str, name: str) -> str:
    """The text to paste, with where it goes."""
    program, args = command()
    if host == "claude-code":
        return f"claude mcp add --scope user {name} -- {program} {' '.join(args)}"
    if host == "codex":
        body = tomli_w.dumps({"mcp_servers": {name: _server(host)}})
        return f"# in {config_file(host)}\n{body}"
    key = "servers" if host == "vscode" else "mcpServers"
    return f"// in {config_file(host)}\n" + json.dumps({key: {name: _server(host)}}, indent=2)


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o777)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def merge_into(host: str, name: str) -> Path:
    """Add (or replace) our entry in the host's config, keeping everything else; never clobber a broken file."""
    path = config_file(host)
    raw = path.read_text(encoding="utf-8") if path.exists() else ""
    if host == "codex":
        try:
            data = tomllib.loads(raw) if raw.strip() else {}
        except tomllib.TOMLDecodeError as error:
            raise SetupError(f"{path} is not valid TOML ({error}); fix it first, nothing was changed") from error
        data.setdefault("mcp_servers", {})[name] = _server(host)
        _atomic_write(path, tomli_w.dumps(data))
        return path
    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError as error:
        raise SetupError(f"{path} is not valid JSON ({error}); fix it first, nothing was changed") from error
    if not isinstance(data, dict):
        raise SetupError(f"{path} does not hold a JSON object; nothing was changed")
    key = "servers" if host == "vscode" else "mcpServers"
    servers = data.setdefault(key, {})
    if not isinstance(servers, dict):
        raise SetupError(f"{path}: {key} is not an object; nothing was changed")
    servers[name] = _server(host)
    _atomic_write(path, json.dumps(data, indent=2) + "\n")
    return path
