"""The mail configuration as typed values: the accounts, the blocked senders and the admin windows.

`[plugins.mail]` is the one place the person writes their accounts; the mail plugin gets it as its settings, and
any other plugin (the spam plugin) gets the same table from the core (`ctx.plugin_settings("mail")`, the config the
core read, whichever file `--config` or `GATEWAY_CONFIG` named) and hands it to `accounts_in` and `blocked_in`.

The mail plugin's settings class (`gateway_mail.settings`) has the core check every account at load, each key
named at its place (`accounts[1].maildir`), so the mail plugin never reads a broken one. `accounts_of` checks the
entries again for a plugin that reads the table as written (the spam plugin, through `accounts_in`): it may run
while the mail plugin is off, and must not trust what nobody checked for it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, time, timedelta
from pathlib import Path
from typing import Any

from attrs import frozen

from gateway import ToolError

ACCOUNT_KEYS = ("name", "maildir", "addresses", "authserv_id", "drafts", "from_name")
_WINDOW = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})\s*$")


class ConfigProblem(ToolError):
    """The mail table says something that cannot be used: a sentence naming the key and what to write."""


@frozen
class Account:
    name: str
    maildir: Path
    addresses: tuple[str, ...] = ()
    authserv_id: str = ""
    drafts: str = "Drafts"
    from_name: str = ""  # the name a draft's From carries ("Pat Example"), as the person's mail program writes it

    def owns_address(self, address: str) -> bool:
        return address.lower() in {a.lower() for a in self.addresses}


def accounts_of(raw: Any, resolve: Any) -> list[Account]:
    """The accounts of `[plugins.mail] accounts`, each path resolved by `resolve` (the core's path rule)."""
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise ConfigProblem("[plugins.mail] accounts must be a list of tables { name, maildir, ... }")
    found: list[Account] = []
    for number, entry in enumerate(raw, start=1):
        where = f"[plugins.mail] accounts, entry #{number}"
        if not isinstance(entry, Mapping):
            raise ConfigProblem(f"{where} must be a table {{ name = ..., maildir = ... }}")
        unknown = sorted(set(entry) - set(ACCOUNT_KEYS))
        if unknown:
            raise ConfigProblem(f"{where}: unknown {'key' if len(unknown) == 1 else 'keys'} {', '.join(unknown)} (known: {', '.join(ACCOUNT_KEYS)})")
        name, maildir = entry.get("name"), entry.get("maildir")
        if not isinstance(name, str) or not name.strip():
            raise ConfigProblem(f"{where} needs a name (a string)")
        if not isinstance(maildir, str) or not maildir.strip():
            raise ConfigProblem(f"{where} ({name}) needs a maildir (a path)")
        addresses = entry.get("addresses", [])
        if not isinstance(addresses, list) or not all(isinstance(a, str) and "@" in a for a in addresses):
            raise ConfigProblem(f"{where} ({name}): addresses must be a list of mail addresses")
        authserv_id, drafts = entry.get("authserv_id", ""), entry.get("drafts", "Drafts")
        if not isinstance(authserv_id, str) or not isinstance(drafts, str) or not drafts.strip("/"):
            raise ConfigProblem(f"{where} ({name}): authserv_id and drafts must be strings")
        from_name = entry.get("from_name", "")
        if not isinstance(from_name, str) or any(ch in from_name for ch in "\r\n\x00<>"):
            raise ConfigProblem(f"{where} ({name}): from_name must be a name on one line, such as \"Pat Example\"")
        if any(a.name == name for a in found):
            raise ConfigProblem(f"{where}: the account name {name!r} is used twice")
        found.append(Account(name, Path(resolve(maildir)), tuple(addresses), authserv_id.strip().lower(),
                             drafts.strip("/"), from_name.strip()))
    return found


def windows_of(raw: Any) -> list[tuple[time, time]]:
    """`["09:00-10:00", ...]` as (start, end) times; a window whose end is before its start runs past midnight."""
    if not isinstance(raw, list):
        raise ConfigProblem('[plugins.mail] admin_windows must be a list like ["09:00-10:00"]')
    windows = []
    for value in raw:
        match = _WINDOW.match(value) if isinstance(value, str) else None
        numbers = [int(g) for g in match.groups()] if match else []
        if not match or numbers[0] > 23 or numbers[2] > 24 or numbers[1] > 59 or numbers[3] > 59:
            raise ConfigProblem(f'[plugins.mail] admin_windows: {value!r} is not a window like "09:00-10:00"')
        end = time(23, 59, 59) if numbers[2] == 24 else time(numbers[2], numbers[3])
        windows.append((time(numbers[0], numbers[1]), end))
    return windows


def in_window(windows: Sequence[tuple[time, time]], now: datetime) -> bool:
    if not windows:
        return True
    moment = now.time()
    return any(
        (start <= moment < end) if start <= end else (moment >= start or moment < end) for start, end in windows
    )


def next_opening(windows: Sequence[tuple[time, time]], now: datetime) -> datetime | None:
    """When the next admin window opens, after `now` (None when there are none)."""
    openings = []
    for start, _end in windows:
        moment = now.replace(hour=start.hour, minute=start.minute, second=0, microsecond=0)
        openings.append(moment if moment > now else moment + timedelta(days=1))
    return min(openings, default=None)


def sender_blocked(blocked: Sequence[str], sender: str) -> bool:
    """`pat@example.net` blocks that address; `@example.net` (or `example.net`) the domain and its subdomains."""
    sender = sender.strip().lower()
    host = sender.rpartition("@")[2].rstrip(".")
    for rule in blocked:
        rule = rule.strip().lower()
        if "@" in rule.lstrip("@"):
            if sender == rule:
                return True
        elif rule and (host == rule.lstrip("@").rstrip(".") or host.endswith("." + rule.lstrip("@").rstrip("."))):
            return True
    return False


def resolver(config_folder: Path) -> Any:
    """The core's path rule for account folders: `~` is the home, a relative path is taken from `config_folder`."""

    def resolve(value: str) -> Path:
        path = Path(value).expanduser()
        return path if path.is_absolute() else config_folder / path

    return resolve


def accounts_in(mail_table: Mapping[str, Any], config_folder: Path) -> list[Account]:
    """The accounts of a `[plugins.mail]` table as written (what `ctx.plugin_settings("mail")` gives another plugin).

    Relative maildirs are taken from `config_folder`, the gateway's config folder, as the mail plugin takes them.
    """
    return accounts_of(mail_table.get("accounts", []), resolver(config_folder))


def blocked_in(mail_table: Mapping[str, Any]) -> list[str]:
    """`[plugins.mail] blocked` of a table as written: the senders whose mail is only counted."""
    blocked = mail_table.get("blocked", [])
    return [b for b in blocked if isinstance(b, str)] if isinstance(blocked, list) else []
