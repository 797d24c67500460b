"""`gateway setup --host NAME`: the entry that makes a host start `gateway serve`, printed or merged in."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomli_w

HOSTS = ("claude-code", "claude-desktop", "cursor", "vscode", "codex", "gemini")


class SetupError(Exception):
    """The host's config cannot be merged into safely; the message says why and what to do."""


def command(config: Path | None = None, profile: str = "") -> tuple[str, list[str]]:
    """How a host starts the gateway: the installed script if on PATH, else this Python with -m gateway.

    `config`: the config named on this command line (``--config``), which the host's gateway must read too;
    `profile`: the `[profiles.NAME]` that host is given (``serve --profile NAME``).
    """
    serve = ["--config", str(config.expanduser().absolute()), "serve"] if config else ["serve"]
    if profile:
        serve += ["--profile", profile]
    found = shutil.which("gateway")
    if found:
        return str(Path(found).resolve()), serve
    return sys.executable, ["-m", "gateway", *serve]


SCOPES = ("user", "workspace")


def config_file(host: str, scope: str = "user") -> Path:
    """The host's config file; for VS Code, the user's (every window) or this folder's workspace file."""
    home = Path.home()
    if host == "vscode":
        if scope == "workspace":
            return Path.cwd() / ".vscode/mcp.json"
        if sys.platform == "darwin":
            return home / "Library/Application Support/Code/User/mcp.json"
        if sys.platform == "win32":
            return Path(os.environ.get("APPDATA", home)) / "Code/User/mcp.json"
        return Path(os.environ.get("XDG_CONFIG_HOME", home / ".config")) / "Code/User/mcp.json"
    if host == "claude-desktop":
        if sys.platform == "darwin":
            return home / "Library/Application Support/Claude/claude_desktop_config.json"
        if sys.platform == "win32":
            return Path(os.environ.get("APPDATA", home)) / "Claude/claude_desktop_config.json"
        return Path(os.environ.get("XDG_CONFIG_HOME", home / ".config")) / "Claude/claude_desktop_config.json"
    return {
        "claude-code": home / ".claude.json",
        "cursor": home / ".cursor/mcp.json",
        "codex": Path(os.environ.get("CODEX_HOME", home / ".codex")) / "config.toml",
        "gemini": home / ".gemini/settings.json",
    }[host]


def _server(host: str, config: Path | None = None, profile: str = "") -> dict[str, Any]:
    program, args = command(config, profile)
    if host == "vscode":
        return {"type": "stdio", "command": program, "args": args}
    return {"command": program, "args": args}


def entry_for(host: str, name: str, scope: str = "user", config: Path | None = None, profile: str = "") -> str:
    """The text to paste, with where it goes."""
    program, args = command(config, profile)
    if host == "claude-code":
        return f"claude mcp add --scope user {name} -- {program} {' '.join(args)}"
    if host == "codex":
        body = tomli_w.dumps({"mcp_servers": {name: _server(host, config, profile)}})
        return f"# in {config_file(host, scope)}\n{body}"
    key = "servers" if host == "vscode" else "mcpServers"
    return f"// in {config_file(host, scope)}\n" + json.dumps({key: {name: _server(host, config, profile)}}, indent=2)


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


