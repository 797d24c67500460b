"""For `gateway setup --detect`: the `[plugins.mail]` table the person's own tools already imply.

Read, never run: mbsync's and offlineimap's configs (each account's Maildir root and login address), notmuch's
config (its database path, the person's addresses), mu's store (through `mu info store` when mu is installed),
vdirsyncer's storages, khal's calendars, todoman's `path` and `default_list` (its config is Python: read as a
syntax tree, never executed), and khard's address books. Each finding says which file it came from. Where two
tools disagree the first found wins (mbsync before offlineimap before notmuch before mu; khal before vdirsyncer
for calendars, todoman before vdirsyncer for tasks, khard before vdirsyncer for contacts), and the rest is said.
"""

from __future__ import annotations

import ast
import configparser
import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_MAX_CONFIG_BYTES = 1 << 20


def detect(home: Path | None = None, environ: dict[str, str] | None = None) -> tuple[dict[str, Any], list[str]]:
    """(settings for `[plugins.mail]`, the sentences saying where each came from)."""
    env = dict(os.environ if environ is None else environ)
    home = Path(home or env.get("HOME") or Path.home())
    config_home = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    found: list[str] = []
    accounts: list[dict[str, Any]] = []

    def add_accounts(new: Iterable[dict[str, Any]], tool: str) -> None:
        for account in new:
            root = _expand(account["maildir"], home)
            if any(_expand(a["maildir"], home) == root for a in accounts):
                found.append(f"{tool}: {account['maildir']} is already an account; skipped")
                continue
            name = account["name"]
            while any(a["name"] == name for a in accounts):
                name += "-2"
            accounts.append({**account, "name": name})
            found.append(f"{tool}: mail account {name} at {account['maildir']}")

    for path in (config_home / "isyncrc", home / ".mbsyncrc"):
        text = _read(path)
        if text is not None:
            add_accounts(mbsync_accounts(text), f"mbsync ({_show(path, home)})")
            break
    for path in (config_home / "offlineimap" / "config", home / ".offlineimaprc"):
        text = _read(path)
        if text is not None:
            add_accounts(offlineimap_accounts(text), f"offlineimap ({_show(path, home)})")
            break
    notmuch_file = Path(env["NOTMUCH_CONFIG"]) if env.get("NOTMUCH_CONFIG") else None
    for path in [p for p in (notmuch_file, config_home / "notmuch" / "default" / "config",
                             home / ".notmuch-config") if p]:
        text = _read(path)
        if text is None:
            continue
        root, addresses = notmuch_database(text, home)
        where = f"notmuch ({_show(path, home)})"
        if root and not any(_inside(_expand(a["maildir"], home), _expand(root, home)) for a in accounts):
            add_accounts([{"name": "mail", "maildir": root}], where)
        elif root:
            found.append(f"{where}: its database {root} holds the accounts found above")
        _give_addresses(accounts, addresses, home)
        break
    mu_root = mu_store(env)
    if mu_root and not any(_inside(_expand(a["maildir"], home), Path(mu_root)) for a in accounts):
        add_accounts([{"name": "mu", "maildir": _tilde(mu_root, home)}], "mu (mu info store)")

    settings: dict[str, Any] = {}
    if accounts:
        settings["accounts"] = accounts

    calendars = tasks = contacts = None
    text = _read(config_home / "khal" / "config")
    if text is not None:
        paths = configobj_paths(text, "calendars")
        calendars = _common_root(paths, home)
        if calendars:
            found.append(f"khal ({_show(config_home / 'khal' / 'config', home)}): calendars under {calendars}")
    todoman_file = config_home / "todoman" / "config.py"
    text = _read(todoman_file)
    if text is not None:
        values = python_constants(text)
        if isinstance(values.get("path"), str):
            tasks = _tilde(str(_expand(_strip_glob(values["path"]), home)), home)
            found.append(f"todoman ({_show(todoman_file, home)}): task lists under {tasks}")
        if isinstance(values.get("default_list"), str) and values["default_list"]:
            settings["default_list"] = values["default_list"]
            found.append(f"todoman ({_show(todoman_file, home)}): default list {values['default_list']}")
    text = _read(config_home / "khard" / "khard.conf")
    if text is not None:
        contacts = _common_root(configobj_paths(text, "addressbooks"), home)
        if contacts:
            found.append(f"khard ({_show(config_home / 'khard' / 'khard.conf', home)}): address books under {contacts}")
    for path in (config_home / "vdirsyncer" / "config", home / ".vdirsyncer" / "config"):
        text = _read(path)
        if text is None:
            continue
        where = f"vdirsyncer ({_show(path, home)})"
        for name, root, extension in vdirsyncer_storages(text):
            shown = _tilde(str(_expand(root, home)), home)
            if extension == ".vcf":
                if contacts is None:
                    contacts = shown
                    found.append(f"{where}: address books under {shown} (storage {name})")
            elif re.search(r"task|todo", name + root, re.IGNORECASE):
                if tasks is None:
                    tasks = shown
                    found.append(f"{where}: task lists under {shown} (storage {name})")
            elif calendars is None:
                calendars = shown
                found.append(f"{where}: calendars under {shown} (storage {name})")
        break
    for key, value in (("calendars", calendars), ("tasks", tasks), ("contacts", contacts)):
        if value:
            settings[key] = value
    if not settings:
        found.append("mail: no mbsync, offlineimap, notmuch, mu, vdirsyncer, khal, todoman or khard config found")
    return settings, found


