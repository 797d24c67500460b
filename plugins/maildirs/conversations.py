"""Conversations: which messages belong together, by their Message-ID, In-Reply-To and References.

The mail plugin closes a whole conversation when one of its messages belongs to a closed project (its index keys a
thread by the first message it refers to). Any other reader that shows envelopes must close the same messages, so
this module gives the same grouping without the mail index: every id a message names (its own, In-Reply-To, every
References entry) is joined into one conversation. That joins at least what the mail plugin's key joins (its key is
always one of those ids), and a broken chain (a References list missing its first entry) is still joined through
the ids it does name: a reader using it closes at least what the mail plugin closes.

`Conversations` gathers messages (`add`), then answers the owners a conversation shares (`owners_of`). Headers are
read from the first 64 KiB of a file only, and kept per file (path, size, time) for the process's life.
"""

from __future__ import annotations

import email.header
import email.message
import email.parser
import email.policy
import email.utils
import os
import re
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Generic, TypeVar

from attrs import frozen

from maildirs.authentication import passed_by

_ID = re.compile(r"<([^<>\s]+)>")
_HEAD = 64 * 1024
_KEPT = 200_000  # header facts kept per process; beyond it, forgotten whole (read again when next asked)
_RESULTS, _RECIPIENTS = 20, 100  # Authentication-Results read, recipients kept, per message
T = TypeVar("T")


def ids_in(value: str | None) -> list[str]:
    """The message ids a header names: each `<id>`, else the bare words holding an `@` (as the mail plugin reads)."""
    text = str(value or "")
    return _ID.findall(text) or [word for word in text.split() if "@" in word]


def ids_of_headers(message_id: str | None, in_reply_to: str | None, references: str | None) -> tuple[str, ...]:
    """Every id a message names: its own first, then In-Reply-To's, then References' (duplicates once)."""
    found: list[str] = []
    for value in (message_id, in_reply_to, references):
        for one in ids_in(value):
            if one not in found:
                found.append(one)
    return tuple(found)


@frozen
class Head:
    """What a message file's headers say of it, for placing it: the ids it names, its Subject and From as
    written (decoded), the From address alone (lower-cased), the servers whose Authentication-Results pass it
    (`maildirs.authentication.passed_by`), and its To and Cc addresses (lower-cased, at most 100)."""

    ids: tuple[str, ...]
    subject: str
    sender: str
    address: str = ""
    passed_by: tuple[str, ...] = ()
    recipients: tuple[str, ...] = ()


def head_of(path: Path) -> tuple[tuple[str, ...], str, str] | None:
    """(ids, raw Subject, raw From) of a message file, from its headers alone; None when it cannot be read."""
    head = facts_of(path)
    return None if head is None else (head.ids, head.subject, head.sender)


class KeptPerFile(Generic[T]):
    """What `read` makes of a message file's headers (its first 64 KiB), kept per file (path, size, time) for the
    process's life: Maildir files are never changed in place. None when the file cannot be read. Past `limit`
    files, everything kept is forgotten at once (read again when next asked)."""

    def __init__(self, read: Callable[[email.message.Message], T], limit: int = _KEPT) -> None:
        self._read = read
        self._limit = limit
        self._kept: dict[tuple[str, int, int], T] = {}
        self._lock = threading.Lock()

    def __call__(self, path: Path) -> T | None:
        try:
            stat = os.stat(path)
            key = (str(path), stat.st_size, stat.st_mtime_ns)
        except OSError:
            return None
        found = self._kept.get(key)
        if found is not None:
            return found
        try:
            with open(path, "rb") as handle:
                head = handle.read(_HEAD).replace(b"\r\n", b"\n").partition(b"\n\n")[0]
        except OSError:
            return None
        found = self._read(email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(head))
        with self._lock:
            if len(self._kept) >= self._limit:
                self._kept.clear()
            self._kept[key] = found
        return found


def _facts(headers: email.message.Message) -> Head:
    sender = _text(headers, "from")
    address = email.utils.parseaddr(sender)[1].lower()
    results = [" ".join(str(v).split()) for v in headers.get_all("authentication-results") or []][:_RESULTS]
    values = [" ".join(str(v).split()) for name in ("to", "cc") for v in headers.get_all(name) or []]
    try:
        recipients = tuple(dict.fromkeys(a.strip().lower() for _n, a in email.utils.getaddresses(values) if "@" in a))
    except Exception:  # noqa: BLE001 - a stranger's header: whatever it holds, it names no one
        recipients = ()
    return Head(ids_of_headers(*(_text(headers, name) for name in ("message-id", "in-reply-to", "references"))),
                 _text(headers, "subject"), sender, address, passed_by(results, address) if address else (),
                 recipients[:_RECIPIENTS])


# A message file's `Head`, from its first 64 KiB; None when it cannot be read (kept per file, see KeptPerFile).
facts_of: KeptPerFile[Head] = KeptPerFile(_facts)


def _text(headers: email.message.Message, name: str) -> str:
    values = " ".join(" ".join(str(v).split()) for v in headers.get_all(name) or [])
    try:
        return str(email.header.make_header(email.header.decode_header(values)))
    except (ValueError, LookupError, UnicodeError):  # a broken encoded word: read as written
        return values


class Conversations:
    """Messages joined by the ids they name; each conversation's owners are the union of its messages' owners."""

    def __init__(self) -> None:
        self._parent: dict[str, str] = {}
        self._owners: dict[str, frozenset[str]] = {}
        self._members: dict[str, list[str]] = {}  # each conversation's ids, by its root

    def _root(self, node: str) -> str:
        parent = self._parent.setdefault(node, node)
        while parent != node:
            grand = self._parent[parent]
            self._parent[node] = grand  # halve the path as it is walked
            node, parent = parent, grand
        return node

    def _join(self, first: str, second: str) -> None:
        a, b = self._root(first), self._root(second)
        if a != b:
            if len(self._members[a]) < len(self._members[b]):
                a, b = b, a  # the smaller conversation joins the bigger: each id moves a few times at most
            self._parent[b] = a
            self._members[a] += self._members.pop(b)
            self._owners[a] = self._owners.get(a, frozenset()) | self._owners.pop(b, frozenset())

    def add(self, ids: Iterable[str], owners: frozenset[str]) -> None:
        """One message: the ids it names, and the projects it belongs to by its own traits."""
        nodes = [f"id:{one}" for one in ids]
        if not nodes:
            return  # a message naming no id is a conversation of its own: its owners are its own
        for node in nodes:
            if node not in self._parent:
                self._parent[node] = node
                self._members[node] = [node]
        for other in nodes[1:]:
            self._join(nodes[0], other)
        if owners:
            root = self._root(nodes[0])
            self._owners[root] = self._owners.get(root, frozenset()) | owners

    def owners_of(self, ids: Iterable[str]) -> frozenset[str]:
        """The owners shared by the conversations of these ids (a message's own owners are added by the caller)."""
        found: frozenset[str] = frozenset()
        for one in ids:
            node = f"id:{one}"
            if node in self._parent:
                found |= self._owners.get(self._root(node), frozenset())
        return found

    def ids_with(self, ids: Iterable[str]) -> set[str]:
        """Every id of the conversations of these ids (the ids themselves too, known or not): what a reader asks
        the person's ties about, since a tie on one message closes its whole conversation."""
        found = set(ids)
        roots = {self._root(f"id:{one}") for one in found if f"id:{one}" in self._parent}
        for root in roots:
            found.update(node[3:] for node in self._members[root])
        return found