def merge_into(host: str, name: str, scope: str = "user", config: Path | None = None, profile: str = "") -> Path:
    """Add (or replace) our entry in the host's config, keeping every other byte; never clobber a broken file.

    JSON configs may hold comments and trailing commas (VS Code's do): the entry is spliced in place, and
    the file is written only when it reads back as before plus our entry. Codex's TOML goes through tomlkit,
    which keeps comments and layout.
    """
    path = config_file(host, scope)
    raw = path.read_text(encoding="utf-8") if path.exists() else ""
    if host == "codex":
        import tomlkit
        from tomlkit.exceptions import TOMLKitError

        try:
            document = tomlkit.parse(raw)
        except TOMLKitError as error:
            raise SetupError(f"{path} is not valid TOML ({error}); fix it first, nothing was changed") from error
        servers = document.get("mcp_servers")
        if servers is None:
            servers = tomlkit.table(is_super_table=True)
            document["mcp_servers"] = servers
        elif not isinstance(servers, dict):
            raise SetupError(f"{path}: mcp_servers is not a table; nothing was changed")
        entry = tomlkit.table()
        entry.update(_server(host, config, profile))
        servers[name] = entry
        _atomic_write(path, tomlkit.dumps(document))
        return path
    from gateway.commands.jsonc import JsoncError, set_member

    key = "servers" if host == "vscode" else "mcpServers"
    try:
        text = set_member(raw, [key, name], _server(host, config, profile))
    except JsoncError as error:
        raise SetupError(
            f"{path} cannot be merged into safely ({error}); nothing was changed. Fix it, or paste this entry "
            f"by hand:\n{entry_for(host, name, scope, config, profile)}"
        ) from error
    _atomic_write(path, text)
    return path


def starter_config(built_in: list[str], others: list[str]) -> str:
    """A first config.toml: the built-in plugins on; the others installed (the example plugin...) off, by name."""
    listed = ", ".join(json.dumps(name) for name in built_in)
    lines = [
        "# The gateway's config, first written by `gateway setup`; yours to change (README: Configuration).",
        "",
        "[gateway]",
        "# The plugins on, in this order. A plugin not named here is off: remove a name to turn that plugin off.",
        f"plugins = [{listed}]",
    ]
    if others:
        lines.append(f"# Installed too, and off until named above: {', '.join(others)}.")
    example = built_in[0] if built_in else "sessions"
    lines += [
        "",
        "# To hide some tools of a plugin and keep the rest:",
        f"# [plugins.{example}]",
        '# disabled_tools = ["a_tool_name"]    # `gateway plugins` lists each plugin\'s tools',
        "",
    ]
    return "\n".join(lines)


def write_starter_config(path: Path, text: str) -> bool:
    """Write `text` at `path` if nothing is there; an existing config is never touched. True when written."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    return True


def merged_detection(raw: str, detected: Mapping[str, Mapping[str, Any]], built_in: list[str]) -> tuple[str, list[str]]:
    """The config's text with what `setup --detect` found merged in, and a sentence per key left as it was.

    Comments and layout are kept (tomlkit). A key the person already set is never changed: when its value
    differs from what was found, it is said. Each plugin that found something is added to ``[gateway]
    plugins`` when that list exists and lacks it; a new config names the built-in plugins.
    """
    import tomlkit

    document = tomlkit.parse(raw)
    said: list[str] = []
    gateway_table = document.get("gateway")
    if gateway_table is None:
        gateway_table = tomlkit.table()
        gateway_table["plugins"] = list(built_in)
        document["gateway"] = gateway_table
    plugins = gateway_table.get("plugins") if isinstance(gateway_table, dict) else None
    plugins_table = document.get("plugins")
    if plugins_table is None:
        plugins_table = tomlkit.table(is_super_table=True)
        document["plugins"] = plugins_table
    for name, settings in detected.items():
        if not settings:
            continue
        if plugins is not None and name not in plugins:
            plugins.append(name)
            said.append(f"[gateway] plugins: {name} added")
        table = plugins_table.get(name)
        if table is None:
            table = tomlkit.table()
            plugins_table[name] = table
        for key, value in settings.items():
            if key in table:
                mine = table[key].unwrap() if hasattr(table[key], "unwrap") else table[key]
                if mine != value:
                    said.append(f"[plugins.{name}] {key}: yours kept ({key} found: {_short(value)})")
                continue
            table[key] = _toml_value(value)
    return tomlkit.dumps(document), said


def _toml_value(value: Any) -> Any:
    """Lists of tables as an array of inline tables, one per line (how the READMEs write accounts)."""
    import tomlkit

    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        array = tomlkit.array()
        for entry in value:
            inline = tomlkit.inline_table()
            inline.update(entry)
            array.append(inline)
        array.multiline(True)
        return array
    return value


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 120 else text[:117] + "..."
