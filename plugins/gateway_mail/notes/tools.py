"""What hosts see of contacts, notes, ties and find: the tools declared without the work (as mail/tools.py does).

Registration imports only this module; each body imports answers.py, which does the work, when it first runs.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from gateway import Answer, Context, tool

DEFAULT_LIMIT = 20
MAX_LIMIT = 200
MAX_QUERY = 2_000
MAX_NOTE = 200_000
MAX_ADDRESS = 4_096


@tool(read_only=True, title="Search contacts")
def search_contacts(
    ctx: Context,
    query: Annotated[str, Field(max_length=MAX_QUERY, description="words to find in names, addresses, "
                                "organisations and notes (SQLite FTS5 syntax; plain words work)")],
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="at most so many contacts")] = DEFAULT_LIMIT,
) -> Answer:
    """Find contacts in the person's address books (vCards, as khard keeps them): name, addresses, phones,
    organisation, masked. Contacts kept from agents (a closed project's client, or tied to one) are left out and
    counted over the whole address book, whatever the words."""
    from gateway_mail.notes.answers import contacts_answer

    return contacts_answer(ctx, query, limit)


@tool(read_only=True, title="Search notes")
def search_notes(
    ctx: Context,
    query: Annotated[str, Field(max_length=MAX_QUERY, description="words to find in the notes' titles and "
                                "texts (SQLite FTS5 syntax; plain words work)")],
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="at most so many notes")] = DEFAULT_LIMIT,
) -> Answer:
    """Find the person's notes (Markdown files) by their words, best first: each note's address
    (sioul:note/<path>), title and a masked snippet. Read one with read_note. Notes of closed projects are left
    out and counted over the whole notes folder, whatever the words."""
    from gateway_mail.notes.answers import notes_answer

    return notes_answer(ctx, query, limit)


@tool(read_only=True, title="Read a note")
def read_note(
    ctx: Context,
    address: Annotated[str, Field(max_length=MAX_ADDRESS, description="sioul:note/<path> as search_notes gives it")],
) -> Answer:
    """One note: its title, folder, what it is tied to, then its text between frame lines, masked."""
    from gateway_mail.notes.answers import note_answer

    return note_answer(ctx, address)


@tool(title="Add a note", read_only=False, destructive=False, idempotent=False, open_world=False,
      private_arguments=("text",))
def add_note(
    ctx: Context,
    title: Annotated[str, Field(max_length=1_000, description="one line; the file's name is made from it")],
    text: Annotated[str, Field(max_length=MAX_NOTE, description="the note's text (Markdown)")],
    folder: Annotated[str | None, Field(max_length=1_000, description='a subfolder of the notes folder, written '
                                        'with "/" (made if missing)')] = None,
    project: Annotated[str | None, Field(max_length=200, description="an open project's id: the note is tied "
                                         "to it")] = None,
) -> Answer:
    """Add a new Markdown note in the notes folder (never over another: two notes of one title both exist),
    optionally tied to an open project. Changes only that: one new file, and a tie when a project is given."""
    from gateway_mail.notes.answers import add_note_answer

    return add_note_answer(ctx, title, text, folder, project)


@tool(title="Tie two things", read_only=False, destructive=False, idempotent=True, open_world=False)
def link(
    ctx: Context,
    address: Annotated[str, Field(max_length=MAX_ADDRESS, description="a thing the gateway gives: sioul:... or "
                                  "mid:...")],
    to: Annotated[str, Field(max_length=MAX_ADDRESS, description="another such thing, or an http(s) page")],
) -> Answer:
    """Tie a thing to another (a note to a message, a contact to a project...) or to a web page. A tie is made
    once and never taken back by an agent; tying a thing to a project makes it the project's. Changes only the
    plugin's tie store."""
    from gateway_mail.notes.answers import link_answer

    return link_answer(ctx, address, to)


@tool(read_only=True, title="What a thing is tied to")
def links(
    ctx: Context,
    address: Annotated[str, Field(max_length=MAX_ADDRESS, description="sioul:... or mid:...")],
) -> Answer:
    """What a thing is tied to, oldest tie first; what is kept from agents is left out and counted."""
    from gateway_mail.notes.answers import links_answer

    return links_answer(ctx, address)


@tool(read_only=True, title="Find anything")
def find(
    ctx: Context,
    query: Annotated[str, Field(max_length=MAX_QUERY, description="a few words")],
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="at most so many things")] = DEFAULT_LIMIT,
) -> Answer:
    """One search across mail, tasks, events, contacts, notes and projects: each thing found by its address, kind
    and title. What is kept from agents is never found, and this search gives no count."""
    from gateway_mail.notes.finding import find_answer

    return find_answer(ctx, query, limit)


def read_note_resource(ctx: Context, path: str) -> Answer:
    from gateway_mail.notes.answers import note_answer
    from gateway_mail.projects.ties import address

    return note_answer(ctx, address("note", path))
