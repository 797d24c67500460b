"""Maildir on disk: the folders of an account whatever the layout, the flags of a file, and the path rules.

Folders are found by walking the account's tree for every directory holding both `cur/` and `new/`, so that
mbsync's verbatim nesting (`Archive/2026/cur`), Maildir++ dot folders (`.Archive.2026/cur`) and offlineimap's
flat names (`INBOX.Sent/cur`) are all seen; `mailbox.Maildir.list_folders()` alone misses the first kind.
A folder's name is always written with `/`: what the manifest's `folders` routes match.

A dot means nesting only where the layout present says so (`layout_of`): at the top, a name starting with a
dot is Maildir++ (`.Archive.2026` is `Archive/2026`); a dotted name without one (`INBOX.Sent`) is offlineimap's
separator only when its parent (`INBOX`) is a folder beside it and no folder is nested in a real
subdirectory (mbsync's layout, where a dot is only a dot); otherwise the name is kept (`v1.2` stays `v1.2`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from attrs import frozen

SUBDIRS = ("new", "cur")
# The info separator: ":" normally, "!" or ";" on file systems that refuse ":" (mbsync's InfoDelimiter).
_INFO = re.compile(r"[:!;]2,([A-Za-z]*)$")
# Never descended into: a Maildir's own parts, mbsync's and Dovecot's state, and anything hidden that is not
# a Maildir++ folder (those start with "." and hold cur/ and new/).
_SKIP = {"cur", "new", "tmp"}
_MAX_DEPTH = 12


@frozen
class Folder:
    name: str  # with "/" whatever the layout: "INBOX", "Archive/2026"
    path: Path


def layout_of(relatives: list[str]) -> frozenset[str]:
    """The top-level names that are offlineimap parents in this account (`INBOX` when `INBOX.Sent` is beside it).

    Empty when any folder is nested in a real subdirectory: that is mbsync's layout, where a dot is a dot.
    """
    tops = [r for r in relatives if r not in ("", ".")]
    if any(os.sep in r for r in tops):
        return frozenset()
    plain = {r for r in tops if not r.startswith(".")}
    return frozenset(r for r in plain if any(other.startswith(r + ".") for other in plain))


def folder_name(relative: str, parents: frozenset[str] = frozenset()) -> str:
    """`relative` (the folder's path under the account's root) as the name routes match.

    `parents` (from `layout_of`) are the top-level folders whose dotted neighbours are offlineimap nesting.
    """
    if relative in ("", "."):
        return "INBOX"
    parts = relative.split(os.sep)
    if parts[0].startswith(".") and len(parts) == 1:  # Maildir++: ".Archive.2026"
        return "/".join(p for p in parts[0][1:].split(".") if p)
    if len(parts) == 1 and any(parts[0].startswith(parent + ".") for parent in parents):  # offlineimap
        return "/".join(p for p in parts[0].split(".") if p)
    return "/".join(parts)  # mbsync's verbatim nesting, or a name that holds a dot


def is_maildir(path: Path) -> bool:
    return all((path / sub).is_dir() for sub in SUBDIRS)


def _walk(root: Path) -> Iterator[tuple[Path, bool]]:
    """The walk that finds an account's folders: each directory it enters (True), and each hidden directory it
    passes by because it is no Maildir (False). Links are not followed: a folder linked from elsewhere is not the
    account's."""
    stack = [(root, 0)]
    while stack:
        here, depth = stack.pop()
        yield here, True
        if depth >= _MAX_DEPTH:
            continue
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for entry in entries:
            if entry.name in _SKIP or not entry.is_dir(follow_symlinks=False):
                continue
            path = Path(entry.path)
            if entry.name.startswith(".") and not is_maildir(path):
                yield path, False
                continue
            stack.append((path, depth + 1))


def folders(root: Path) -> list[Folder]:
    """Every Maildir folder under an account's root, the root itself included when it is one."""
    if not root.is_dir():
        return []
    present = [(os.path.relpath(here, root), here) for here, entered in _walk(root) if entered and is_maildir(here)]
    parents = layout_of([relative for relative, _path in present])
    found = [Folder(folder_name(relative, parents), path) for relative, path in present]
    found.sort(key=lambda f: (f.name != "INBOX", f.name.lower()))
    return found


def looked_at(root: Path) -> list[Path]:
    """What `folders(root)` reads to find the folders, as paths whose change (a folder's time) would change them:
    every directory it walks, and the `cur` and `new` of each hidden directory it passes by (were they made, it
    would take that directory as a Maildir++ folder). The root alone when it is not a directory."""
    if not root.is_dir():
        return [root]
    looked: list[Path] = []
    for path, entered in _walk(root):
        looked += [path] if entered else [path / sub for sub in SUBDIRS]
    return looked


def _info_start(filename: str) -> int:
    """Where the info suffix (":2,...") starts, or -1; a plain search first (the regular expression is slower)."""
    at = filename.rfind(":2,")
    if at >= 0 and _INFO.match(filename, at):
        return at
    match = _INFO.search(filename)
    return match.start() if match else -1


def flags_of(filename: str) -> str:
    """The flags in a file's info suffix (uppercase letters only: lowercase ones are Dovecot keywords)."""
    at = _info_start(filename)
    return "".join(sorted(c for c in filename[at + 3:] if c.isupper())) if at >= 0 else ""


def unique_of(filename: str) -> str:
    """The file's name without its info suffix: what stays when the file moves from new/ to cur/ or its flags change."""
    at = _info_start(filename)
    return filename[:at] if at >= 0 else filename


def messages(folder: Path) -> Iterator[os.DirEntry[str]]:
    for sub in SUBDIRS:
        try:
            with os.scandir(folder / sub) as entries:
                for entry in entries:
                    if not entry.name.startswith(".") and entry.is_file(follow_symlinks=False):
                        yield entry
        except FileNotFoundError:
            continue


class PathRefused(ValueError):
    """A path that is not a message inside the accounts' folders."""


def checked_path(written: str, roots: list[Path]) -> Path:
    """The message file `written` names, or PathRefused: inside an account's root as written, then once resolved.

    As written: absolute, no `..`, no other computer's share (`//host/share`, `\\\\host\\share`), no backslash,
    no control character. Resolved: the real file (links followed) must be inside the real root too, in a
    folder's `cur/` or `new/`.
    """
    if not written or any(ord(c) < 32 for c in written) or "\\" in written:
        raise PathRefused("a path with a backslash or a control character")
    if written.startswith("//"):
        raise PathRefused("another computer's share")
    if not written.startswith("/"):
        raise PathRefused("a relative path")
    if ".." in written.split("/"):
        raise PathRefused("a path with ..")
    literal = Path(os.path.normpath(written))
    for root in roots:
        root_literal = Path(os.path.normpath(str(root)))
        if root_literal not in literal.parents:
            continue
        real, real_root = Path(os.path.realpath(literal)), Path(os.path.realpath(root))
        if real_root not in real.parents:
            raise PathRefused("a link that leads out of the mail folders")
        if real.parent.name not in SUBDIRS or not real.is_file():
            raise PathRefused("not a message file (in a folder's cur/ or new/)")
        return real
    raise PathRefused("a path outside the accounts' mail folders")
