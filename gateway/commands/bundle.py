"""The MCP Bundle (``.mcpb``) of the gateway: one file that Claude Desktop (and other MCPB hosts) installs in one
click, and the launcher the bundle runs, which maps the bundle's user settings to a config.

The bundle is a zip holding ``manifest.json`` (MCPB manifest 0.4, server type ``uv``: the host makes an
environment from the bundle's ``pyproject.toml``, which asks for ``mcp-gateway[all]`` at this very version, from
PyPI), that ``pyproject.toml``, and ``server/main.py``, which calls :func:`prepare` and serves.

The user settings the host asks for when installing (a Maildir root, the tasks, calendars and contacts vdirs, a
notes folder) reach the launcher as environment variables. The launcher writes them as a config of its own,
``bundle.toml`` in the gateway's config folder (beside ``config.toml``, so the projects manifest is the same),
rewriting it only when a setting changed, and serves stdio with it. A setting left empty is left out (the
plugin's default). The Maildir root is either one account's folder (a Maildir, or a folder of Maildirs with an
INBOX, as mbsync keeps an account: one account, named after the folder) or a folder of such account folders (one
account each, named after its folder), as found each time the host starts the gateway.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomli_w

from gateway import __version__
from gateway.api.context import Folders

DISTRIBUTION = "mcp-gateway"
BUNDLE_CONFIG = "bundle.toml"
MANIFEST_VERSION = "0.4"
# The user settings: (key, environment variable, title, what it is). All folders, all optional.
SETTINGS = (
    ("maildir", "GATEWAY_BUNDLE_MAILDIR", "Maildir root",
     "One mail account's folder (its INBOX, Archive... as mbsync or offlineimap keep them), or a folder of such "
     "account folders, one per account."),
    ("tasks", "GATEWAY_BUNDLE_TASKS", "Tasks folder (vdir)",
     "The tasks vdir: one folder per list, one .ics file per task (as vdirsyncer and todoman keep them)."),
    ("calendars", "GATEWAY_BUNDLE_CALENDARS", "Calendars folder (vdir)",
     "The calendars vdir: one folder per calendar, one .ics file per event."),
    ("contacts", "GATEWAY_BUNDLE_CONTACTS", "Contacts folder (vdir)",
     "The contacts vdir: .vcf files, as khard and vdirsyncer keep them."),
    ("notes", "GATEWAY_BUNDLE_NOTES", "Notes folder", "A folder of Markdown notes (subfolders allowed)."),
)
LAUNCHER = '''"""Runs the gateway for an MCP Bundle host: its settings as a config, then the server on stdio (gateway.commands.bundle)."""

from gateway.engine import startup

startup.hold()  # as the gateway command does: the collector waits until serving has started

from gateway.commands.bundle import prepare  # noqa: E402
from gateway.commands.cli import main  # noqa: E402

main(["--config", str(prepare()), "serve"], prog_name="gateway")
'''


def _is_maildir(folder: Path) -> bool:
    return (folder / "cur").is_dir() and (folder / "new").is_dir()


def _subfolders(folder: Path) -> list[Path]:
    try:
        return sorted(child for child in folder.iterdir() if child.is_dir() and not child.name.startswith("."))
    except OSError:
        return []


def _is_account(folder: Path) -> bool:
    """A mail account's folder: a Maildir itself (Maildir++), or a folder of Maildirs with an INBOX among them (as
    mbsync and offlineimap keep an account: INBOX, Archive, Drafts...)."""
    return _is_maildir(folder) or any(child.name.lower() == "inbox" and _is_maildir(child)
                                      for child in _subfolders(folder))


def accounts_under(root: Path) -> list[dict[str, str]]:
    """The mail accounts a Maildir root holds: the root itself when it is one account's folder, else each account
    folder directly in it, named after its folder."""
    if _is_account(root):
        return [{"name": root.name or "mail", "maildir": str(root)}]
    return [{"name": child.name, "maildir": str(child)} for child in _subfolders(root) if _is_account(child)]


def config_for(settings: Mapping[str, str]) -> dict[str, Any]:
    """The config the bundle's settings mean: the mail plugin's table (accounts, vdirs, notes); no plugin list,
    so every plugin installed with the bundle is on."""
    mail: dict[str, Any] = {}
    root = (settings.get("maildir") or "").strip()
    if root:
        mail["accounts"] = accounts_under(Path(root).expanduser())
    for key in ("tasks", "calendars", "contacts", "notes"):
        value = (settings.get(key) or "").strip()
        if value:
            mail[key] = value
    return {"plugins": {"mail": mail}} if mail else {}


def settings_from(environ: Mapping[str, str]) -> dict[str, str]:
    """The bundle's settings as the host passes them (environment variables named in SETTINGS). A value the host
    left as its own placeholder (``${user_config.KEY}``, when the person set nothing) counts as unset."""
    found = {}
    for key, variable, _title, _what in SETTINGS:
        value = environ.get(variable, "").strip()
        if value and not value.startswith("${"):
            found[key] = value
    return found


def write_config(path: Path, config: Mapping[str, Any]) -> bool:
    """Write `config` as TOML at `path` (readable by the person alone), whole or not at all; only when it differs
    from what is there. True when written."""
    text = "# Written by the gateway's MCP Bundle from the settings its host asked for; changed there.\n"
    text += tomli_w.dumps(dict(config))
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return True


def prepare(environ: Mapping[str, str] | None = None, folders: Folders | None = None) -> Path:
    """What the bundle's launcher does before serving: the host's settings written as ``bundle.toml`` in the
    gateway's config folder; returns its path, for ``gateway --config PATH serve``."""
    folders = folders or Folders.from_environment()
    path = folders.config / BUNDLE_CONFIG
    write_config(path, config_for(settings_from(os.environ if environ is None else environ)))
    return path


