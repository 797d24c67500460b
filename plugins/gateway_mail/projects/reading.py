"""One thing read by the address a tool gave: `sioul:project/<id>`, `sioul:task/<UID>`, `sioul:event/<UID>` and
`sioul:contact/<UID>` as resources, so that every address an agent is handed can be read back (and `gateway read`
serves it to the person).

Each is looked up where its tool found it (`things.Lookup`) and passes the same gate: a thing of a closed project,
and a thing that is not there, are refused with the same sentence, so an agent cannot learn by asking which
addresses exist. Others' words (a title, a description, a note on a card) are masked and framed as data.
"""

from __future__ import annotations

from typing import Any

from gateway import Answer, Context

FIELD_LIMIT = 300
TEXT_LIMIT = 4000


def thing_answer(ctx: Context, kind: str, ident: str) -> Answer:
    from gateway_mail.projects.things import Lookup
    from gateway_mail.projects.ties import Ties, address

    where = address(kind, ident)
    if kind == "project":
        from gateway_mail.plan.answers import project_answer

        return project_answer(ctx, where)
    with Ties.open(ctx) as ties, Lookup(ctx, ties) as lookup:
        thing = lookup.find(where)
        if thing is None or not thing.exists or not ctx.gate.allows(thing.owners):
            # Unknown and kept are one answer: the gate's sentence, which names no project.
            raise ctx.gate.refused(thing.owners if thing is not None else frozenset(), f"the {kind} {where}")
        if kind == "contact":
            lines, data = _contact(ctx, lookup, ident)
        else:
            lines, data = _plan_item(ctx, kind, ident, thing.owners)
    return Answer("\n".join(lines), {"address": where, **data}, given=[where])


def _known(ctx: Context, owners: frozenset[str]) -> list[str]:
    return sorted(p for p in owners if ctx.gate.project(p) is not None)


def _contact(ctx: Context, lookup: Any, ident: str) -> tuple[list[str], dict[str, Any]]:
    from gateway_mail.notes import contacts

    book = lookup.store("contacts", lambda: contacts.opened(lookup.ctx, lookup.ties))
    shown = contacts.shown(ctx, book.row(ident), FIELD_LIMIT)
    return contacts.lines_of(shown), {"contact": shown}


def _plan_item(ctx: Context, kind: str, ident: str, owners: frozenset[str]) -> tuple[list[str], dict[str, Any]]:
    from gateway_mail.plan import events as events_store
    from gateway_mail.plan import tasks as tasks_store

    collection = (tasks_store if kind == "task" else events_store).collection(ctx)
    wanted = "VTODO" if kind == "task" else "VEVENT"
    item = next(i for i in collection.items if i.kind == wanted and i.uid == ident)
    title = ctx.one_line(item.summary, FIELD_LIMIT)
    data: dict[str, Any] = {"title": title, "projects": _known(ctx, owners)}
    lines = [f"{'Task' if kind == 'task' else 'Event'}: {title}"]
    if kind == "task":
        data.update(list=ctx.one_line(item.collection, FIELD_LIMIT), status=item.status or "NEEDS-ACTION")
        lines.append(f"List: {data['list']} · Status: {data['status']}")
        for label, name in (("Due", "due"), ("Starts", "start")):
            value = getattr(item, name, None)
            if value is not None:
                data[name] = value.isoformat()
                lines.append(f"{label}: {data[name]}")
        if item.priority:
            data["priority"] = item.priority
            lines.append(f"Priority: {item.priority}")
    else:
        data["calendar"] = ctx.one_line(item.collection, FIELD_LIMIT)
        lines.append(f"Calendar: {data['calendar']}")
        for label, name in (("Starts", "start"), ("Ends", "end")):
            value = getattr(item, name, None)
            if value is not None:
                data[name] = value.isoformat()
                lines.append(f"{label}: {data[name]}")
        if item.location:
            data["location"] = ctx.one_line(item.location, FIELD_LIMIT)
            lines.append(f"Where: {data['location']}")
        if item.recurring:
            data["repeats"] = True
            lines.append("Repeats: yes")
    if data["projects"]:
        lines.append(f"Projects: {', '.join(data['projects'])}")
    description = getattr(item, "description", "") or ""
    if description.strip():
        text = ctx.clip(description, TEXT_LIMIT)
        data["description"] = text
        lines.append(ctx.frame(text))
    return lines, data