def mbsync_accounts(text: str) -> list[dict[str, Any]]:
    """Each MaildirStore of an mbsync config as an account: named after the Channel that syncs it (else the
    store, less a `-local` ending), its root the store's `Path` (else its `Inbox`'s folder), its address the
    IMAP `User` when that is an address."""
    sections: list[tuple[str, str, dict[str, str]]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        if not words:
            continue
        key, value = words[0], " ".join(words[1:])
        lowered = key.lower()
        if lowered in ("imapaccount", "imapstore", "maildirstore", "channel", "group"):
            sections.append((lowered, value, {}))
        elif sections:
            sections[-1][2][lowered] = value
    users = {name: fields.get("user", "") for kind, name, fields in sections if kind == "imapaccount"}
    store_account = {name: fields.get("account", "") for kind, name, fields in sections if kind == "imapstore"}
    channel_of: dict[str, str] = {}
    far_of: dict[str, str] = {}
    for kind, name, fields in sections:
        if kind == "channel":
            near = fields.get("near") or fields.get("slave") or ""
            far = fields.get("far") or fields.get("master") or ""
            store = near.strip(":").split(":")[0]
            if store:
                channel_of.setdefault(store, name)
                far_of.setdefault(store, far.strip(":").split(":")[0])
    accounts = []
    for kind, name, fields in sections:
        if kind != "maildirstore":
            continue
        root = fields.get("path") or ""
        if not root and fields.get("inbox"):
            root = str(Path(fields["inbox"]).parent)
        if not root:
            continue
        account: dict[str, Any] = {"name": channel_of.get(name) or re.sub(r"[-_.]local$", "", name),
                                   "maildir": root.rstrip("/") or "/"}
        user = users.get(store_account.get(far_of.get(name, ""), ""), "")
        if "@" in user:
            account["addresses"] = [user]
        accounts.append(account)
    return accounts


def offlineimap_accounts(text: str) -> list[dict[str, Any]]:
    """Each `[Account X]` of an offlineimap config whose local repository is a Maildir."""
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    accounts = []
    for section in parser.sections():
        if not section.lower().startswith("account "):
            continue
        name = section[len("account "):].strip()
        local = parser.get(section, "localrepository", fallback="").strip()
        remote = parser.get(section, "remoterepository", fallback="").strip()
        repository = f"Repository {local}"
        if not parser.has_section(repository):
            continue
        if parser.get(repository, "type", fallback="").strip().lower() != "maildir":
            continue
        root = parser.get(repository, "localfolders", fallback="").strip()
        if not root:
            continue
        account: dict[str, Any] = {"name": name, "maildir": root.rstrip("/")}
        user = parser.get(f"Repository {remote}", "remoteuser", fallback="") if remote else ""
        if "@" in user:
            account["addresses"] = [user.strip()]
        accounts.append(account)
    return accounts


def notmuch_database(text: str, home: Path) -> tuple[str, list[str]]:
    """(the mail root notmuch indexes, the person's addresses) from a notmuch config."""
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return "", []
    root = parser.get("database", "mail_root", fallback="") or parser.get("database", "path", fallback="")
    root = root.strip()
    if root and not root.startswith(("/", "~")):
        root = str(home / root)  # notmuch reads a relative path from the home folder
    addresses = [parser.get("user", "primary_email", fallback="").strip()]
    addresses += [a.strip() for a in parser.get("user", "other_email", fallback="").split(";")]
    return _tilde(root, home) if root else "", [a for a in addresses if "@" in a]


def mu_store(env: dict[str, str]) -> str:
    """mu's Maildir root, from `mu info store` when mu is installed (its store names no config file)."""
    program = shutil.which("mu", path=env.get("PATH"))
    if program is None:
        return ""
    try:
        out = subprocess.run([program, "info", "store"], capture_output=True, text=True, timeout=5, env=env,
                             stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0] == "maildir":
            return cells[1]
    return ""


def configobj_paths(text: str, section: str) -> list[str]:
    """The `path` of each `[[name]]` under `[section]` in a configobj file (khal, khard)."""
    paths, inside = [], False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("[") and not stripped.startswith("[["):
            inside = stripped.strip("[] ").lower() == section
            continue
        if inside:
            match = re.match(r"^path\s*=\s*(.+?)\s*$", stripped)
            if match:
                paths.append(match.group(1).strip("'\""))
    return paths


def python_constants(text: str) -> dict[str, Any]:
    """The top-level `name = constant` assignments of a Python config (todoman's), read without running it."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # a config built to break a parser fails alone
        return {}
    values: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                values[node.targets[0].id] = ast.literal_eval(node.value)
            except (ValueError, TypeError, RecursionError, MemoryError):
                continue
    return values


def vdirsyncer_storages(text: str) -> list[tuple[str, str, str]]:
    """(name, path, file extension) of each filesystem storage of a vdirsyncer config (values are JSON)."""
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    storages = []
    for section in parser.sections():
        if not section.startswith("storage "):
            continue

        def value(key: str, section: str = section) -> Any:
            raw = parser.get(section, key, fallback="null")
            try:
                return json.loads(raw)
            except json.JSONDecodeError:
                return raw.strip().strip("\"'")

        if value("type") != "filesystem" or not isinstance(value("path"), str):
            continue
        storages.append((section[len("storage "):].strip(), value("path").rstrip("/"), str(value("fileext") or "")))
    return storages


def _give_addresses(accounts: list[dict[str, Any]], addresses: list[str], home: Path) -> None:
    if len(accounts) == 1 and addresses:
        have = accounts[0].setdefault("addresses", [])
        have += [a for a in addresses if a not in have]


def _read(path: Path) -> str | None:
    try:
        with path.open("rb") as handle:
            raw = handle.read(_MAX_CONFIG_BYTES)
    except OSError:
        return None
    return raw.decode("utf-8", errors="replace")


def _expand(value: str, home: Path) -> Path:
    if value == "~" or value.startswith("~/"):
        return Path(str(home) + value[1:])
    return Path(os.path.expandvars(value))


def _tilde(value: str, home: Path) -> str:
    """A path written with `~` for the home folder, as a person writes it in a config."""
    text = str(value).rstrip("/") or "/"
    prefix = str(home).rstrip("/")
    if text == prefix:
        return "~"
    return "~" + text[len(prefix):] if text.startswith(prefix + "/") else text


def _show(path: Path, home: Path) -> str:
    return _tilde(str(path), home)


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _strip_glob(value: str) -> str:
    """A glob's fixed part (`~/.local/share/calendars/*` is `~/.local/share/calendars`)."""
    parts = []
    for part in value.split("/"):
        if re.search(r"[*?\[]", part):
            break
        parts.append(part)
    return "/".join(parts).rstrip("/") or value


def _common_root(paths: list[str], home: Path) -> str | None:
    """The folder holding every collection (a collection's parent; the globbed folder of a discovered one)."""
    parents = []
    for raw in paths:
        if re.search(r"[*?\[]", raw):
            parents.append(_expand(_strip_glob(raw), home))
        else:
            parents.append(_expand(raw.rstrip("/"), home).parent)
    if not parents:
        return None
    common = Path(os.path.commonpath([str(p) for p in parents]))
    return _tilde(str(common), home)
