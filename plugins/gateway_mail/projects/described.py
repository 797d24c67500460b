"""Every thing the plugin hands out, described for the person: `traits_of` (for `gateway access why`) and `census`
(for `gateway access list`), with the same traits the tools give the gate.

A thing's traits are its own plus what it shares: a message's whole conversation (the union over every id its
messages name) and a step's bigger tasks, whose traits are merged in (a message is kept with its conversation, a
step with its bigger task: the route that took any of them is the one that keeps it). A card's `client` and
a tie name projects only against a manifest: the ties are read here (the tie store holds project ids), the
client is matched when the host gives a gate (`gateway.gate`), else left out.

`notes_of` says what the traits cannot: for mail of an account without `authserv_id`, no sender is ever proven, so
an open project's sender routes cannot open that account's mail.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from attrs import evolve

from gateway import Context, Gate, PluginHost, Reason, Traits

CONVERSATION_LIMIT = 500  # messages of a conversation whose traits are merged (a list's thread may be huge)


def _context(host: PluginHost, gate: Gate | None = None) -> Context:
    gate = gate or getattr(host, "gate", None) or Gate()
    return Context(plugin=host.name, settings=host.settings, folders=host.folders, gate=gate)


def merged(traits: Iterable[Traits]) -> Traits:
    """One thing's traits from several (its copies, its conversation, its bigger tasks): every value of each."""
    traits = list(traits)
    if len(traits) == 1:
        return traits[0]

    def every(name: str) -> tuple:
        return tuple(dict.fromkeys(v for t in traits for v in getattr(t, name)))

    def first(name: str) -> str:
        return next((getattr(t, name) for t in traits if getattr(t, name)), "")

    return Traits(paths=every("paths"), people=every("people"), words=every("words"), account=first("account"),
                  folder=first("folder"), list=first("list"), calendar=first("calendar"),
                  addressbook=first("addressbook"), projects=every("projects"))


def traits_of(host: PluginHost, address: str, gate: Gate | None = None) -> Traits | None:
    """The traits of the thing at `address` (`mid:`, `sioul:task|event|contact|note|project/`), or None; `gate`
    (else the host's, if it has one) to match a card's `client`."""
    from gateway_mail.projects.ties import ident_of

    ctx = _context(host, gate)
    if address.startswith("mid:"):
        return _message(ctx, address[4:].strip().strip("<>"))
    for kind, describe in (("task", _task), ("event", _event), ("contact", _contact), ("note", _note),
                           ("project", _project)):
        ident = ident_of(address, kind)
        if ident is not None:
            return describe(ctx, ident)
    return None


def census(host: PluginHost, gate: Gate | None = None) -> Iterator[tuple[str, Traits]]:
    """Every message, task, event, card and note, as (source, traits)."""
    ctx = _context(host, gate)
    yield from _census_mail(ctx)
    yield from _census_plan(ctx)
    yield from _census_contacts(ctx)
    yield from _census_notes(ctx)


def notes_of(host: PluginHost, address: str, gate: Gate | None = None) -> list[Reason]:
    """What the traits cannot say: a message of an account without `authserv_id` has no proven sender, so each
    sender route of an open project is said unable to open that account's mail (Reason.why_not)."""
    if not address.startswith("mid:"):
        return []
    ctx = _context(host, gate)
    from gateway_mail.mail import store

    with store.opened(ctx) as mail:
        rows = mail.connection.execute("SELECT account FROM messages WHERE message_id = ?",
                                       (address[4:].strip().strip("<>"),)).fetchall()
        unproven = sorted({r["account"] for r in rows if (a := mail.account(r["account"])) and not a.authserv_id})
    return [Reason(project.id, "senders", route, False,
                   f"not used to open mail of account {account}: it has no authserv_id")
            for account in unproven for project in ctx.gate.projects if project.ai for route in project.senders]


