"""The people the person has written to, and their latest mail: what an agent's spam label must never flip.

The person's own addresses are their accounts' `addresses` (`[plugins.mail] accounts`). A correspondent is an
address found as a recipient (To, Cc, Bcc) of a message in a Sent folder (a folder whose last name is Sent, Sent
Items, Sent Messages or Sent Mail, compared without case) or of a message From one of the person's addresses,
wherever it is; the person's own addresses are never correspondents. Headers are read from the first 64 KiB of a
file (maildirs.head_of, kept per file for the process's life; the recipients of the person's own mail kept here
the same way). An agent's spam label is tried on the correspondents' newest messages and on the envelope of
each one's next message (`probe`): refused when it would make any of them less ham than it was.
"""

from __future__ import annotations

import email.parser
import email.policy
import email.utils
import heapq
import os
import threading
from collections.abc import Callable
from pathlib import Path

from attrs import define, field
from maildirs import Account, folders, head_of, messages

from gateway_spam.tokens import tokens

SENT_NAMES = frozenset({"sent", "sent items", "sent messages", "sent mail"})
PER_CORRESPONDENT = 3  # the newest messages of each correspondent that a spam label is tried against
MOST_WATCHED = 300  # and at most so many in all (the newest)
MOST_PROBES = 2_000  # correspondents whose next message is tried (by its envelope), the first found
_HEAD = 64 * 1024
_KEPT = 50_000
_recipients: dict[tuple[str, int, int], frozenset[str]] = {}
_lock = threading.Lock()


def own_addresses(accounts: list[Account]) -> frozenset[str]:
    return frozenset(a.lower() for account in accounts for a in account.addresses)


def is_sent(folder_name: str) -> bool:
    return folder_name.rsplit("/", 1)[-1].strip().lower() in SENT_NAMES


def address_of(value: str) -> str:
    return email.utils.parseaddr(value)[1].strip().lower()


def recipients_of(path: Path) -> frozenset[str]:
    """The To, Cc and Bcc addresses of a message file, from its headers alone (empty when it cannot be read)."""
    try:
        stat = path.stat()
        key = (str(path), stat.st_size, stat.st_mtime_ns)
    except OSError:
        return frozenset()
    found = _recipients.get(key)
    if found is not None:
        return found
    try:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD).replace(b"\r\n", b"\n").partition(b"\n\n")[0]
        headers = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(head)
        values = [str(v) for name in ("to", "cc", "bcc") for v in headers.get_all(name) or []]
        found = frozenset(a.strip().lower() for _name, a in email.utils.getaddresses(values) if "@" in a)
    except Exception:  # noqa: BLE001 - a stranger's file: whatever it holds, it names no one
        found = frozenset()
    with _lock:
        if len(_recipients) >= _KEPT:
            _recipients.clear()
        _recipients[key] = found
    return found


def _delivered(entry: os.DirEntry[str]) -> float:
    """A Maildir file's delivery time: its name's leading number (the Maildir rule), else its modification time."""
    head = entry.name.split(".", 1)[0]
    if head.isdigit():
        return float(head)
    try:
        return entry.stat(follow_symlinks=False).st_mtime
    except OSError:
        return 0.0


def probe(address: str, to: str) -> frozenset[str]:
    """The tokens any next message from `address` carries, whatever its words: its sender, its Message-ID's
    domain, its recipient. A correspondent who has not written yet (the lawyer answering for the first time) is
    judged by these alone, so a label that makes them spammy flips that first answer."""
    domain = address.rpartition("@")[2]
    raw = f"From: {address}\nTo: {to}\nMessage-ID: <probe@{domain}>\n\n".encode()
    return frozenset(tokens(raw))


@define
class Correspondents:
    """Who the person has written to, the newest messages each of them sent (not in a spam folder), and for each
    (up to MOST_PROBES) the envelope of a next message."""

    addresses: frozenset[str] = frozenset()
    watched: list[Path] = field(factory=list)
    probes: list[frozenset[str]] = field(factory=list)

    def __contains__(self, address: str) -> bool:
        return address.strip().lower() in self.addresses


def correspondents(accounts: list[Account], is_spam_folder: Callable[[str], bool],
                   check: Callable[[], None] = lambda: None) -> Correspondents:
    """Every account's folders read once (headers only): the correspondents and the messages to try a label on.

    `check` is called every few hundred files (the call's deadline).
    """
    own = own_addresses(accounts)
    written_to: set[str] = set()
    by_sender: dict[str, list[tuple[float, str]]] = {}
    number = 0
    for account in accounts:
        for folder in folders(account.maildir):
            sent, spam = is_sent(folder.name), is_spam_folder(folder.name)
            for entry in messages(folder.path):
                number += 1
                if number % 500 == 0:
                    check()
                path = Path(entry.path)
                head = head_of(path)
                if head is None:
                    continue
                sender = address_of(head[2])
                if sent or (sender and sender in own):
                    written_to |= recipients_of(path)
                elif sender and not spam:
                    newest = by_sender.setdefault(sender, [])
                    item = (_delivered(entry), entry.path)
                    if len(newest) < PER_CORRESPONDENT:
                        heapq.heappush(newest, item)
                    else:
                        heapq.heappushpop(newest, item)
    written_to -= own
    kept = [item for sender, items in by_sender.items() if sender in written_to for item in items]
    to = min(own) if own else ""
    return Correspondents(frozenset(written_to), [Path(p) for _when, p in heapq.nlargest(MOST_WATCHED, kept)],
                          [probe(address, to) for address in sorted(written_to)[:MOST_PROBES]])
