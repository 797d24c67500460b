"""The AI shield's shared part: which mail is addressed to a shielded address, and what the mail index says of it.

`[plugins.mail] shielded` names public addresses (a press address, a contact form's) whose mail is judged hostile or
not before any tool reads it. The mail plugin judges and keeps each verdict in its index, in the table `shield`
(`SCHEMA`, below); any other reader of the person's mail that shows envelopes (the spam plugin) asks that table
through `Verdicts`, and shows a message addressed to a shielded address only when the shield judged it not hostile.
Otherwise its sender is "someone at" their domain (`someone_at`) and nothing else of it is given.

A message is addressed to a shielded address when one of To, Cc, Delivered-To or X-Original-To names it: To and Cc
for what the sender wrote, Delivered-To and X-Original-To for what the receiving server added (mail sent to the
address as a blind copy carries it only there). A sender can add those headers too, which only gets their mail
judged: it never takes mail out of the shield's sight, since the server's own are still there.
"""

from __future__ import annotations

import email.parser
import email.policy
import email.utils
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from gateway import ToolError
from maildirs.conversations import KeptPerFile

ADDRESSED_HEADERS = ("to", "cc", "delivered-to", "x-original-to")
HOSTILE, OK, UNJUDGED = "hostile", "ok", ""
INDEX_FILE = "mail-index.sqlite"  # the mail plugin's index, in its cache folder (<cache>/plugins/mail)
_MOST_ADDRESSES = 200  # of one message: a header naming more is read up to here

# The table the mail plugin keeps in its index: one row per indexed message, keyed as the index keys its rows
# (account, folder, the file's name without its flags), with the file's size and time when it was looked at (a
# row whose file changed since is looked at and judged again). `addressees` holds the message's To, Cc,
# Delivered-To and X-Original-To addresses, lower-cased, each between spaces (" a@x b@y "), so that a change of
# `shielded` needs no file read again; `addressed` is 1 when one of them is shielded now (worked out again from
# `addressees` when `shielded` changes). `digest` is the SHA-256 of an addressed message's bytes: a verdict goes
# with the bytes it was given on (a message moved to another folder), never with a Message-ID, which a sender
# chooses and may reuse. `verdict` is "hostile", "ok", or "" (not judged); `judge` says who gave it
# ("command", "labels": the model of the person's labels, "person": the person's own label of this message);
# `reason` why it is not judged yet ("" when it is, or when no judge was tried); `tried` when a judge last tried.
SCHEMA = """
CREATE TABLE IF NOT EXISTS shield (
    account TEXT NOT NULL, folder TEXT NOT NULL, unique_name TEXT NOT NULL, size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL, message_id TEXT NOT NULL, addressees TEXT NOT NULL, addressed INTEGER NOT NULL,
    digest TEXT NOT NULL, verdict TEXT NOT NULL, judge TEXT NOT NULL, reason TEXT NOT NULL, tried REAL NOT NULL,
    PRIMARY KEY (account, folder, unique_name)
);
CREATE INDEX IF NOT EXISTS shield_by_message_id ON shield (message_id);
CREATE INDEX IF NOT EXISTS shield_by_digest ON shield (digest) WHERE digest != '';
CREATE INDEX IF NOT EXISTS shield_waiting ON shield (account) WHERE addressed = 1 AND verdict = '';
CREATE INDEX IF NOT EXISTS shield_addressed ON shield (account) WHERE addressed = 1;
"""
SCHEMA_VERSION = "3"


def shielded_in(mail_table: Mapping[str, Any]) -> frozenset[str]:
    """`[plugins.mail] shielded` of a table as written: the shielded addresses, lower-cased (empty: no shield).

    Raises ToolError naming the key when it is not a list of addresses (a shield misread is no shield at all)."""
    raw = mail_table.get("shielded", [])
    if not isinstance(raw, list) or not all(isinstance(a, str) for a in raw):
        raise ToolError('[plugins.mail] shielded must be a list of addresses, e.g. ["press@example.org"]: ask the '
                        "person to fix the config")
    found = set()
    for value in raw:
        address = email.utils.parseaddr(value)[1].strip().lower()
        if "@" not in address or " " in address:
            raise ToolError(f"[plugins.mail] shielded holds {value!r}, which is not one address: ask the person to "
                            "fix the config")
        found.add(address)
    return frozenset(found)


