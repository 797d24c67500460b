"""Time and invoices as the gate sees them (`gateway.Traits`), for the tools and for the person's `gateway access`.

- An interval: its data file (`paths`), its tags and annotation (`words`, masked as stored), and the projects
  its tags name (`projects`): a tag equal to a project's id, or `project:<id>`, puts it in that project.
- An invoice: its PDF (`paths`, every copy's), its seller's and buyer's e-mail addresses (`people`, never proven:
  anyone can write a PDF, so an open project's sender route does not take it, a closed one's does), their names,
  its number and its references (`words`), and the projects its references name (`projects`): a reference (the
  buyer's reference, the project, contract or order reference, the remittance text), or one of its words cut at
  spaces, commas, semicolons, slashes and `#`, that is a project's id or `project:<id>`.

The core decides which routes take them; the plugin only describes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from gateway import Person, PluginHost, Traits

INTERVAL = "time:interval/"
INVOICE = "time:invoice/"
_CUT = re.compile(r"[\s,;/#]+")
REFERENCES = ("buyer_reference", "project_reference", "contract", "order", "remittance")
WORDS = ("number", "buyer_reference", "project_reference", "project_name", "contract", "order", "remittance",
         "notes", "terms")


def _named(value: str) -> list[str]:
    """The project ids a tag or a reference may name: itself, and what follows `project:`."""
    value = value.strip()
    if not value:
        return []
    found = [value]
    if value.casefold().startswith("project:"):
        found.append(value[len("project:"):].strip())
    return [v for v in found if v]


def interval_traits(path: str, tags: Iterable[str], annotation: str) -> Traits:
    tags = list(tags)
    projects = [p for tag in tags for p in _named(tag)]
    return Traits(paths=(path,), words=(*tags, annotation) if annotation else tuple(tags), projects=tuple(projects))


def invoice_traits(paths: Iterable[str], fields: dict[str, Any]) -> Traits:
    people: list[Person] = []
    words: list[str] = []
    for side in ("seller", "buyer"):
        party = fields.get(side) or {}
        if party.get("name"):
            words.append(party["name"])
        for address in str(party.get("emails") or "").split(";"):
            if "@" in address:
                people.append(Person(address.strip(), proven=False))
    words += [str(fields.get(key)) for key in WORDS if fields.get(key)]
    projects: list[str] = []
    for key in REFERENCES:
        reference = str(fields.get(key) or "")
        projects += _named(reference)
        for word in _CUT.split(reference):
            projects += _named(word)
    return Traits(paths=tuple(paths), people=tuple(people), words=tuple(words),
                  projects=tuple(dict.fromkeys(projects)))


def _store(gateway: PluginHost):  # noqa: ANN202 (a read-only sqlite3 connection, or None)
    import sqlite3

    from gateway_time.store import STORE_FILE

    path = Path(gateway.folders.cache) / STORE_FILE
    if not path.exists():
        return None
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    connection.row_factory = sqlite3.Row
    return connection


def invoices_by_key(connection: Any) -> dict[str, tuple[list[str], dict[str, Any]]]:
    """Each invoice once: its key, the paths of all its copies, and its fields (the first copy's)."""
    found: dict[str, tuple[list[str], dict[str, Any]]] = {}
    for row in connection.execute("SELECT i.key, i.fields, f.path FROM invoices i JOIN files f ON f.id = i.file "
                                  "ORDER BY f.path"):
        entry = found.setdefault(row["key"], ([], json.loads(row["fields"])))
        entry[0].append(row["path"])
    return found


def traits_of(gateway: PluginHost, address: str) -> Traits | None:
    """The traits of `time:interval/<start>` or `time:invoice/<id>`, as the tools give them to the gate."""
    if not address.startswith((INTERVAL, INVOICE)):
        return None
    connection = _store(gateway)
    if connection is None:
        return None
    try:
        if address.startswith(INVOICE):
            found = invoices_by_key(connection).get(address[len(INVOICE):])
            return invoice_traits(*found) if found else None
        from datetime import UTC, datetime

        try:
            start = int(datetime.strptime(address[len(INTERVAL):], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC).timestamp())
        except ValueError:
            return None
        row = connection.execute("SELECT f.path, i.tags, i.annotation FROM intervals i JOIN files f ON f.id = i.file "
                                 "WHERE i.start = ? LIMIT 1", (start,)).fetchone()
        return interval_traits(row["path"], json.loads(row["tags"]), row["annotation"]) if row else None
    finally:
        connection.close()


def census(gateway: PluginHost) -> Iterator[tuple[str, Traits]]:
    """Every interval (`timewarrior intervals`) and every invoice (`invoices`) in the store."""
    connection = _store(gateway)
    if connection is None:
        return
    try:
        for row in connection.execute("SELECT f.path, i.tags, i.annotation FROM intervals i "
                                      "JOIN files f ON f.id = i.file"):
            yield "timewarrior intervals", interval_traits(row["path"], json.loads(row["tags"]), row["annotation"])
        for paths, fields in invoices_by_key(connection).values():
            yield "invoices", invoice_traits(paths, fields)
    finally:
        connection.close()
