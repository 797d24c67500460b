"""Which indexed messages the gate keeps back, worked out once per gate and index generation.

A message belongs to the projects whose routes take its folder, its subject, or its sender when the account's
own server authenticated it (forged or unauthenticated mail never reaches a project by its sender's address or
domain), and to the projects it is tied to (a tie `mid:<Message-ID>` to `sioul:project/<id>`, `ties.py`); and to
every project of the rest of its conversation: the owners of a thread are shared by all its messages, so a closed
conversation is closed whole, and an open project's thread brings its replies along.

What the routes say of one message's traits is kept per gate across index generations (new mail does not make
the gate read every route again for old mail); what is closed is worked out again per generation, in one pass.

Subject routes are matched against what the person wrote, the real subject, without the real subject ever being
read: the index holds the masked one, where each mask label (`[code]`, `[link]`...) stands for text the agent
must not learn. A closed project's route that may match once a label is read as the text it could hide (a code:
any run of digits and separators; anything else: any text) closes the message; an open project's route must
match the masked subject itself. So every message whose real subject a closed project's route takes is kept, and
what is kept depends on the masked subject only: counts cannot tell an agent the digits behind a label. (That
matching is `maildirs.subjects`, shared with the spam plugin.)
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from attrs import field, frozen
from maildirs.subjects import _pattern, closed_by_hidden_subject, may_take  # noqa: F401 (shared; re-exported)

from gateway import Gate, GateMemo
from gateway_mail.mail.parse import PASS

Trait = tuple[str, str, str, str]


@frozen
class Verdicts:
    owners: dict[int, frozenset[str]]  # only messages with owners
    closed: frozenset[int]  # the ids the gate keeps back


_traits: GateMemo[dict[Trait, frozenset[str]]] = GateMemo(dict, gates=4)
_verdicts: GateMemo[Verdicts] = GateMemo(gates=4)


def owners_of_row(gate: Gate, sender: str, subject: str, folder: str, auth: str) -> frozenset[str]:
    owners = gate.owners_of(sender=sender if auth == PASS and sender else None, subject=subject or None,
                            folder=folder or None)
    return owners | closed_by_hidden_subject(gate, subject, owners)


def verdicts(gate: Gate, connection: sqlite3.Connection, key: tuple[str, int],
             tied: Tied | None = None) -> Verdicts:
    """The owners and the closed ids; `key` is the index's path and generation, `tied` the messages' ties to
    projects (its version goes into what is remembered)."""
    tied = tied or Tied()
    return _verdicts.get(gate, lambda: _compute(gate, connection, key[0], tied.projects),
                         key=(*key, tied.version))


@frozen
class Tied:
    """Each tied message's projects by Message-ID, as the tie store holds them, and the store's version."""

    projects: Mapping[str, frozenset[str]] = field(factory=dict)
    version: Any = None


def _compute(gate: Gate, connection: sqlite3.Connection, path: str,
             tied: Mapping[str, frozenset[str]] | None = None) -> Verdicts:
    if not gate.projects:
        if gate.outside_projects:
            return Verdicts({}, frozenset())
        return Verdicts({}, frozenset(r[0] for r in connection.execute("SELECT id FROM messages")))
    known = _traits.of(gate, key=path)
    rows = connection.execute(
        "SELECT id, sender, subject, folder, auth, thread, message_id FROM messages").fetchall()
    projects = {project.id for project in gate.projects}  # a tie to an id the manifest does not name owns nothing
    by_thread: dict[str, frozenset[str]] = defaultdict(frozenset)
    for _id, sender, subject, folder, auth, thread, message_id in rows:
        trait = (sender, subject, folder, auth)
        found = known.get(trait)
        if found is None:
            found = known[trait] = owners_of_row(gate, sender, subject, folder, auth)
        if tied and message_id in tied:
            found = found | (tied[message_id] & projects)
        if found:
            by_thread[thread] = by_thread[thread] | found
    owners = {row[0]: by_thread[row[5]] for row in rows if by_thread.get(row[5])}
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
