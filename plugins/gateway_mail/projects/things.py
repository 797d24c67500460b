"""Any address the plugin gives, looked up: does the thing exist, which projects own it, what is its title.

Used by link (a tie only to what the gateway knows, never into a closed project), links (what a thing is tied to,
the kept ones left out) and read_note's ties. Each kind is looked up in its own store, opened only when needed
and once per call (a `Lookup` holds what it opened). Kinds another module owns register a finder in `FINDERS`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from typing import Any

from attrs import frozen

from gateway import Context, ToolError
from gateway_mail.projects.belonging import tied_projects
from gateway_mail.projects.ties import Ties, ident_of, is_page


@frozen
class Thing:
    address: str
    owners: frozenset[str]
    title: str = ""
    exists: bool = True
    blocked: bool = False  # a blocked sender's message: only counted, as kept as a closed project's
    shielded: bool = False  # kept by the AI shield (hostile mail to a shielded address, or not judged yet): the same


# kind -> (lookup, canonical address) -> Thing or None; filled for tasks and events by their modules.
FINDERS: dict[str, Callable[[Lookup, str], Thing | None]] = {}


class Lookup:
    """One call's lookups: the stores it opened (closed with it) and the ties read once."""

    def __init__(self, ctx: Context, ties: Ties) -> None:
        self.ctx = ctx
        self.ties = ties
        self.tied = tied_projects(ties, ctx.gate)
        self._stack = contextlib.ExitStack()
        self._opened: dict[str, Any] = {}

    def __enter__(self) -> Lookup:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def store(self, name: str, opener: Callable[[], Any]) -> Any:
        if name not in self._opened:
            self._opened[name] = self._stack.enter_context(opener())
        return self._opened[name]

    def find(self, address: str) -> Thing | None:
        """The thing at a canonical address, or None when the gateway knows nothing there."""
        if is_page(address):
            return Thing(address, frozenset(), address)
        kind = address.partition(":")[2].partition("/")[0] if address.startswith("sioul:") else "mail"
        finder = FINDERS.get(kind) or _BUILT_IN.get(kind)
        if finder is None:
            return None
        return finder(self, address)

    def owners(self, address: str) -> frozenset[str]:
        """Who owns the thing (for a thing no longer there: what its ties to projects say)."""
        found = self.find(address)
        return found.owners if found is not None else self.tied.get(address, frozenset())


def _project(lookup: Lookup, address: str) -> Thing | None:
    ident = ident_of(address, "project") or ""
    project = lookup.ctx.gate.project(ident)
    if project is None:
        return None
    return Thing(address, frozenset({project.id}), project.label)


def _note(lookup: Lookup, address: str) -> Thing | None:
    from gateway_mail import newfile
    from gateway_mail.notes import notes

    root = notes.folder(lookup.ctx)
    if root is None:
        return None
    try:
        relative = notes.relative_of(address)
    except ToolError:
        return None
    owners = notes.owners_of(lookup.ctx.gate, root, relative, lookup.tied)
    # Its words as indexed (a subject route may take a note by its title or text).
    shelf = lookup.store("notes", lambda: notes.opened(lookup.ctx, lookup.ties))
    row = shelf.connection.execute("SELECT id FROM docs WHERE key = ?", (relative,)).fetchone()
    if row is not None:
        owners = owners | shelf.owners(row)
    *parts, name = relative.split("/")
    try:
        directory = newfile.open_folder(root, parts, make=False)
    except (ToolError, OSError):
        return Thing(address, owners, relative, exists=False)
    try:
        exists = stat.S_ISREG(os.lstat(name, dir_fd=directory).st_mode)
    except OSError as error:
        if error.errno not in (errno.ENOENT, errno.ENOTDIR):
            raise
        exists = False
    finally:
        os.close(directory)
    return Thing(address, owners, relative, exists=exists)


def _contact(lookup: Lookup, address: str) -> Thing | None:
    from gateway_mail.notes import contacts

    if contacts.folder(lookup.ctx) is None:
        return None
    book = lookup.store("contacts", lambda: contacts.opened(lookup.ctx, lookup.ties))
    row = book.row(ident_of(address, "contact") or "")
    if row is None:
        return Thing(address, lookup.tied.get(address, frozenset()), exists=False)
    return Thing(address, book.owners(row) | lookup.tied.get(address, frozenset()), row["title"])


