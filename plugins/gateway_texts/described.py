"""Texts and calls described for the person: `traits_of` (for `gateway access why texts:conversation/…`) and
`census` (for `gateway access list`), with the same traits the tools give the gate.

A conversation is described by its people (each number, proven when the person wrote to it or keeps it on a card,
and the cards' addresses), the projects whose `client` names one of its cards, and the card's address book; a
call by its number alone. With cards in several address books, the traits are merged into one (the first book
named): the routes that take any of them are the ones `access why` names.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from gateway import Context, PluginHost, Traits

PREFIX = "texts:conversation/"


def merged(traits: list[Traits]) -> Traits:
    """One conversation's traits from those the tools give the gate (one per address book of its cards)."""
    if len(traits) == 1:
        return traits[0]
    return Traits(people=tuple(dict.fromkeys(p for t in traits for p in t.people)),
                  projects=tuple(dict.fromkeys(p for t in traits for p in t.projects)),
                  addressbook=next((t.addressbook for t in traits if t.addressbook), ""))


def _context(host: PluginHost) -> Context:
    return Context(plugin=host.name, settings=host.settings, folders=host.folders, gate=host.gate)


def _has_store(ctx: Context) -> bool:
    from gateway_texts import store

    return (Path(ctx.folders.cache) / store.STORE_FILE).exists()


def traits_of(host: PluginHost, address: str) -> Traits | None:
    """The traits of the conversation at `address`, or None when it is not one the store holds."""
    if not address.startswith(PREFIX):
        return None
    ctx = _context(host)
    if not _has_store(ctx):
        return None
    from gateway_texts import store
    from gateway_texts.tools import _address, _Session

    key = _address(address[len(PREFIX):], str(ctx.settings.get("region") or ""))
    connection = store.connect(ctx)
    try:
        session = _Session(ctx, connection)
        row = connection.execute(
            "SELECT c.numbers, EXISTS(SELECT 1 FROM texts t WHERE t.conversation = c.id AND t.sender = '') AS wrote "
            "FROM conversations c WHERE c.address = ?", (key,)).fetchone()
        if row is None:
            return None
        return merged(session.traits(json.loads(row["numbers"]), bool(row["wrote"])))
    finally:
        connection.close()


def census(host: PluginHost) -> Iterator[tuple[str, Traits]]:
    """Every conversation (`texts`) and every calling number (`calls`), as (source, traits)."""
    ctx = _context(host)
    if not _has_store(ctx):
        return
    from gateway_texts import store
    from gateway_texts.tools import _Session

    connection = store.connect(ctx)
    try:
        session = _Session(ctx, connection)
        rows = connection.execute(
            "SELECT c.numbers, EXISTS(SELECT 1 FROM texts t WHERE t.conversation = c.id AND t.sender = '') AS wrote "
            "FROM conversations c").fetchall()
        for row in rows:
            yield "texts", merged(session.traits(json.loads(row["numbers"]), bool(row["wrote"])))
        for (number,) in connection.execute("SELECT DISTINCT number FROM calls WHERE number != ''").fetchall():
            yield "calls", merged(session.traits([number], False))
    finally:
        connection.close()