def _tied(ctx: Context) -> dict[str, frozenset[str]]:
    """Every address tied to a project, and those project ids (all of them: the gate says which exist)."""
    from gateway_mail.projects.ties import FILE_NAME, Ties, ident_of

    found: dict[str, set[str]] = {}
    if not (Path(ctx.folders.data) / FILE_NAME).exists():
        return {}
    with Ties.open(ctx) as ties:
        for a, b in ties.all():
            for end, other in ((a, b), (b, a)):
                project = ident_of(end, "project")
                if project is not None and ident_of(other, "project") is None:
                    found.setdefault(other, set()).add(project)
    return {address: frozenset(projects) for address, projects in found.items()}


# -- mail ------------------------------------------------------------------------------------------------------


def _row_traits(mail: Any, row: Any, dirs: dict[tuple[str, str], str], tied: dict[str, frozenset[str]]) -> Traits:
    from gateway_mail.mail import gating

    body = mail.connection.execute("SELECT body FROM messages_fts WHERE rowid = ?", (row["id"],)).fetchone()
    return gating.message_traits(mail.account(row["account"]), dirs.get((row["account"], row["folder"]), ""), row,
                                 body[0] if body else "", tied.get(row["message_id"], frozenset()))


def _message(ctx: Context, message_id: str) -> Traits | None:
    from gateway_mail.mail import gating, store
    from gateway_mail.projects import belonging

    with store.opened(ctx) as mail:
        rows = mail.connection.execute("SELECT * FROM messages WHERE message_id = ?", (message_id,)).fetchall()
        if not rows:
            return None
        # The conversation: every message naming an id any of them names, until nothing new is found.
        ids = {i for row in rows for i in (row["refs"] or row["message_id"]).split()}
        seen = {row["id"]: row for row in rows}
        frontier = set(ids)
        while frontier and len(seen) < CONVERSATION_LIMIT:
            found = []
            for one in frontier:
                found += mail.connection.execute(
                    "SELECT * FROM messages WHERE message_id = ? OR instr(' ' || refs || ' ', ?) > 0 LIMIT ?",
                    (one, f" {one} ", CONVERSATION_LIMIT)).fetchall()
            frontier = set()
            for row in found:
                if row["id"] not in seen:
                    seen[row["id"]] = row
                    new = set((row["refs"] or row["message_id"]).split()) - ids
                    ids |= new
                    frontier |= new
        dirs = gating.folder_paths(mail.accounts)
        tied = belonging.mail_ties(Path(ctx.folders.data)).projects
        found = merged(_row_traits(mail, row, dirs, dict(tied)) for row in list(seen.values())[:CONVERSATION_LIMIT])
        own = {row["id"] for row in rows}
        if own & mail.shielded.hostile:
            return evolve(found, held="the AI shield judged it hostile (mail to a shielded address); the person "
                                      "runs `gateway mail not-hostile <its Message-ID>` if it is not")
        if own & mail.shielded.unjudged:
            return evolve(found, held="it was sent to a shielded address and the AI shield has not judged it yet "
                                      "(`gateway doctor` says why)")
        return found


def _census_mail(ctx: Context) -> Iterator[tuple[str, Traits]]:
    from gateway_mail.mail import gating, store
    from gateway_mail.projects import belonging

    if not ctx.settings.get("accounts"):
        return
    with store.opened(ctx) as mail:
        dirs = gating.folder_paths(mail.accounts)
        tied = dict(belonging.mail_ties(Path(ctx.folders.data)).projects)
        for row in mail.connection.execute("SELECT * FROM messages").fetchall():
            yield f"mail account {row['account']}", _row_traits(mail, row, dirs, tied)


# -- the plan ----------------------------------------------------------------------------------------------------


def _plan_item(ctx: Context, kind: str, uid: str) -> Traits | None:
    from gateway_mail.plan import events, tasks

    store = tasks if kind == "VTODO" else events
    collection = store.collection(ctx)
    by_uid = {item.uid: item for item in collection.items if item.kind == kind}
    item = by_uid.get(uid)
    if item is None:
        return None
    ties = _tied(ctx)
    chain, seen = [item], {uid}
    while chain[-1].parent and chain[-1].parent in by_uid and chain[-1].parent not in seen:  # its bigger tasks
        seen.add(chain[-1].parent)
        chain.append(by_uid[chain[-1].parent])
    return merged(tasks.item_traits(link, ties) for link in chain)


