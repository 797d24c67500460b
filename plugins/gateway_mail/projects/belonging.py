"""What ties say of projects: which projects each address is tied to, read from the tie store when it changed."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gateway import Gate
from gateway_mail.mail.gating import Tied
from gateway_mail.noted import Noted, noted_in
from gateway_mail.projects.ties import FILE_NAME, Ties, ident_of


class TieMap(dict[str, frozenset[str]]):
    """Each address tied to a project and its projects, with `key`: a hashable value equal for equal maps (for what
    is remembered per tie store). Shared by the calls that read the same store unchanged: read it, never change it."""

    __slots__ = ("key",)

    def __init__(self, found: dict[str, frozenset[str]]) -> None:
        super().__init__(found)
        self.key = tuple(sorted((address, tuple(sorted(projects))) for address, projects in found.items()))


def tied_projects(ties: Ties, gate: Gate) -> TieMap:
    """Each address tied to a project of the manifest, and those projects (a tie to an unknown id owns nothing)."""
    return _projects_of(ties.all(), frozenset(p.id for p in gate.projects))


def _projects_of(rows: Iterable[tuple[str, str]], known: frozenset[str]) -> TieMap:
    found: dict[str, set[str]] = defaultdict(set)
    for a, b in rows:
        for project_end, other in ((a, b), (b, a)):
            project = ident_of(project_end, "project")
            if project is not None and project in known and ident_of(other, "project") is None:
                found[other].add(project)
    return TieMap({address: frozenset(projects) for address, projects in found.items()})


class _Watched:
    """A tie store kept open, its ties, and the maps made of them per set of known projects.

    SQLite's `PRAGMA data_version` changes whenever another connection (this process's tie tools, another process)
    commits to the store, and this connection is used for nothing else: when it is unchanged, so are the ties. The
    file's device, inode, size and time are compared too: a store deleted and made again (the open connection holds
    the old inode, so the new one differs), a checkpoint, or a file written over by other means is opened anew."""

    def __init__(self, path: Path) -> None:
        self.ties = Ties.at(path)
        self.file = _file_signature(os.stat(path))
        self.pid = os.getpid()
        self.version: int | None = None
        self.rows: list[tuple[str, str]] = []
        self.maps: dict[frozenset[str], TieMap] = {}

    def current(self, known: frozenset[str]) -> TieMap:
        version = self.ties.connection.execute("PRAGMA data_version").fetchone()[0]
        if version != self.version:  # the version is read before the rows: a tie made in between is read next time
            self.rows, self.version = self.ties.all(), version
            self.maps.clear()
        found = self.maps.get(known)
        if found is None:
            if len(self.maps) >= 8:
                self.maps.clear()
            found = self.maps[known] = _projects_of(self.rows, known)
        return found


def _file_signature(status: os.stat_result) -> tuple[int, int, int, int]:
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns


_watched: OrderedDict[str, _Watched] = OrderedDict()
_watched_lock = threading.Lock()
_left: list[_Watched] = []  # a parent process's connections, seen in a forked child: never used nor closed there
WATCHED_STORES = 8


def tie_map_at(path: Path, gate: Gate) -> TieMap:
    """The tie map of the store at `path` for the gate's manifest (made, 0600, when missing, as `Ties.at` does),
    read again only when a tie was made since: a warm call pays one stat and one pragma, not a connection."""
    known = frozenset(p.id for p in gate.projects)
    with _watched_lock:
        watched = _watched.get(str(path))
        if watched is not None and watched.pid != os.getpid():
            _left.extend(_watched.values())  # SQLite connections must not cross a fork; the parent keeps using them
            _watched.clear()
            watched = None
        if watched is not None:
            try:
                status = os.stat(path)
            except FileNotFoundError:
                status = None
            if status is None or _file_signature(status) != watched.file:
                del _watched[str(path)]
                watched.ties.close()
                watched = None
        if watched is None:
            watched = _watched[str(path)] = _Watched(path)
            while len(_watched) > WATCHED_STORES:
                _watched.popitem(last=False)[1].ties.close()
        _watched.move_to_end(str(path))
        return watched.current(known)


_mail_ties: dict[str, tuple[Any, Tied]] = {}
# Per tie store: its files' look, which file notifications stand in for while they are quiet.
_ties_noted: dict[str, Noted] = {}


def mail_ties(data_folder: Path) -> Tied:
    """The projects each message is tied to (`mid:` addresses), read again only when the tie store's files change;
    no store yet: none (nothing is created to find that out).

    Whether they changed: no event for the store or its write-ahead log since the last look found them unchanged
    (`gateway_mail.noted`, one look at the notifications); else two stats. A tie committed before a call wrote the
    log (or, after a checkpoint, the store) before that call began."""
    files = _tie_files.get(data_folder)
    if files is None:
        path = data_folder / FILE_NAME
        if len(_tie_files) >= 8:
            _tie_files.clear()
        files = _tie_files[data_folder] = (path, Path(f"{path}-wal"))
    noted = noted_in(_ties_noted, files)
    tied = noted.seen()
    if tied is None:
        tied = noted.look(lambda: _mail_ties_read(files[0], files))
    return tied


# The tie store and its write-ahead log, by the data folder they are in: two paths made once, not on every call.
_tie_files: dict[Path, tuple[Path, Path]] = {}


def _mail_ties_read(path: Path, files: tuple[Path, Path]) -> Tied:
    """The ties of the store at `path`, read again only when a stat of `files` (the store and its log) changed."""
    signature = tuple(_signature(file) for file in files)
    if signature[0] is None:
        return Tied()
    cached = _mail_ties.get(str(path))
    if cached is not None and cached[0] == signature:
        return cached[1]
    found: dict[str, set[str]] = defaultdict(set)
    with Ties.at(path) as ties:
        for a, b in ties.all():
            for project_end, other in ((a, b), (b, a)):
                project = ident_of(project_end, "project")
                message = other[len("mid:"):] if other.startswith("mid:") else ""
                if project is not None and message:
                    found[message].add(project)
        version = ties.version()
    tied = Tied({message: frozenset(projects) for message, projects in found.items()}, version)
    if len(_mail_ties) > 8:
        _mail_ties.clear()
    _mail_ties[str(path)] = (signature, tied)
    return tied


def _signature(path: Path) -> tuple[int, int] | None:
    try:
        status = path.stat()
    except FileNotFoundError:
        return None
    return status.st_size, status.st_mtime_ns
