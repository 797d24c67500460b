"""The work behind search_contacts, search_notes, read_note, add_note, link and links (declared in
tools.py; find is in finding.py).

Lists leave out and count what the gate keeps, over the whole store whatever the words (find gives no count).
Others' words come masked, one field per line; a note's text between frame lines carrying this answer's mark.
"""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import datetime
from typing import Any

from gateway import Answer, Context, ToolError, left_out_sentence, plural
from gateway_mail.mail.shield import SHIELD_REFUSAL
from gateway_mail.notes import contacts, notes
from gateway_mail.projects.things import Lookup, Thing
from gateway_mail.projects.ties import Ties, address, canonical, ident_of, is_page

FIELD_LIMIT = 200
STILL_INDEXING = ("The {} are still being indexed (a first index of many files): some are not searched yet; "
                  "call again to search them all.")
SNIPPET_LIMIT = 240
MAX_TERMS = 32
_TERM = re.compile(r"\w+")


def check_query(query: str) -> None:
    if not query.strip():
        raise ToolError("query is empty: give a few words")
    terms = len(_TERM.findall(query))
    if terms > MAX_TERMS:
        raise ToolError(f"query has {terms} words, over the limit of {MAX_TERMS}")


def plain(query: str) -> str:
    """The query's words, each quoted: what FTS5 takes whatever symbols the words came with."""
    return " ".join(f'"{term}"' for term in _TERM.findall(query))


def matching(connection: sqlite3.Connection, sql: str, query: str, values: list[Any]) -> list[sqlite3.Row]:
    """Rows of an FTS5 query (its first `?` the query): written as FTS5 syntax, or else taken as plain words."""
    try:
        return connection.execute(sql, [query, *values]).fetchall()
    except sqlite3.OperationalError as error:
        if "interrupted" in str(error):
            raise
    try:
        return connection.execute(sql, [plain(query), *values]).fetchall()
    except sqlite3.OperationalError as error:
        if "interrupted" in str(error):
            raise
        raise ToolError(f"the query cannot be read ({error}); give plain words") from error


def _counted(lines: list[str], left_out: int, what: str) -> list[str]:
    sentence = left_out_sentence(left_out, what)
    return [*lines, sentence] if sentence else lines


# -- contacts --------------------------------------------------------------------------------------------------

# Ranked by FTS5's bm25 (the title weighing more than the text) among the RANKED (500) most recently changed matches:
# a word found in thousands of files would otherwise cost a score for each. What the gate keeps is left out
# before, so the window never depends on a closed thing's words. Only ids go through the sort; the rows shown,
# and their snippets, are read after.
RANKED = 500
BEST_SQL = ("SELECT rowid FROM (SELECT rowid, rank FROM docs_fts WHERE docs_fts MATCH ? AND rank MATCH "
            "'bm25(4.0, 1.0)' AND rowid NOT IN (SELECT value FROM json_each(?)) ORDER BY rowid DESC "
            f"LIMIT {RANKED}) ORDER BY rank LIMIT ?")