def _task(ctx: Context, uid: str) -> Traits | None:
    return _plan_item(ctx, "VTODO", uid)


def _event(ctx: Context, uid: str) -> Traits | None:
    return _plan_item(ctx, "VEVENT", uid)


def _census_plan(ctx: Context) -> Iterator[tuple[str, Traits]]:
    from gateway_mail.plan import events, tasks

    ties = _tied(ctx)
    for store, kind, source in ((tasks, "VTODO", "task list"), (events, "VEVENT", "calendar")):
        if not store.root_of(ctx).is_dir():
            continue
        for item in store.collection(ctx).items:
            if item.kind == kind:
                yield f"{source} {item.collection}", tasks.item_traits(item, ties)


# -- contacts and notes ------------------------------------------------------------------------------------------


def _card(ctx: Context, row: Any, tied: dict[str, frozenset[str]]) -> Traits:
    from gateway_mail.notes import contacts
    from gateway_mail.projects.ties import address

    named = set(tied.get(address("contact", row["key"]), ()))
    by_client = contacts.clients(ctx.gate)
    if by_client:
        named |= contacts.clients_of(by_client, row["key"], json.loads(row["extra"]))
    return contacts.card_traits(contacts.folder(ctx), row, named)


def _contact(ctx: Context, uid: str) -> Traits | None:
    from gateway_mail.notes import contacts
    from gateway_mail.projects.ties import Ties

    if contacts.folder(ctx) is None:
        return None
    with Ties.open(ctx) as ties, contacts.opened(ctx, ties) as book:
        row = book.row(uid)
        return None if row is None else _card(ctx, row, _tied(ctx))


def _census_contacts(ctx: Context) -> Iterator[tuple[str, Traits]]:
    from gateway_mail.notes import contacts
    from gateway_mail.projects.ties import Ties

    if contacts.folder(ctx) is None or not contacts.folder(ctx).is_dir():
        return
    with Ties.open(ctx) as ties, contacts.opened(ctx, ties) as book:
        tied = _tied(ctx)
        for row in book.connection.execute("SELECT * FROM docs").fetchall():
            book_name = json.loads(row["extra"]).get("book", "")
            yield f"address book {book_name}", _card(ctx, row, tied)


def _note_rows(ctx: Context, shelf: Any, where: str = "", values: tuple = ()) -> list[Any]:
    return shelf.connection.execute(
        f"SELECT d.key, d.title, f.body FROM docs d JOIN docs_fts f ON f.rowid = d.id {where}", values).fetchall()


def _note(ctx: Context, relative: str) -> Traits | None:
    from gateway_mail.notes import notes
    from gateway_mail.projects.ties import Ties

    if notes.folder(ctx) is None:
        return None
    root = notes.root_of(ctx)
    with Ties.open(ctx) as ties, notes.opened(ctx, ties) as shelf:
        rows = _note_rows(ctx, shelf, "WHERE d.key = ?", (relative,))
    tied = _tied(ctx)
    if not rows:
        return notes.note_traits(root, relative, tied=tied)  # a missing note: its path still says where it would be
    return notes.note_traits(root, relative, rows[0]["title"], rows[0]["body"], tied)


def _census_notes(ctx: Context) -> Iterator[tuple[str, Traits]]:
    from gateway_mail.notes import notes
    from gateway_mail.projects.ties import Ties

    if notes.folder(ctx) is None or not notes.folder(ctx).is_dir():
        return
    root = notes.root_of(ctx)
    with Ties.open(ctx) as ties, notes.opened(ctx, ties) as shelf:
        tied = _tied(ctx)
        for row in _note_rows(ctx, shelf):
            yield "notes", notes.note_traits(root, row["key"], row["title"], row["body"], tied)


def _project(ctx: Context, ident: str) -> Traits | None:
    """A project's page names its project: taken by that project's own id (the gate says whether it exists)."""
    return Traits(projects=(ident,))
