"""find: one search across mail, tasks, events, contacts, notes and projects, with no count.

Each kind answers with its best few from what the gate lets through, and the kinds take turns, so that no kind
crowds out the others. Nothing kept is found, and no count is given (a count over several stores would say more
than each store's own). The words are taken as plain words (each quoted for FTS5; in tasks, events and projects,
every word must appear in the masked title, text, place or tags).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from gateway import Context
from gateway_mail.notes import contacts, notes
from gateway_mail.notes.answers import FIELD_LIMIT, best, check_query, matching, plain
from gateway_mail.projects.ties import Ties, address

Part = Callable[[Context, str, int, Ties], list[dict[str, Any]]]
_TERM = re.compile(r"\w+")


def _found(kind: str, where: str, title: str) -> dict[str, Any]:
    return {"address": where, "kind": kind, "title": title}


def _mail(ctx: Context, query: str, limit: int, _ties: Ties) -> list[dict[str, Any]]:
    from gateway_mail.mail.answers import address_of
    from gateway_mail.mail.store import BLOCKED, CLOSED, SHIELDED, opened

    if not ctx.settings.get("accounts"):
        return []
    with opened(ctx) as mail:
        rows = matching(mail.connection,
                        "SELECT m.* FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
                        f"WHERE messages_fts MATCH ? AND NOT {CLOSED} AND NOT {BLOCKED} AND NOT {SHIELDED} "
                        "ORDER BY m.date DESC LIMIT ?",
                        plain(query), [mail.closed_json, mail.blocked_json, mail.shield_json, limit])
        return [_found("mail", address_of(row), ctx.clip(row["subject"], FIELD_LIMIT)) for row in rows]


def _contacts(ctx: Context, query: str, limit: int, ties: Ties) -> list[dict[str, Any]]:
    if contacts.folder(ctx) is None:
        return []
    with contacts.opened(ctx, ties) as book:
        rows = best(book.connection, plain(query), book.closed_json, limit)
        return [_found("contact", address("contact", row["key"]), ctx.clip(row["title"], FIELD_LIMIT))
                for row in rows]


def _notes(ctx: Context, query: str, limit: int, ties: Ties) -> list[dict[str, Any]]:
    if notes.folder(ctx) is None:
        return []
    with notes.opened(ctx, ties) as shelf:
        rows = best(shelf.connection, plain(query), shelf.closed_json, limit)
        return [_found("note", notes.note_address(row["key"]), ctx.clip(row["title"], FIELD_LIMIT)) for row in rows]


def _terms(query: str) -> list[str]:
    return [t.casefold() for t in _TERM.findall(query)]


def _holds(terms: list[str], *texts: str) -> bool:
    text = " ".join(texts).casefold()
    return all(term in text for term in terms)


def _items(ctx: Context, query: str, limit: int, kind: str) -> list[dict[str, Any]]:
    from gateway_mail.plan import events, tasks
    from gateway_mail.plan.vdir import EVENT, TODO
    from gateway_mail.projects import projects

    terms = _terms(query)
    store = tasks if kind == "task" else events
    collection = store.collection(ctx)
    wanted = TODO if kind == "task" else EVENT
    matches = [i for i in collection.items if i.kind == wanted
               and _holds(terms, i.summary, i.description, i.location, " ".join(i.categories))]
    if not matches:
        return []
    ties = projects.tie_map(ctx)
    if kind == "task":
        owners = tasks.owners_of(collection.items, ties, ctx.gate)
        matches.sort(key=lambda i: (i.done, i.due is None, str(i.due or ""), i.summary))
    else:
        owners = lambda item: events.owners(item, dict(ties), ctx.gate)  # noqa: E731
        matches.sort(key=lambda i: str(i.start or ""), reverse=True)
    found = []
    for item in matches:
        if len(found) >= limit:
            break
        if ctx.gate.allows(owners(item)):
            found.append(_found(kind, item.address, ctx.clip(item.summary, FIELD_LIMIT)))
    return found


def _tasks(ctx: Context, query: str, limit: int, _ties: Ties) -> list[dict[str, Any]]:
    return _items(ctx, query, limit, "task")


def _events(ctx: Context, query: str, limit: int, _ties: Ties) -> list[dict[str, Any]]:
    return _items(ctx, query, limit, "event")


def _projects(ctx: Context, query: str, limit: int, _ties: Ties) -> list[dict[str, Any]]:
    terms = _terms(query)
    return [_found("project", address("project", p.id), ctx.one_line(p.label, FIELD_LIMIT))
            for p in ctx.gate.open_projects() if _holds(terms, p.id, p.name, p.client)][:limit]


# In the order a person asks: what they wrote and received first.
PARTS: list[tuple[str, Part]] = [("mail", _mail), ("tasks", _tasks), ("events", _events), ("contacts", _contacts),
                                 ("notes", _notes), ("projects", _projects)]


def _interleaved(groups: list[list[dict[str, Any]]], limit: int) -> Iterator[dict[str, Any]]:
    given = 0
    for rank in range(max((len(g) for g in groups), default=0)):
        for group in groups:
            if rank < len(group) and given < limit:
                given += 1
                yield group[rank]


def find_answer(ctx: Context, query: str, limit: int) -> Any:
    from gateway import Answer

    check_query(query)
    groups = []
    with Ties.open(ctx) as ties:
        for _name, part in PARTS:
            ctx.deadline.check()
            groups.append(part(ctx, query, limit, ties))
    found = list(_interleaved(groups, limit))
    lines = ["Found, each kind's best in turn (no count is given: what is kept from agents is never found):"
             if found else "Nothing found (what is kept from agents is never found)."]
    lines += [f"{f['address']}  [{f['kind']}] {f['title']}" for f in found]
    return Answer("\n".join(lines), {"found": found}, given=[f["address"] for f in found])
