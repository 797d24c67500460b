"""Notes: Markdown files in the notes folder and its subfolders, indexed masked; read and added, never changed.

A note's address is `sioul:note/<its path under the notes folder>` (%-escaped). It belongs to the projects whose
`paths` routes take its file (a folder the project names, or the file itself) and to those it is tied to.
A note never leaves the notes folder: paths are checked as written (relative, no `..`, no drive, no device
name), then opened one folder at a time without following a link; hidden folders and links are never indexed.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from attrs import frozen

from gateway import Context, Gate, GateMemo, ToolError, Traits, mask
from gateway_mail import docindex, newfile
from gateway_mail.projects.belonging import tied_projects
from gateway_mail.projects.ties import Ties, address, ident_of

SUFFIXES = (".md", ".markdown")
INDEX_FILE = "notes-index.sqlite"
MAX_INDEXED = 1_000_000  # bytes of a note read into the index
MAX_READ = 200_000  # characters of a note given by read_note
MAX_TITLE = 200
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_FRONT = re.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*\n", re.DOTALL)
_FRONT_TITLE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.MULTILINE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")


def note_address(relative: str) -> str:
    return address("note", relative)


def title_of(text: str, relative: str) -> str:
    """The front matter's title, else the first heading, else the file's name without its suffix."""
    front = _FRONT.match(text)
    if front:
        found = _FRONT_TITLE.search(front.group(1))
        if found:
            return found.group(1).strip("'\"")
    heading = _HEADING.search(text[:20_000])
    if heading:
        return heading.group(1)
    name = relative.rpartition("/")[2]
    return name.rsplit(".", 1)[0] if "." in name else name


def read_file(path: Path, relative: str) -> list[docindex.Doc]:
    with open(path, "rb") as file:
        raw = file.read(MAX_INDEXED)
    text = mask(raw.decode("utf-8", "replace"))
    title = " ".join(title_of(text, relative).split())[:MAX_TITLE]
    return [docindex.Doc(relative, title, text, {"folder": relative.rpartition("/")[0]},
                         os.stat(path).st_mtime)]


_verdicts: GateMemo[docindex.Verdicts] = GateMemo(gates=4)


@frozen
class Shelf:
    """One call's view of the notes: the folder, the index (refreshed), what the gate keeps."""

    root: Path
    connection: sqlite3.Connection
    verdicts: docindex.Verdicts
    complete: bool = True  # False while a first index is still being built (the next call goes on)

    def owners(self, row: Any) -> frozenset[str]:
        return self.verdicts.owners.get(row["id"], frozenset())

    @property
    def closed_json(self) -> str:
        return json.dumps(sorted(self.verdicts.closed))


def folder(ctx: Context) -> Path | None:
    return ctx.path_setting("notes")


def root_of(ctx: Context) -> Path:
    root = folder(ctx)
    if root is None:
        raise ToolError('no notes folder is set: the person adds notes = "~/Notes" to [plugins.mail] in the config')
    if not root.is_dir():
        from gateway_mail.shown import shown_path

        raise ToolError(f"the notes folder {shown_path(root)} does not exist (the setting notes in [plugins.mail])")
    return root


@contextlib.contextmanager
def opened(ctx: Context, ties: Ties) -> Iterator[Shelf]:
    root = root_of(ctx)
    connection = docindex.connect(Path(ctx.folders.cache) / INDEX_FILE, root)
    try:
        with ctx.interruptible(connection):
            complete = docindex.refresh(connection, root, SUFFIXES, read_file, stop=docindex.stopper(ctx))
            key = (str(root), docindex.generation(connection), ties.version())
            verdicts = _verdicts.get(ctx.gate, lambda: compute(ctx.gate, root, connection, ties), key=key)
            yield Shelf(root, connection, verdicts, complete)
    finally:
        connection.close()


def note_traits(root: Path, relative: str, title: str = "", text: str = "",
                tied: dict[str, frozenset[str]] | None = None) -> Traits:
    """A note's traits: its file (a hard link of it is the same file: the gate finds its other names), its title
    and masked text, and the projects it is tied to."""
    return Traits(paths=(str(root / relative),), words=(title, text),
                  projects=tuple(sorted((tied or {}).get(note_address(relative), frozenset()))))


def path_owners(gate: Gate, root: Path, relative: str) -> frozenset[str]:
    """The projects whose routes take a note's file (before it is read: read_note and add_note ask this first)."""
    return gate.owners(Traits(paths=(str(root / relative),)))