def _mail(lookup: Lookup, address: str) -> Thing | None:
    from gateway_mail.mail import store

    mail = lookup.store("mail", lambda: store.opened(lookup.ctx))
    wanted = address.removeprefix("mid:")
    rows = mail.connection.execute("SELECT * FROM messages WHERE message_id = ?", (wanted,)).fetchall()
    return _of_rows(lookup, mail, address, rows)


def _draft(lookup: Lookup, address: str) -> Thing | None:
    from gateway_mail.mail import store

    mail = lookup.store("mail", lambda: store.opened(lookup.ctx))
    rows = mail.connection.execute("SELECT * FROM messages WHERE unique_name = ?",
                                   (ident_of(address, "draft") or "",)).fetchall()
    return _of_rows(lookup, mail, address, rows)


def _of_rows(lookup: Lookup, mail: Any, address: str, rows: list[Any]) -> Thing | None:
    tied = lookup.tied.get(address, frozenset())
    if not rows:
        return Thing(address, tied, exists=False)
    owners = frozenset().union(*(mail.owners(row) for row in rows)) | tied
    blocked = any(mail.is_blocked(row) for row in rows)
    shielded = any(mail.is_shielded(row) for row in rows)
    return Thing(address, owners, "" if shielded else rows[0]["subject"], blocked=blocked or shielded,
                 shielded=shielded)


def _plan_ties(lookup: Lookup) -> dict[str, frozenset[str]]:
    # The plan's modules read ties in their own form (projects.tie_map); the same pairs, read once per call.
    return lookup.store("plan-ties", lambda: contextlib.nullcontext(dict(lookup.tied)))


def _task(lookup: Lookup, address: str) -> Thing | None:
    from gateway_mail.plan import tasks as tasks_store

    uid = ident_of(address, "task") or ""
    collection = lookup.store("tasks", lambda: contextlib.nullcontext(tasks_store.collection(lookup.ctx)))
    found = [item for item in collection.items if item.kind == "VTODO" and item.uid == uid]
    if not found:
        return Thing(address, lookup.tied.get(address, frozenset()), exists=False)
    owners = lookup.store("task-owners", lambda: contextlib.nullcontext(
        tasks_store.owners_of(collection.items, _plan_ties(lookup), lookup.ctx.gate)))
    return Thing(address, owners(found[0]), found[0].summary)


def _event(lookup: Lookup, address: str) -> Thing | None:
    from gateway_mail.plan import events as events_store

    uid = ident_of(address, "event") or ""
    collection = lookup.store("events", lambda: contextlib.nullcontext(events_store.collection(lookup.ctx)))
    found = [item for item in collection.items if item.kind == "VEVENT" and item.uid == uid]
    if not found:
        return Thing(address, lookup.tied.get(address, frozenset()), exists=False)
    return Thing(address, events_store.owners(found[0], _plan_ties(lookup), lookup.ctx.gate), found[0].summary)


def _remind(lookup: Lookup, address: str) -> Thing | None:
    from gateway_mail import zone
    from gateway_mail.plan import remind

    try:
        tz = zone.zone_of(lookup.ctx.settings, lookup.ctx.timezone)
    except zone.ZoneError:
        return None
    def every() -> contextlib.AbstractContextManager[dict[str, list[remind.Entry]] | None]:
        # remind run once per call, however many reminders the call looks up (a project's ties may name many);
        # None when its answer was cut at its bound, and each reminder is then asked for on its own; none at all
        # when remind could not say.
        found, said = remind.occurrences(lookup.ctx, None, tz)
        if said:
            return contextlib.nullcontext({})
        if len(found) >= remind.MAX_ENTRIES:
            return contextlib.nullcontext(None)
        by_ident: dict[str, list[remind.Entry]] = {}
        for entry in found:
            by_ident.setdefault(entry.ident, []).append(entry)
        return contextlib.nullcontext(by_ident)

    tied = lookup.tied.get(address, frozenset())
    ident = ident_of(address, "remind") or ""
    all_of = lookup.store("remind", every)
    found = all_of.get(ident, []) if all_of is not None else remind.occurrences(lookup.ctx, ident, tz)[0]
    if not found:  # remind could not say, or it rings no more around today: placed by its ties alone
        return Thing(address, tied, exists=False)
    owners = lookup.ctx.gate.owners(remind.traits(found, tied))
    return Thing(address, owners | tied, found[0].body)


_BUILT_IN: dict[str, Callable[[Lookup, str], Thing | None]] = {
    "project": _project, "note": _note, "contact": _contact, "mail": _mail, "draft": _draft, "task": _task,
    "event": _event, "remind": _remind,
}
