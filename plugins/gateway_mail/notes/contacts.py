"""Contacts: a vdir of vCards (3.0 and 4.0, as khard and vdirsyncer keep them), read with `vobject`, indexed masked.

Every field is masked before it is indexed or shown (an IBAN in a NOTE is found by no digit). A contact belongs to
a project when it is the project's client (the manifest's `client` is one of its addresses, its UID, its
`sioul:contact/<UID>` or its full name) or when it is tied to `sioul:project/<id>`. Nothing here writes a vCard.

Cards come from strangers (a sync brings whatever a correspondent sent) and vobject holds the interpreter while it
parses a line, so the input is bounded before vobject sees it (contentlines.py): a PHOTO, LOGO, SOUND or KEY line
never reaches it (nothing binary is decoded), nor a line over LINE_LIMIT; a file over MAX_FILE bytes is read by its
summary only (the FN, N, EMAIL, TEL, ORG, NOTE and UID lines of its first SUMMARY_CARDS cards, SUMMARY_LINES lines
at most, within its first SCAN_LIMIT bytes), and one of more than MAX_LINES lines is cut there, and a file vobject cannot read is recorded unreadable (docindex.py) until it changes.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from attrs import frozen

from gateway import Context, Gate, GateMemo, Person, ToolError, Traits, mask
from gateway_mail import contentlines, docindex
from gateway_mail.projects.belonging import tied_projects
from gateway_mail.projects.ties import Ties, address

SUFFIXES = (".vcf", ".vcard")
INDEX_FILE = "contacts-index.sqlite"
MAX_FILE = 1 << 20
SCAN_LIMIT = 64 << 20  # a card with a photo of tens of MB still gives the lines after it
LINE_LIMIT = 64 << 10
UNIT_LIMIT = 256 << 10  # of one card: its further lines are left out
SUMMARY_CARDS = 1_000
MAX_LINES = 4_000  # of a file read whole: vobject and the masks take some 250 microseconds a line here
SUMMARY_LINES = 4_000
MOST_CARDS = 100_000  # of a file read whole (a 1 MiB file holds far fewer)
BINARY = frozenset((b"PHOTO", b"LOGO", b"SOUND", b"KEY"))
SUMMARY_PROPERTIES = frozenset((b"VERSION", b"UID", b"FN", b"N", b"EMAIL", b"TEL", b"ORG", b"NOTE"))
FIELDS = ("fn", "emails", "tels", "org", "title", "nickname", "categories", "addresses", "urls", "note", "birthday")


def _text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(_text(v) for v in value if _text(v))
    return " ".join(str(value).split())


def card_fields(card: Any) -> dict[str, Any]:
    """The fields of one vCard component we give, unmasked (the caller masks)."""

    def values(name: str) -> list[str]:
        return [t for t in (_text(c.value) for c in card.contents.get(name, [])) if t]

    name = values("fn")
    if not name and "n" in card.contents:
        name = [_text(str(card.n.value))]
    return {
        "uid": (values("uid") or [""])[0], "fn": (name or [""])[0], "emails": values("email"),
        "tels": values("tel"), "org": ", ".join(values("org")), "title": ", ".join(values("title")),
        "nickname": ", ".join(values("nickname")), "categories": values("categories"),
        "addresses": values("adr"), "urls": values("url"), "note": " ".join(values("note")),
        "birthday": (values("bday") or [""])[0],
    }


def bounded_text(path: Path) -> tuple[str, bool]:
    """What vobject is given of a .vcf: every line but the binary ones and those too long, or, for a file over
    MAX_FILE bytes, its summary (and True). Never more than SCAN_LIMIT bytes are read."""
    summary = path.stat().st_size > MAX_FILE
    if summary:
        found = contentlines.reduced(path, limit=SCAN_LIMIT, line_limit=LINE_LIMIT, unit_limit=UNIT_LIMIT,
                                     units=SUMMARY_CARDS, container=None, kept_components=frozenset((b"VCARD",)),
                                     wanted=lambda _card, name: name in SUMMARY_PROPERTIES,
                                     skip=BINARY.__contains__, max_lines=SUMMARY_LINES)
    else:
        found = contentlines.reduced(path, limit=MAX_FILE, line_limit=LINE_LIMIT, unit_limit=MAX_FILE,
                                     units=MOST_CARDS, container=None, kept_components=frozenset((b"VCARD",)),
                                     wanted=lambda _card, name: name not in BINARY, skip=BINARY.__contains__,
                                     max_lines=MAX_LINES)
        summary = not found.whole  # grown past the bound since it was looked at
    return found.text(None).decode("utf-8", "replace") if found.lines else "", summary


def read_file(path: Path, relative: str) -> docindex.Read:
    """The cards of one .vcf file as documents, every field masked; a card without UID takes the file's name."""
    import vobject

    text, summary = bounded_text(path)
    docs = []
    try:
        cards = list(vobject.readComponents(text, ignoreUnreadable=True)) if text else []
    except Exception:  # noqa: BLE001 (vobject raises many kinds on a broken file: one file, one count)
        return docindex.Read([], docindex.UNREADABLE)
    stem = relative.rpartition("/")[2].rsplit(".", 1)[0]
    for number, card in enumerate(cards):
        if getattr(card, "name", "").upper() != "VCARD":
            continue
        fields = card_fields(card)
        uid = fields.pop("uid") or (stem if number == 0 else f"{stem}#{number}")
        masked = {k: [mask(v) for v in value] if isinstance(value, list) else mask(value)
                  for k, value in fields.items()}
        masked["book"] = relative.rpartition("/")[0]
        # What the manifest's `client` is compared with (masked too: the index holds nothing else).
        masked["match"] = sorted({*(e.casefold() for e in masked["emails"]), masked["fn"].casefold()} - {""})
        body = "\n".join(_text(masked[k]) for k in FIELDS if masked.get(k))
        docs.append(docindex.Doc(uid, masked["fn"] or masked["org"] or uid, body, masked))
    return docindex.Read(docs, docindex.SUMMARY_ONLY if summary else "")


