"""What every tool does first: read the accounts from the settings, open the index and refresh what changed."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from attrs import frozen

from gateway import Context
from gateway_mail.mail import gating, index, maildir, shield
from gateway_mail.mail.accounts import Account, accounts_of, windows_of
from gateway_mail.mail.parse import FORGED
from gateway_mail.noted import Noted, noted_in
from gateway_mail.projects import belonging

# Folders whose mail the Porch does not call new or waiting: the person's own, and what is set aside.
OWN_FOLDERS = {"sent", "sent mail", "sent messages", "sent items", "drafts", "trash", "deleted", "deleted items",
               "deleted messages", "bin", "outbox", "archive", "all mail"}
JUNK_FOLDERS = {"junk", "spam", "junk e-mail", "junk email", "bulk mail"}


def resolver(config_folder: Path) -> Any:
    def resolve(value: str) -> Path:
        path = Path(value).expanduser()
        return path if path.is_absolute() else config_folder / path

    return resolve


def config_folder_of(plugin_config: Path) -> Path:
    # A plugin's config folder is <gateway config>/plugins/<name>: paths are taken from the gateway's.
    return plugin_config.parent.parent


# The accounts last read, with what they were read from: the settings' `accounts` value itself (the core hands every
# call of one configuration the same values, which a plugin never changes), the config folder and the home that
# `~` means. Reading and checking them again cost a call more than its no-change look at the Maildirs.
_accounts_read: dict[tuple[int, str, str | None], tuple[Any, list[Account]]] = {}


def accounts(settings: Any, plugin_config: Path) -> list[Account]:
    raw = settings.get("accounts", [])
    key = (id(raw), str(plugin_config), os.environ.get("HOME"))
    kept = _accounts_read.get(key)
    if kept is not None and kept[0] is raw:
        return list(kept[1])
    found = accounts_of(raw, resolver(config_folder_of(plugin_config)))
    if len(_accounts_read) >= 8:
        _accounts_read.clear()
    _accounts_read[key] = (raw, found)  # `raw` kept alive with it, so that its id names no other value meanwhile
    return list(found)


@frozen
class Mail:
    """One call's view of the mail: the accounts, the index (refreshed), what the gate keeps, who is blocked.

    Three kinds of message are never shown, each counted apart: kept by the gate (`verdicts.closed`, the SQL
    condition `CLOSED`), sent by a blocked sender (`BLOCKED`), kept by the AI shield (`shielded`, `SHIELDED`:
    hostile mail to a shielded address, or such mail not judged yet). A message of two kinds is counted as the
    first of them.
    """

    ctx: Context
    accounts: list[Account]
    connection: sqlite3.Connection
    verdicts: gating.Verdicts
    blocked_senders: frozenset[str]
    # The accounts whose Maildir is not there now (a typo, a disk not mounted): said, never taken as empty. Looked
    # at once per call, when the index is refreshed.
    missing: tuple[Account, ...] = ()
    shielded: shield.Hidden = shield.NONE
    shield_on: bool = False
    # The index file and its generation as this call read them: what was worked out from the index is kept by it.
    generation: tuple[str, int] = ("", 0)

    def account(self, name: str) -> Account | None:
        return next((a for a in self.accounts if a.name == name), None)

    def owners(self, row: Any) -> frozenset[str]:
        return self.verdicts.owners.get(row["id"], frozenset())

    def allowed(self, row: Any) -> bool:
        return row["id"] not in self.verdicts.closed

    def is_blocked(self, row: Any) -> bool:
        return row["sender"] in self.blocked_senders

    @property
    def closed_json(self) -> str:
        return self.verdicts.closed_json

    # No blocked sender and no shielded message, the usual case, are the empty list written without json.dumps (the
    # same "[]" it writes), which search_mail then leaves out of its statements.
    @property
    def blocked_json(self) -> str:
        return json.dumps(sorted(self.blocked_senders)) if self.blocked_senders else "[]"

    @property
    def shield_json(self) -> str:
        return shield.hidden_json(self.shielded) if self.shielded.hostile or self.shielded.unjudged else "[]"

    def is_shielded(self, row: Any) -> bool:
        return row["id"] in self.shielded.ids


CLOSED = "m.id IN (SELECT value FROM json_each(?))"
BLOCKED = "m.sender IN (SELECT value FROM json_each(?))"
SHIELDED = "m.id IN (SELECT value FROM json_each(?))"


_blocked_memo: dict[tuple[str, int, tuple[str, ...]], frozenset[str]] = {}


def blocked_senders(connection: sqlite3.Connection, key: tuple[str, int], blocked: tuple[str, ...]) -> frozenset[str]:
    """The senders in the index whose mail is only counted (worked out per index generation and blocked list)."""
    from gateway_mail.mail.accounts import sender_blocked

    if not blocked:
        return frozenset()
    slot = (*key, blocked)
    found = _blocked_memo.get(slot)
    if found is None:
        senders = [r[0] for r in connection.execute("SELECT DISTINCT sender FROM messages")]
        found = frozenset(s for s in senders if sender_blocked(blocked, s))
        if len(_blocked_memo) > 8:
            _blocked_memo.clear()
        _blocked_memo[slot] = found
    return found


def set_aside(row: Any) -> bool:
    return row["auth"] == FORGED or row["folder"].rpartition("/")[2].lower() in JUNK_FOLDERS


def own_folder(folder: str) -> bool:
    return any(part.lower() in OWN_FOLDERS or part.lower() == "[gmail]" for part in folder.split("/"))


# Per index file: the kernel's notifications for the accounts' folders, and the accounts they were settled for.
_watched: dict[str, list[Any]] = {}


def _refreshed(ctx: Context, connection: sqlite3.Connection, found: list[Account], key: str) -> bool:
    """The index brought up to the Maildirs before a call reads it: skipped whole (not one stat) when no folder of
    any account had an event since the last call's refresh, for the same accounts; else the refresh's stat pass.
    True when the stat pass ran (the index may have been written).

    What is watched: each account's root, every folder, the folders on the way to them, and each folder's `new`
    and `cur` (a message delivered, moved, flagged or removed). A folder made inside a folder that holds no mail
    folder yet is seen by the stat pass `Changes` forces every few seconds; no notifications: a stat pass a call.
    """
    from gateway import Changes, merged, toward

    signature = tuple((a.name, str(a.maildir), a.authserv_id) for a in found)
    entry = _watched.get(key)
    if entry is None:
        entry = _watched[key] = [Changes(), None]
    changes = entry[0]
    if entry[1] == signature and changes.quiet():
        return False
    entry[1] = None
    token = changes.begin()  # before the stat pass: a message written during it leaves an event for the next call
    read = itertools.count(1)  # messages looked at: the call's progress while a first index runs
    walked: dict[str, list[maildir.Folder]] = {}
    index.refresh(connection, found, check=ctx.deadline.check, walked=walked,
                  progress=lambda _step: ctx.progress(next(read), None, "Indexing the mail"))
    folders: list[tuple[str, frozenset[str] | None]] = []
    for account in found:
        listed = walked.get(account.name)
        if listed is None:  # the root was not there when the refresh looked
            folders.append(toward(account.maildir))  # a disk mounted later, a folder made later
            continue
        root = str(account.maildir)
        folders.append((root, None))
        for folder in listed:
            here = folder.path
            while str(here) != root and str(here).startswith(root):
                folders.append((str(here), None))
                here = here.parent
            folders += [(str(folder.path / sub), None) for sub in ("new", "cur")]
    if changes.settle(token, merged(folders)):
        entry[1] = signature
    return True


# Per index file: its look (the file's inode and the index's generation), which file notifications stand in for
# while the index and its write-ahead log are quiet: a commit writes the log, a checkpoint the file, a file replaced
# or removed is an event in their folder.
_index_noted: dict[str, Noted] = {}


def _index_look(path: Path, connection: sqlite3.Connection) -> tuple[int, int]:
    """The inode of the index file and its generation, as this thread's connection reads it; the inode -1 (not to
    be kept) when the file at `path` is not the one the connection reads (replaced since it was opened)."""
    generation = index.generation(connection)
    try:
        inode = os.stat(path).st_ino
    except OSError:
        inode = -1
    return (inode if inode == index.thread_inode(path) else -1), generation


# The index file and its write-ahead log, by the cache folder they are in: two paths made once, not on every call
# (making them was a tenth of a search's own time when it finds nothing).
_files: dict[Path, tuple[Path, Path]] = {}


def _index_files(cache: Path) -> tuple[Path, Path]:
    found = _files.get(cache)
    if found is None:
        path = index.index_path(cache)
        if len(_files) >= 8:
            _files.clear()
        found = _files[cache] = (path, Path(f"{path}-wal"))
    return found


@contextlib.contextmanager
def opened(ctx: Context) -> Iterator[Mail]:
    found = accounts(ctx.settings, ctx.folders.config)
    windows_of(ctx.settings.get("admin_windows", []))  # a wrong window is said on every call, not only the Porch's
    shielding = shield.shield_of(ctx.settings, ctx.folders.data)
    path, wal = _index_files(ctx.folders.cache)
    noted = noted_in(_index_noted, (path, wal))
    seen = noted.seen()  # (inode, generation) as the last look found them, when no event came for the files since
    connection = index.thread_connection(path, None if seen is None else seen[0])
    with ctx.interruptible(connection):
        # Looked at again when not trusted, or when the call's own refresh ran (it may have written the index): a
        # write by anyone else after the look above is heard by the next call, as `Changes` hears any write.
        if _refreshed(ctx, connection, found, str(path)) or seen is None:
            seen = noted.look(lambda: _index_look(path, connection), trusted=lambda look: look[0] != -1)
        key = (str(path), seen[1])
        verdicts = gating.verdicts(ctx.gate, connection, key, belonging.mail_ties(ctx.folders.data), found)
        blocked = blocked_senders(connection, key, tuple(ctx.settings.get("blocked", [])))
        kept = shield.NONE
        if shielding.on:
            share = min(shield.CALL_SECONDS, max(ctx.deadline.left() / 4, 0.0))
            if shield.update(connection, found, shielding, until=time.monotonic() + share, commands=False):
                shield.judge_in_background(path, found, shielding, index.connect)
            kept = shield.hidden(connection, key, shielding)
        yield Mail(ctx, found, connection, verdicts, blocked, tuple(a for a in found if not a.maildir.is_dir()),
                   kept, shielding.on, key)



def unreadable_said(ctx: Context) -> dict[str, str]:
    """Per account, the messages the index holds read in part, said for `gateway doctor` ("" for none). From the
    index as the last call or refresh left it: nothing is indexed here."""
    path = index.index_path(ctx.folders.cache)
    if not path.exists():
        return {}
    said: dict[str, str] = {}
    connection = index.connect(path)
    try:
        for account in accounts(ctx.settings, ctx.folders.config):
            total, first = index.unreadable(connection, account.name)
            if total:
                files = "; ".join(f"{file} ({why})" for file, why in first) + ("; ..." if total > len(first) else "")
                said[account.name] = (
                    f"{total} message{'s' if total != 1 else ''} read in part (past a bound of the mail plugin's on "
                    "size, lines, MIME parts, nesting, header fields or time, or one the mail parser fails on; "
                    f"each is read again when its file changes): {files}")
    finally:
        connection.close()
    return said