def owners_of(gate: Gate, root: Path, relative: str, tied: dict[str, frozenset[str]], title: str = "",
              text: str = "") -> frozenset[str]:
    """The projects whose routes take a note: its file, its words when given (the index's), its ties."""
    from gateway_mail.projects.placing import placer

    parts = placer(gate, "note")
    found = path_owners(gate, root, relative) | parts.named(tied.get(note_address(relative), frozenset()))
    return found | parts.words((title, text)) if title or text else found


def _bulk_owners(gate: Gate, root: Path, relative: str, tied: dict[str, frozenset[str]], title: str,
                 text: str) -> frozenset[str]:
    """`owners_of` for every note at once: its folder asked once, its own file only when a path route could take
    it and not its folder, or when it has other names (a hard link); see `projects.placing`."""
    from gateway_mail.projects.placing import placer

    parts = placer(gate, "note")
    path = str(root / relative)
    folder = os.path.dirname(path)
    try:
        linked = os.stat(path).st_nlink > 1
    except OSError:
        linked = False
    found = parts.place(paths=(folder,)) | parts.file(path, folder, linked)
    found = found | parts.named(tied.get(note_address(relative), frozenset()))
    return found | parts.words((title, text))


def compute(gate: Gate, root: Path, connection: sqlite3.Connection, ties: Ties) -> docindex.Verdicts:
    tied = tied_projects(ties, gate)
    owners: dict[int, frozenset[str]] = {}
    closed = []
    for row in connection.execute("SELECT d.id, d.key, d.title, f.body FROM docs d JOIN docs_fts f ON f.rowid = d.id"):
        mine = _bulk_owners(gate, root, row["key"], tied, row["title"], row["body"])
        if mine:
            owners[row["id"]] = mine
        if not gate.allows(mine):
            closed.append(row["id"])
    return docindex.Verdicts(owners, frozenset(closed))


def relative_of(value: str) -> str:
    """The path under the notes folder that a `sioul:note/<path>` names, checked as written, or a ToolError."""
    relative = ident_of(value.strip(), "note")
    if relative is None:
        raise ToolError(f"{value!r:.80} is not a note's address: sioul:note/<path under the notes folder>")
    parts = newfile.folder_parts(relative, writing=False)
    if not parts or not parts[-1].lower().endswith(SUFFIXES):
        raise ToolError(f"{value!r:.80} names no note (a Markdown file: .md or .markdown)")
    if any(part.startswith(".") for part in parts):
        raise ToolError("hidden files and folders are not notes")
    return "/".join(parts)


def read_text(root: Path, relative: str) -> tuple[str, bool]:
    """The note's text (cut at MAX_READ characters, and whether it was), opened without following any link.

    Its refusals are read_note's (the note resources read through it too), and say so.
    """
    *parts, name = relative.split("/")
    try:
        directory = newfile.open_folder(root, parts, make=False)
    except ToolError as error:
        raise ToolError(f"read_note cannot open that note: {error}") from None
    try:
        handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise ToolError("read_note cannot open that note: it is a link, and links are not followed out of the "
                            "notes folder") from None
        if error.errno in (errno.ENOENT, errno.ENOTDIR):
            raise ToolError("read_note finds no note at that address; search_notes gives the notes' addresses") from None
        raise
    finally:
        os.close(directory)
    with os.fdopen(handle, "rb") as file:
        # O_NONBLOCK above: a FIFO named like a note does not hang the call; only a regular file is read.
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise ToolError("read_note cannot open that note: the address names no regular file")
        raw = file.read(MAX_READ * 4 + 4)
    text = raw.decode("utf-8", "replace")
    return (text[:MAX_READ], True) if len(text) > MAX_READ else (text, False)


def check_title(title: str) -> str:
    if _CONTROL.search(title):
        raise ToolError("the title must be on one line (no line break or control character)")
    title = " ".join(title.split())
    if not title:
        raise ToolError("the title is empty")
    if len(title) > 1000:
        raise ToolError(f"the title has {len(title)} characters; at most 1000 (the file's name is shortened anyway)")
    return title


def write(root: Path, title: str, text: str, parts: tuple[str, ...]) -> str:
    """A new note file (its path under the root): a heading with the title, then the text."""
    body = text if text.endswith("\n") else text + "\n"
    data = f"# {title}\n\n{body}".encode()
    return newfile.create(root, title, data, folder=parts, suffix=".md").as_posix()
