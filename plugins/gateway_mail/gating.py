"""Which indexed messages the gate lets through, worked out once per gate and index generation.

A message belongs to the projects whose routes take its folder, its subject, or its sender when the account's
own server authenticated it (forged or unauthenticated mail never reaches a project by its sender's address or
domain); and to every project of the rest of its conversation: the owners of a thread are shared by all its
messages, so a closed conversation is closed whole, and an open project's thread brings its replies along.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict

from gateway import Gate, GateMemo
from gateway_mail.parse import PASS

_memo: GateMemo[dict[int, frozenset[str]]] = GateMemo(gates=4)


def owners_of_row(gate: Gate, sender: str, subject: str, folder: str, auth: str) -> frozenset[str]:
    return gate.owners_of(sender=sender if auth == PASS and sender else None, subject=subject or None,
                          folder=folder or None)


def owners(gate: Gate, connection: sqlite3.Connection, key: tuple[str, int]) -> dict[int, frozenset[str]]:
    """Each message's owners (its thread's), by row id; `key` is the index's path and generation."""
    return _memo.get(gate, lambda: _compute(gate, connection), key=key)


def _compute(gate: Gate, connection: sqlite3.Connection) -> dict[int, frozenset[str]]:
    rows = connection.execute("SELECT id, sender, subject, folder, auth, thread FROM messages").fetchall()
    if not gate.projects:
        return {row[0]: frozenset() for row in rows}
    traits: dict[tuple[str, str, str, str], frozenset[str]] = {}
    by_thread: dict[str, set[str]] = defaultdict(set)
    for _id, sender, subject, folder, auth, thread in rows:
        trait = (sender, subject, folder, auth)
        if trait not in traits:
            traits[trait] = owners_of_row(gate, sender, subject, folder, auth)
        by_thread[thread] |= traits[trait]
    return {row[0]: frozenset(by_thread[row[5]]) for row in rows}