_verdicts: GateMemo[docindex.Verdicts] = GateMemo(gates=4)


@frozen
class Book:
    """One call's view of the contacts: the index (refreshed) and what the gate keeps."""

    connection: sqlite3.Connection
    verdicts: docindex.Verdicts
    complete: bool = True  # False while a first index is still being built (the next call goes on)

    def row(self, uid: str) -> sqlite3.Row | None:
        return self.connection.execute("SELECT * FROM docs WHERE key = ? ORDER BY id LIMIT 1", (uid,)).fetchone()

    def owners(self, row: Any) -> frozenset[str]:
        return self.verdicts.owners.get(row["id"], frozenset())

    @property
    def closed_json(self) -> str:
        return json.dumps(sorted(self.verdicts.closed))


def folder(ctx: Context) -> Path | None:
    return ctx.path_setting("contacts")


@contextlib.contextmanager
def opened(ctx: Context, ties: Ties) -> Iterator[Book]:
    root = folder(ctx)
    if root is None:
        raise ToolError("no contacts folder is set: the person adds contacts = \"~/.local/share/vdirsyncer/"
                        "contacts\" (a vdir of .vcf, as khard keeps it) to [plugins.mail] in the config")
    if not root.is_dir():
        from gateway_mail.shown import shown_path

        raise ToolError(f"the contacts folder {shown_path(root)} does not exist (the setting contacts in [plugins.mail])")
    connection = docindex.connect(Path(ctx.folders.cache) / INDEX_FILE, root)
    try:
        with ctx.interruptible(connection):
            complete = docindex.refresh(connection, root, SUFFIXES, read_file, stop=docindex.stopper(ctx))
            key = (str(root), docindex.generation(connection), ties.version())
            verdicts = _verdicts.get(ctx.gate, lambda: compute(ctx.gate, connection, ties, root), key=key)
            yield Book(connection, verdicts, complete)
    finally:
        connection.close()


