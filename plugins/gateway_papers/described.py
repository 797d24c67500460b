"""Each paper described for the core's gate (`gateway.Traits`), the same way for the tools and for the person's
`gateway access why` and `gateway access list`.

- paths: the paper's file (and an image's sidecar; an export's original and archive), for `paths` routes;
- people: its correspondent, when it is an e-mail address or a phone number, for `senders` routes: proven when it
  is a folder the person named (their own filing), not proven when paperless-ngx set it (its matching reads the
  document's own words, which a stranger writes);
- words: its title, its correspondent and its text, all masked as stored, for `subjects` routes;
- projects: its tags that are a project's id, or `project:<id>`.

A file that could not be read is described by what is known without reading it: its path, its name and its
folder's correspondent.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from gateway import Person, PluginHost, Traits
from gateway_papers import folder as places
from gateway_papers import store

_ADDRESS = re.compile(r"^[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+$")
_PHONE = re.compile(r"^\+?[\d\s().\-/]{6,}$")
UNPROVEN = "paperless-ngx may have set the correspondent by matching the document's own words"


def projects_of(tags: Iterable[str]) -> tuple[str, ...]:
    found = []
    for tag in tags:
        tag = tag.strip()
        found.append(tag[len("project:"):].strip() if tag.casefold().startswith("project:") else tag)
    return tuple(t for t in found if t)


def person_of(correspondent: str, proven: bool) -> tuple[Person, ...]:
    name = correspondent.strip()
    if _ADDRESS.match(name) or _PHONE.match(name):
        return (Person(name, proven=proven, why_unproven="" if proven else UNPROVEN),)
    return ()


def traits(row: Mapping, tied: Iterable[str] = ()) -> Traits:
    """A stored paper's traits (a `docs` row)."""
    tags = json.loads(row["tags"])
    return Traits(paths=tuple(json.loads(row["paths"])), people=person_of(row["correspondent"], bool(row["proven"])),
                  words=(row["title"], row["correspondent"], row["text"]),
                  projects=(*projects_of(tags), *tied))


def file_traits(root: Path | None, path: str, contracts: Iterable[str], letters: Iterable[str]) -> Traits:
    """A file not read (or read in part): its path, its name and its folder's correspondent."""
    from gateway import mask

    file = Path(path)
    correspondent = places.correspondent_of(places.folders_of(root, file), contracts, letters) if root else ""
    return Traits(paths=(path,), people=person_of(correspondent, True),
                  words=(mask(file.stem), mask(correspondent)))


def _cache(gateway: PluginHost) -> Path:
    return Path(gateway.folders.cache)


def traits_of(gateway: PluginHost, address: str) -> Traits | None:
    """The traits of the paper at `papers:doc/<id>`; None when the address is not the plugin's or not known."""
    if not address.startswith(store.PREFIX):
        return None
    connection = store.reader_of(_cache(gateway))
    if connection is None:
        return None
    try:
        row = connection.execute("SELECT * FROM docs WHERE address = ?", (address.strip(),)).fetchone()
        return traits(row) if row is not None else None
    finally:
        connection.close()


def census(gateway: PluginHost) -> Iterator[tuple[str, Traits]]:
    """(`papers` with the paper's kind, traits) for every stored paper."""
    connection = store.reader_of(_cache(gateway))
    if connection is None:
        return
    try:
        rows = connection.execute("SELECT * FROM docs ORDER BY id").fetchall()
    except sqlite3.Error:
        rows = []
    finally:
        connection.close()
    for row in rows:
        yield f"papers ({row['kind']}s)", traits(row)