def manifest(version: str = __version__) -> dict[str, Any]:
    """The bundle's manifest.json (MCPB manifest 0.4)."""
    arguments = ["run", "--directory", "${__dirname}", "server/main.py"]
    return {
        "manifest_version": MANIFEST_VERSION,
        "name": "mcp-gateway",
        "display_name": "gateway",
        "version": version,
        "description": "Your own data (agent sessions, cron jobs, activity, mail, tasks, agenda, contacts, notes) "
                       "for AI agents, behind one consent gate, privacy masks and an audit log.",
        "long_description": (
            "One MCP server for what you keep on your own computer. Projects are closed to agents until you open "
            "them (in the projects manifest beside the config); codes, card and account numbers are masked; every "
            "call is written to an audit log you can read with `gateway audit`. Nothing leaves your computer but "
            "what the host asks for and the gate lets through."
        ),
        "author": {"name": "The gateway's authors"},
        "license": "MIT",
        "keywords": ["mail", "maildir", "calendar", "tasks", "notes", "privacy", "audit"],
        "server": {
            "type": "uv",
            "entry_point": "server/main.py",
            "mcp_config": {
                "command": "uv",
                "args": arguments,
                "env": {variable: f"${{user_config.{key}}}" for key, variable, _title, _what in SETTINGS},
            },
        },
        "tools_generated": True,
        "prompts_generated": True,
        "compatibility": {"platforms": ["darwin", "linux"], "runtimes": {"python": ">=3.11"}},
        "user_config": {
            key: {"type": "directory", "title": title, "description": what, "required": False}
            for key, _variable, title, what in SETTINGS
        },
    }


def pyproject(version: str = __version__) -> str:
    """The bundle's pyproject.toml: the environment the host makes (the gateway with every built-in plugin)."""
    return tomli_w.dumps({
        "project": {"name": "mcp-gateway-bundle", "version": version, "requires-python": ">=3.11",
                    "dependencies": [f"{DISTRIBUTION}[all]=={version}"]},
        "tool": {"uv": {"package": False}},
    })


def build(out: Path, version: str = __version__) -> Path:
    """Write the bundle at `out` (whole or not at all) and return its path."""
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    os.close(handle)
    try:
        with zipfile.ZipFile(temporary, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
            bundle.writestr("manifest.json", json.dumps(manifest(version), indent=2, ensure_ascii=False) + "\n")
            bundle.writestr("pyproject.toml", pyproject(version))
            bundle.writestr("server/main.py", LAUNCHER)
        os.replace(temporary, out)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return out
