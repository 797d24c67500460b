"""Which indexed messages the gate keeps back, worked out once per gate and index generation.

A message is described to the gate by its traits (`message_traits`), and the gate alone says which projects' routes
take it (`Gate.owners`): its paths (its file, its folder and its account's root), its people (the sender, proven
only when the account's own server authenticated it; for the person's own sent mail, its To and Cc recipients,
proven), its words (the masked subject, the masked text, the attachments' names), its account and folder, and the
projects it is tied to. A closed project's sender route takes a message from that sender whether or not it was
authenticated; an open project's only an authenticated one (the gate's rule). Then every message of a
conversation shares the owners of all of them: the conversation is the union over each message's Message-ID,
In-Reply-To and every References id (`maildirs.conversations`, as the spam plugin reads it), so a reply naming a
closed message in In-Reply-To alone is closed with it, and an open project's thread brings its replies along.

At a hundred thousand messages the gate is asked in parts, each distinct value once (`projects.placing`): the place
per folder, the people per distinct sender, the subject and attachment names per distinct value, and the text
only for the messages the FTS5 index finds for some subject route's words (each word a prefix: `ACME-2291` is
`"acme"* + "2291"*`), plus, while a closed project has subject routes, the messages whose masked words hold a mask
label (which may hide any route's words). What the parts say is kept per gate across index generations (new mail
does not make the gate read every route again for old mail); what is closed is worked out again per generation.

A route's words are found in the text as words begin: `2291` finds `ACME-2291` and `2291a`, never `x2291` (a
word the route starts inside of). The subject and the attachments' names are compared as the gate compares them
(the route anywhere in them).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import Factory, field, frozen
from maildirs.conversations import Conversations
from maildirs.subjects import _pattern, closed_by_hidden_subject, may_take  # noqa: F401 (shared; re-exported)

from gateway import Gate, GateMemo, Person, Traits
from gateway_mail.mail.accounts import Account
from gateway_mail.mail.parse import PASS
from gateway_mail.projects.placing import Placer


def _closed_json(verdicts: Verdicts) -> str:
    return json.dumps(sorted(verdicts.closed))


@frozen
class Verdicts:
    """What the gate keeps of one generation of the index (the index does not change within a generation)."""

    owners: dict[int, frozenset[str]]  # only messages with owners
    closed: frozenset[int]  # the ids the gate keeps back
    # The closed ids as the SQL conditions take them (a JSON array), written once, not once per call: sorting and
    # writing 1,800 ids cost 0.7 ms, and the same string object keeps its hash for the counts remembered by it.
    closed_json: str = field(init=False, eq=False, repr=False, default=Factory(_closed_json, takes_self=True))


_parts: GateMemo[dict] = GateMemo(dict, gates=4)
_verdicts: GateMemo[Verdicts] = GateMemo(gates=4)
_TOKEN = re.compile(r"[^\W_]+")
# Folders that hold the person's own sent mail (any part of the folder's name, case aside).
SENT_FOLDERS = {"sent", "sent mail", "sent messages", "sent items", "outbox"}


def is_sent(account: Account | None, folder: str, sender: str) -> bool:
    """Is this the person's own sent mail: in a Sent folder, or from one of the account's addresses?"""
    if any(part.lower() in SENT_FOLDERS for part in folder.split("/")):
        return True
    return account is not None and bool(sender) and account.owns_address(sender)


def people_of(account: Account | None, folder: str, sender: str, auth: str, recipients: str) -> tuple[Person, ...]:
    """The sender (proven when the account's server authenticated it) and, for sent mail, the recipients (proven)."""
    people = [Person(sender, proven=auth == PASS)] if sender else []
    if is_sent(account, folder, sender):
        people += [Person(address, proven=True) for address in recipients.split() if address]
    return tuple(people)


def names_of(attachments: str) -> tuple[str, ...]:
    try:
        return tuple(str(entry[0]) for entry in json.loads(attachments or "[]") if entry and entry[0])
    except (ValueError, TypeError, IndexError):
        return ()


def folder_paths(accounts: list[Account]) -> dict[tuple[str, str], str]:
    """Each (account, folder)'s directory."""
    from gateway_mail.mail import maildir

    return {(a.name, f.name): str(f.path) for a in accounts for f in maildir.folders(a.maildir)}


def message_traits(account: Account | None, folder_dir: str, row: Any, body: str,
                   tied: frozenset[str] = frozenset()) -> Traits:
    """A message's whole traits, as the gate is asked about them (in parts, by `_compute`)."""
    file = str(Path(folder_dir) / row["sub"] / row["filename"]) if folder_dir else ""
    root = str(account.maildir) if account is not None else ""
    return Traits(paths=tuple(p for p in (file, folder_dir, root) if p),
                  people=people_of(account, row["folder"], row["sender"], row["auth"], row["recipients"]),
                  words=(row["subject"], body, *names_of(row["attachments"])),
                  account=row["account"], folder=row["folder"], projects=tuple(sorted(tied)))


def verdicts(gate: Gate, connection: sqlite3.Connection, key: tuple[str, int],
             tied: Tied | None = None, accounts: list[Account] | None = None) -> Verdicts:
    """The owners and the closed ids; `key` is the index's path and generation, `tied` the messages' ties to
    projects (its version goes into what is remembered), `accounts` the accounts (roots, addresses)."""
    tied = tied or Tied()
    accounts = list(accounts or [])
    signature = tuple((a.name, str(a.maildir), tuple(a.addresses), a.authserv_id) for a in accounts)
    return _verdicts.get(gate, lambda: _compute(gate, connection, key[0], tied.projects, accounts),
                         key=(*key, tied.version, signature))


@frozen
class Tied:
    """Each tied message's projects by Message-ID, as the tie store holds them, and the store's version."""

    projects: Mapping[str, frozenset[str]] = field(factory=dict)
    version: Any = None


def fts_query(route: str) -> str | None:
    """The FTS5 query finding the messages whose text holds a route's words, each as a prefix; None: no word."""
    tokens = _TOKEN.findall(route.casefold())
    return " + ".join(f'"{t}"*' for t in tokens) if tokens else None


def text_candidates(connection: sqlite3.Connection, placer: Placer) -> set[int]:
    """The messages whose text a subject route may take: the FTS5 index asked per route, and every message
    holding a mask label while a closed project has subject routes."""
    found: set[int] = set()
    for route in placer.subjects:
        query = fts_query(route)
        if query is None:  # a route of symbols only: looked for in every text
            found.update(r[0] for r in connection.execute(
                "SELECT rowid FROM messages_fts WHERE instr(lower(body), ?) > 0", (route,)))
            continue
        found.update(r[0] for r in connection.execute(
            "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?", (f"body : ({query})",)))
    if placer.closed_subjects:
        found.update(r[0] for r in connection.execute("SELECT id FROM messages WHERE labels = 1"))
    return found


def _compute(gate: Gate, connection: sqlite3.Connection, path: str,
             tied: Mapping[str, frozenset[str]] | None = None, accounts: list[Account] | None = None) -> Verdicts:
    if not gate.projects:
        if gate.outside_projects:
            return Verdicts({}, frozenset())
        return Verdicts({}, frozenset(r[0] for r in connection.execute("SELECT id FROM messages")))
    by_name = {a.name: a for a in accounts or []}
    dirs = folder_paths(list(by_name.values()))
    placer = Placer(gate, _parts.of(gate, key=path))
    listing = connection.cursor()
    listing.row_factory = None  # plain tuples: this runs once per message
    rows = listing.execute(
        "SELECT id, account, folder, sub, filename, sender, subject, auth, recipients, attachments, message_id,"
        " refs FROM messages").fetchall()
    in_text = text_candidates(connection, placer) if placer.subjects else set()
    text_words = _text_words(connection, placer, in_text)
    own: dict[int, frozenset[str]] = {}
    places: dict[tuple[str, str], tuple[Account | None, str, frozenset[str], bool]] = {}
    senders: dict[tuple, frozenset[str]] = {}
    for (id_, account_name, folder, sub, filename, sender, subject, auth, recipients, attachments, message_id,
         _refs) in rows:
        place = places.get((account_name, folder))
        if place is None:  # once per folder: its owners, and whether the sent mail's recipients count
            account = by_name.get(account_name)
            folder_dir = dirs.get((account_name, folder), "")
            root = str(account.maildir) if account is not None else ""
            place = places[(account_name, folder)] = (
                account, folder_dir, placer.place(paths=(folder_dir, root), account=account_name, folder=folder),
                is_sent(account, folder, ""))
        account, folder_dir, found, sent_folder = place
        if folder_dir and placer.path_routes:
            found = found | placer.file(f"{folder_dir}/{sub}/{filename}", folder_dir)
        sent = sent_folder or (account is not None and bool(sender) and account.owns_address(sender))
        who = (account_name, sender, auth, recipients if sent else "")
        by_people = senders.get(who)
        if by_people is None:
            by_people = senders[who] = placer.people(people_of(account, folder, sender, auth, recipients))
        found = found | by_people
        words = text_words.get(id_)
        if words is None:  # not a candidate by its text: its subject and attachments' names alone
            words = placer.words((subject, *(names_of(attachments) if attachments != "[]" else ())))
        found = found | words
        if tied and message_id in tied:
            found = found | placer.named(tied[message_id])
        if found:
            own[id_] = found
    owners = _conversations(rows, own) if own else {}
    allowed: dict[frozenset[str], bool] = {}
    closed = []
    outside = gate.outside_projects
    for row in rows:
        mine = owners.get(row[0])
        if mine is None:
            if not outside:
                closed.append(row[0])
            continue
        if mine not in allowed:
            allowed[mine] = gate.allows(mine)
        if not allowed[mine]:
            closed.append(row[0])
    return Verdicts(owners, frozenset(closed))


def _text_words(connection: sqlite3.Connection, placer: Placer, ids: set[int]) -> dict[int, frozenset[str]]:
    """The owners of each candidate message's words with its text, asked once per message (and its file's state):
    the subject, the text and the attachments' names read in one pass."""
    found: dict[int, frozenset[str]] = {}
    if not ids:
        return found
    cursor = connection.cursor()
    cursor.row_factory = None
    rows = cursor.execute(
        "SELECT m.id, m.unique_name, m.size, m.mtime_ns, m.subject, m.attachments, f.body FROM messages m"
        " JOIN messages_fts f ON f.rowid = m.id WHERE m.id IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(ids)),))
    for id_, unique, size, mtime_ns, subject, attachments, body in rows:
        key = ("text", id_, unique, size, mtime_ns)
        known = placer.memo.get(("words", key))
        if known is None:
            names = names_of(attachments) if attachments != "[]" else ()
            known = placer.words((subject, body or "", *names), key=key)
        found[id_] = known
    return found


def _conversations(rows: list[tuple], own: dict[int, frozenset[str]]) -> dict[int, frozenset[str]]:
    """Every message's owners with those of its whole conversation (the union over every id it names)."""
    conversations = Conversations()
    ids_of = {}
    for row in rows:
        ids = tuple(row[11].split()) if row[11] else ((row[10],) if row[10] else ())
        ids_of[row[0]] = ids
        conversations.add(ids, own.get(row[0], frozenset()))
    owners = {}
    for row in rows:
        mine = own.get(row[0], frozenset()) | conversations.owners_of(ids_of[row[0]])
        if mine:
            owners[row[0]] = mine
    return owners