def snippet_of(text: str, terms: list[str], width: int = SNIPPET_LIMIT) -> str:
    """Some words around the first place one of `terms` appears (a word's start), else the text's start."""
    folded = text.casefold()
    places = [found for term in terms if (found := folded.find(term)) >= 0]
    start = max(0, min(places) - width // 3) if places else 0
    if start:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < start + 20 else start
    excerpt = " ".join(text[start:start + width * 2].split())
    return ("…" if start else "") + excerpt


def best(connection: sqlite3.Connection, query: str, closed_json: str, limit: int,
         snippets: bool = False) -> list[dict[str, Any]]:
    """The best documents for `query` (FTS5 syntax, or plain words), what the gate keeps left out; best first."""
    ids = [r[0] for r in matching(connection, BEST_SQL, query, [closed_json, limit])]
    if not ids:
        return []
    wanted = json.dumps(ids)
    rows = {r["id"]: dict(r) for r in connection.execute(
        "SELECT * FROM docs WHERE id IN (SELECT value FROM json_each(?))", (wanted,))}
    if snippets:
        terms = [t.casefold() for t in _TERM.findall(query) if t not in ("AND", "OR", "NOT", "NEAR")]
        for rowid, body in connection.execute(
                "SELECT rowid, body FROM docs_fts WHERE rowid IN (SELECT value FROM json_each(?))", (wanted,)):
            if rowid in rows:
                rows[rowid]["snippet"] = snippet_of(body or "", terms)
    return [rows[i] for i in ids if i in rows]


def contacts_answer(ctx: Context, query: str, limit: int) -> Answer:
    check_query(query)
    with Ties.open(ctx) as ties, contacts.opened(ctx, ties) as book:
        rows = best(book.connection, query, book.closed_json, limit)
        left_out = len(book.verdicts.closed)
        found = [contacts.shown(ctx, row, FIELD_LIMIT) for row in rows]
        complete = book.complete
    lines = [f"{plural(len(found), 'contact')} matching, best first."]
    if not complete:
        lines.append(STILL_INDEXING.format("contacts"))
    for contact in found:
        lines += contacts.lines_of(contact)
    lines = _counted(lines, left_out, "contact")
    data: dict[str, Any] = {"contacts": found, "left_out": left_out}
    if not complete:
        data["complete"] = False
    return Answer("\n".join(lines), data, given=[c["address"] for c in found], left_out=left_out)


# -- notes ------------------------------------------------------------------------------------------------------

def _note_hit(ctx: Context, row: Any) -> dict[str, Any]:
    # Title and snippet come from the index, masked already: cut here (one line), not masked again. The folder
    # is a file name of the person's, masked as a field.
    folder = row["key"].rpartition("/")[0]
    hit = {"address": notes.note_address(row["key"]), "title": ctx.one_line(row["title"], FIELD_LIMIT),
           "folder": ctx.clip(folder, FIELD_LIMIT), "snippet": ctx.one_line(row.get("snippet", ""), SNIPPET_LIMIT)}
    return hit


def notes_answer(ctx: Context, query: str, limit: int) -> Answer:
    check_query(query)
    with Ties.open(ctx) as ties, notes.opened(ctx, ties) as shelf:
        rows = best(shelf.connection, query, shelf.closed_json, limit, snippets=True)
        left_out = len(shelf.verdicts.closed)
        hits = [_note_hit(ctx, row) for row in rows]
        complete = shelf.complete
    lines = [f"{plural(len(hits), 'note')} matching, best first. Read one with read_note."]
    if not complete:
        lines.append(STILL_INDEXING.format("notes"))
    for hit in hits:
        lines += [hit["address"], f"  Title: {hit['title']}"]
        if hit["folder"]:
            lines.append(f"  Folder: {hit['folder']}")
        lines.append(f"  Snippet: {hit['snippet']}")
    lines = _counted(lines, left_out, "note")
    data: dict[str, Any] = {"notes": hits, "left_out": left_out}
    if not complete:
        data["complete"] = False
    return Answer("\n".join(lines), data, given=[h["address"] for h in hits], left_out=left_out)


def note_answer(ctx: Context, value: str) -> Answer:
    relative = notes.relative_of(value)
    root = notes.root_of(ctx)
    note = notes.note_address(relative)
    with Ties.open(ctx) as ties, Lookup(ctx, ties) as lookup:
        ctx.gate.check_read(notes.owners_of(ctx.gate, root, relative, lookup.tied), f"the note {note}")
        text, cut = notes.read_text(root, relative)
        masked = ctx.mask(text)
        # Its words too (a closed project's subject route takes a note whose title or text holds them): the
        # same sentence as for its file, so the refusal says nothing of which trait kept it.
        ctx.gate.check_read(notes.owners_of(ctx.gate, root, relative, lookup.tied,
                                            notes.title_of(masked, relative), masked), f"the note {note}")
        tied, kept = ties_shown(ctx, lookup, note)
    title = ctx.clip(notes.title_of(masked, relative), FIELD_LIMIT)
    folder = ctx.clip(relative.rpartition("/")[0], FIELD_LIMIT)
    lines = [f"Note: {note}", f"Title: {title}"]
    if folder:
        lines.append(f"Folder: {folder}")
    lines += [f"Tied to: {t['address']}" + (f" ({t['title']})" if t.get("title") else "") for t in tied]
    lines = _counted(lines, kept, "tie")
    if cut:
        lines.append(f"Cut: only the first {notes.MAX_READ} characters are given.")
    lines.append(ctx.frame(masked))
    data: dict[str, Any] = {"address": note, "title": title, "folder": folder, "ties": tied, "text": masked}
    if cut:
        data["cut"] = True
    return Answer("\n".join(lines), data, given=[note], left_out=kept)


def _project_owners(ctx: Context, project: str) -> frozenset[str]:
    """An open project's id as owners, or the gate's refusal (the same for a closed project and an unknown id)."""
    _no_unknown_project(ctx, address("project", project))
    ctx.gate.check_write({project}, f"the project {project}")
    return frozenset({project})


def add_note_answer(ctx: Context, title: str, text: str, folder: str | None, project: str | None) -> Answer:
    from gateway_mail import newfile

    title = notes.check_title(title)
    root = notes.root_of(ctx)
    parts = newfile.folder_parts(folder)
    owners = _project_owners(ctx, project.strip()) if project else frozenset()
    with Ties.open(ctx) as ties:
        # The folder's own projects: a note may not be written into a closed one, whatever project it names.
        probable = "/".join((*parts, newfile.safe_name(title, ".md")))
        owners |= notes.path_owners(ctx.gate, root, probable)
        ctx.gate.check_write(owners, "a note there")
        relative = notes.write(root, title, text, parts)
        note = notes.note_address(relative)
        tied = []
        if project:
            ties.add(note, address("project", project.strip()))
            tied.append(address("project", project.strip()))
    shown_title = ctx.clip(title, FIELD_LIMIT)
    lines = [f"Note added: {note}", f"Title: {shown_title}", f"File: {relative} (in the notes folder)",
             f"Text: {len(text)} characters."]
    lines += [f"Tied to: {t}" for t in tied]
    lines.append("Changed: one new file in the notes folder" + (", and a tie to the project." if tied else "."))
    data = {"address": note, "title": shown_title, "file": str(relative), "ties": tied,
            "text_characters": len(text)}
    return Answer("\n".join(lines), data, given=[note])


# -- ties -------------------------------------------------------------------------------------------------------

def _no_unknown_project(ctx: Context, key: str) -> None:
    """An unknown project's id is refused as a closed one is: the answer may not tell which ids exist."""
    project = ident_of(key, "project")
    if project is not None and ctx.gate.project(project) is None:
        raise ToolError(ctx.gate.refusal(frozenset(), f"the project {project}"))


def _known(ctx: Context, lookup: Lookup, value: str, what: str) -> Thing:
    _no_unknown_project(ctx, value)
    thing = lookup.find(value)
    # A web page is nobody's: the thing tied to it decides.
    if thing is not None and not thing.blocked and not is_page(value):
        ctx.gate.check_write(thing.owners, what, value)
    if thing is not None and thing.shielded:
        raise ToolError(SHIELD_REFUSAL)
    if thing is None or not thing.exists or thing.blocked:
        # Worded as a kept thing's refusal: an address an agent can work out (a Message-ID it knows, a remind line
        # it guesses) must not tell it whether a closed thing is there.
        raise ctx.gate.refused(frozenset(), what, value)
    return thing


def link_answer(ctx: Context, value: str, to: str) -> Answer:
    first, second = canonical(value), canonical(to)
    if is_page(first):
        first, second = second, first
    with Ties.open(ctx) as ties, Lookup(ctx, ties) as lookup:
        one = _known(ctx, lookup, first, f"a tie from {first}")
        other = _known(ctx, lookup, second, f"a tie to {second}")
        # Tied, each becomes the other's project's too: both sides' owners must be open.
        ctx.gate.check_write(one.owners | other.owners, "this tie")
        made = ties.add(first, second)
    said = "Tied" if made else "Already tied (a tie is made once)"
    lines = [f"{said}: {first} and {second}.",
             "Changed: one tie in the plugin's tie store." if made else "Changed: nothing."]
    data = {"address": first, "to": second, "made": made}
    return Answer("\n".join(lines), data, given=[first, second])


def ties_shown(ctx: Context, lookup: Lookup, key: str) -> tuple[list[dict[str, Any]], int]:
    """What `key` is tied to, as an agent may see it: the kept ends left out and counted, never named."""
    shown, kept = [], 0
    for other in lookup.ties.of(key):
        thing = lookup.find(other)
        owners = thing.owners if thing is not None else lookup.tied.get(other, frozenset())
        if (thing is not None and thing.blocked) or not ctx.gate.allows(owners):
            kept += 1
            continue
        entry: dict[str, Any] = {"address": other}
        if thing is not None and thing.title and not is_page(other):
            entry["title"] = ctx.clip(thing.title, FIELD_LIMIT)
        if thing is None or not thing.exists:
            entry["gone"] = True
        shown.append(entry)
    return shown, kept


def links_answer(ctx: Context, value: str) -> Answer:
    key = canonical(value)
    what = f"what {key} is tied to"
    project = ident_of(key, "project")
    if project is not None and ctx.gate.project(project) is None:  # worded as a closed project's
        raise ctx.gate.refused(frozenset(), what)
    with Ties.open(ctx) as ties, Lookup(ctx, ties) as lookup:
        thing = lookup.find(key)
        owners = thing.owners if thing is not None else lookup.tied.get(key, frozenset())
        if (thing is None or not thing.exists) and not lookup.ties.of(key):
            # Nothing there and nothing tied to it: worded as a kept thing, so ids cannot be probed.
            raise ctx.gate.refused(frozenset(), what)
        ctx.gate.check_read(owners, what)
        if thing is not None and thing.shielded:
            raise ToolError(SHIELD_REFUSAL)
        if thing is not None and thing.blocked:
            raise ToolError("this message's sender is on the person's blocked list: its mail is only counted")
        tied, kept = ties_shown(ctx, lookup, key)
    lines = [f"{key} is tied to {plural(len(tied), 'thing')}, oldest tie first."]
    for entry in tied:
        lines.append(entry["address"] + (f"  {entry['title']}" if entry.get("title") else "")
                     + ("  (no longer there)" if entry.get("gone") else ""))
    lines = _counted(lines, kept, "tie")
    data = {"address": key, "ties": tied, "left_out": kept}
    return Answer("\n".join(lines), data, given=[key, *(t["address"] for t in tied)], left_out=kept)


# -- a project's page (read_project, in plan/answers.py, adds this section) --------------------------------------

def _day(ctx: Context, stamp: float) -> str:
    """A note's date (its file's last change) as a day in the person's zone, for the project's line of time."""
    from gateway_mail import zone

    return datetime.fromtimestamp(stamp, zone.zone_of(ctx.settings, ctx.timezone)).date().isoformat() if stamp else ""


def project_section(ctx: Context, project_id: str) -> tuple[list[str], dict[str, Any], list[str], int]:
    """The notes and contacts of an open project: lines, data, addresses given, and how many were left out (a
    note or contact also in a closed project). Nothing when no notes or contacts folder is set."""
    lines: list[str] = []
    data: dict[str, Any] = {}
    given: list[str] = []
    left_out = 0
    with Ties.open(ctx) as ties:
        if notes.folder(ctx) is not None:
            with notes.opened(ctx, ties) as shelf:
                ids = [i for i, owners in shelf.verdicts.owners.items() if project_id in owners]
                shown = [i for i in ids if i not in shelf.verdicts.closed]
                left_out += len(ids) - len(shown)
                rows = shelf.connection.execute(
                    "SELECT * FROM docs WHERE id IN (SELECT value FROM json_each(?)) ORDER BY date DESC LIMIT 20",
                    (json.dumps(shown),)).fetchall()
            found = [{"address": notes.note_address(r["key"]), "title": ctx.clip(r["title"], FIELD_LIMIT),
                      "date": _day(ctx, r["date"])} for r in rows]
            lines.append(f"Notes ({len(shown)}), newest first:")
            lines += [f"  {n['address']}  {n['title']}" for n in found] or ["  none"]
            if len(ids) > len(shown):
                lines.append(left_out_sentence(len(ids) - len(shown), "note"))
            data["notes"] = found
            given += [n["address"] for n in found]
        if contacts.folder(ctx) is not None:
            with contacts.opened(ctx, ties) as book:
                ids = [i for i, owners in book.verdicts.owners.items() if project_id in owners]
                shown = [i for i in ids if i not in book.verdicts.closed]
                left_out += len(ids) - len(shown)
                rows = book.connection.execute(
                    "SELECT * FROM docs WHERE id IN (SELECT value FROM json_each(?)) ORDER BY title LIMIT 20",
                    (json.dumps(shown),)).fetchall()
                people = [contacts.shown(ctx, r, FIELD_LIMIT) for r in rows]
            lines.append(f"Contacts ({len(shown)}: the client, and those tied to it):")
            for person in people:
                lines += ["  " + line for line in contacts.lines_of(person)]
            if not people:
                lines.append("  none")
            if len(ids) > len(shown):
                lines.append(left_out_sentence(len(ids) - len(shown), "contact"))
            data["contacts"] = people
            given += [p["address"] for p in people]
    return lines, data, given, left_out


def tie_allowed(ctx: Context, key: str) -> bool | None:
    """May the thing at `key` be named (for a project's ties)? None when the gateway knows nothing there."""
    with Ties.open(ctx) as ties, Lookup(ctx, ties) as lookup:
        thing = lookup.find(key)
        if thing is None:
            return None
        return not thing.blocked and ctx.gate.allows(thing.owners)