def clients(gate: Gate) -> dict[str, set[str]]:
    """Each way a project's client may be written (lowercased) and the projects naming it."""
    found: dict[str, set[str]] = {}
    for project in gate.projects:
        if project.client.strip():
            found.setdefault(project.client.strip().casefold(), set()).add(project.id)
    return found


def clients_of(by_client: dict[str, set[str]], key: str, extra: dict[str, Any]) -> set[str]:
    """The projects whose `client` is one of the card's addresses, its full name, its UID or its address."""
    found: set[str] = set()
    for match in (*extra.get("match", []), key.casefold(), address("contact", key).casefold()):
        found |= by_client.get(match, set())
    return found


def card_traits(root: Path | None, row: Any, named: Iterable[str] = ()) -> Traits:
    """A card's traits: its file and its address book's folder, the address book's name, every EMAIL (a display
    name allowed) and TEL as people, proven (the person's own address book), and the projects it names (its
    client, its ties)."""
    extra = json.loads(row["extra"])
    book = str(extra.get("book", ""))
    paths = (str(root / row["file"]), str(root / book) if book else str(root)) if root is not None else ()
    people = tuple(Person(value, proven=True) for value in (*extra.get("emails", []), *extra.get("tels", [])))
    return Traits(paths=paths, people=people, addressbook=book, projects=tuple(sorted(named)))


def compute(gate: Gate, connection: sqlite3.Connection, ties: Ties, root: Path | None = None) -> docindex.Verdicts:
    from gateway_mail.projects.placing import placer

    by_client = clients(gate)
    tied = tied_projects(ties, gate)
    parts = placer(gate, "contact")
    owners: dict[int, frozenset[str]] = {}
    closed = []
    for row in connection.execute("SELECT id, key, file, extra FROM docs"):
        extra = json.loads(row["extra"])
        named = set(tied.get(address("contact", row["key"]), ()))
        if by_client:
            named |= clients_of(by_client, row["key"], extra)
        book = str(extra.get("book", ""))
        mine = parts.named(named)
        if root is not None:
            folder = str(root / book) if book else str(root)
            mine = mine | parts.place(paths=(folder,), addressbook=book) | parts.file(str(root / row["file"]), folder)
        else:
            mine = mine | parts.place(addressbook=book)
        people = tuple(Person(v, proven=True) for v in (*extra.get("emails", []), *extra.get("tels", [])))
        mine = mine | parts.people(people)
        if mine:
            owners[row["id"]] = mine
        if not gate.allows(mine):
            closed.append(row["id"])
    return docindex.Verdicts(owners, frozenset(closed))


def shown(ctx: Context, row: Any, limit: int = 200) -> dict[str, Any]:
    """A contact as an answer gives it: its address and fields, each on one line.

    The index holds them masked already (with the masks of MASKS_VERSION): they are cut here, not masked again.
    """
    extra = json.loads(row["extra"])
    cut = ctx.one_line
    contact: dict[str, Any] = {"address": address("contact", row["key"]), "name": cut(row["title"], limit)}
    for key in FIELDS[1:]:
        value = extra.get(key)
        if value:
            contact[key] = [cut(v, limit) for v in value] if isinstance(value, list) else cut(value, limit)
    return contact


def lines_of(contact: dict[str, Any]) -> list[str]:
    lines = [f"{contact['address']}", f"  Name: {contact['name']}"]
    labels = {"emails": "Email", "tels": "Phone", "org": "Organisation", "title": "Title", "nickname": "Nickname",
              "categories": "Categories", "addresses": "Address", "urls": "Web", "note": "Note",
              "birthday": "Birthday"}
    for key, label in labels.items():
        value = contact.get(key)
        if value:
            lines.append(f"  {label}: {', '.join(value) if isinstance(value, list) else value}")
    return lines