def addressees_in(headers: Any) -> tuple[str, ...]:
    """The To, Cc, Delivered-To and X-Original-To addresses of parsed headers, lower-cased, each once."""
    values = [" ".join(str(v).split()) for name in ADDRESSED_HEADERS for v in headers.get_all(name) or []]
    try:
        pairs = email.utils.getaddresses(values)
    except Exception:  # noqa: BLE001 - a stranger's header: read word by word below
        pairs = []
    found = [a.strip().lower() for _n, a in pairs if "@" in a]
    # A value the address parser reads wrong (a stray quote, a group) still names its addresses as words.
    found += [w.strip("<>,;\"'").lower() for v in values for w in v.split() if "@" in w]
    return tuple(dict.fromkeys(a for a in found if a))[:_MOST_ADDRESSES]


# A message file's addressees (`addressees_in`), from its first 64 KiB; None when it cannot be read (kept per file).
addressees_of: KeptPerFile[tuple[str, ...]] = KeptPerFile(addressees_in)


def is_addressed(addressees: Iterable[str] | str, shielded: frozenset[str]) -> bool:
    """Does a message with these addressees (a sequence, or the table's " a b " text) go to a shielded address?"""
    if not shielded:
        return False
    found = addressees.split() if isinstance(addressees, str) else addressees
    return any(a in shielded for a in found)


def someone_at(address: str) -> str:
    """What a list shows for the sender of hostile mail to a shielded address: "someone at example.net"."""
    domain = address.rpartition("@")[2].strip().strip(">").lower()
    domain = "".join(c for c in domain if c.isalnum() or c in ".-")[:100]
    return f"someone at {domain or 'an unknown domain'}"


def index_near(plugin_cache: Path) -> Path:
    """The mail plugin's index, from any plugin's own cache folder (`<cache>/plugins/<name>`)."""
    return Path(plugin_cache).parent / "mail" / INDEX_FILE


class Verdicts:
    """The shield's verdicts as the mail index holds them, read-only, for a reader other than the mail plugin.

    `shown(...)` says whether a message addressed to a shielded address may be shown: only when a verdict "ok"
    is recorded for its file (account, folder, unique name, same size and time) or, when its file is not known,
    for every indexed copy of its Message-ID. No index, no table, no row: not shown (the shield has not judged it).
    """

    def __init__(self, index: Path) -> None:
        self._connection: sqlite3.Connection | None = None
        try:
            if index.is_file():
                self._connection = sqlite3.connect(f"file:{quote(str(index.resolve()))}?mode=ro", uri=True,
                                                   timeout=5, check_same_thread=False)
                self._connection.execute("SELECT 1 FROM shield LIMIT 1")
        except sqlite3.Error:
            self.close()

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __enter__(self) -> Verdicts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def of_file(self, account: str, folder: str, unique_name: str, size: int, mtime_ns: int) -> str | None:
        """The verdict recorded for this file as it is now ("hostile", "ok", "" not judged); None: none recorded."""
        if self._connection is None:
            return None
        try:
            row = self._connection.execute(
                "SELECT verdict FROM shield WHERE account = ? AND folder = ? AND unique_name = ? AND size = ? "
                "AND mtime_ns = ?", (account, folder, unique_name, size, mtime_ns)).fetchone()
        except sqlite3.Error:
            return None
        return None if row is None else str(row[0])

    def of_message_id(self, message_id: str, shielded: frozenset[str]) -> str | None:
        """The verdict for a Message-ID over every indexed copy addressed to a shielded address: "ok" only when all
        are judged ok; "hostile" when one is; "" when one is not judged; "ok" when no copy is addressed to a
        shielded address; None when the index holds no copy."""
        if self._connection is None or not message_id:
            return None
        try:
            rows = self._connection.execute("SELECT addressees, verdict FROM shield WHERE message_id = ?",
                                            (message_id,)).fetchall()
        except sqlite3.Error:
            return None
        if not rows:
            return None
        verdicts = {str(v) for a, v in rows if is_addressed(str(a), shielded)}
        if HOSTILE in verdicts:
            return HOSTILE
        return UNJUDGED if UNJUDGED in verdicts else OK
