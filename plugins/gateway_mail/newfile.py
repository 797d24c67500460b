"""A new file under a folder, with a name nothing has, written whole or not at all.

The name comes from a title made safe (`safe_name`): no separator, no `..`, no drive (`C:`), no device name
(`CON`, `NUL`, `COM1`...), no leading dot, cut by bytes at a character's edge. The folder under the root is
walked one component at a time with `O_NOFOLLOW` directory descriptors, so a link on the way is refused even
if it appears while we walk. The text is written to a temporary name created exclusively, fsynced, then
hard-linked to its name (a link fails rather than replace a file: two files of one title both exist, as
"Title.md" and "Title (2).md"); a crash leaves at most the temporary dot-file, never a half file under the name.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import unicodedata
from collections.abc import Sequence
from pathlib import Path

from gateway import ToolError

MAX_NAME_BYTES = 200  # of the stem: room for " (999)", a suffix and the temporary name within NAME_MAX (255)
MAX_DEPTH = 16
_DEVICES = frozenset({"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$",
                      *(f"{d}{n}" for d in ("COM", "LPT") for n in (*"0123456789", "¹", "²", "³"))})
_UNSAFE = re.compile(r'[\x00-\x1f\x7f\x85\u2028\u2029/\\:*?"<>|]')
_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")


def is_device(name: str) -> bool:
    """A name Windows takes for a device whatever its extension ("nul.md", "COM1 .txt")."""
    return name.split(".", 1)[0].rstrip(" ").upper() in _DEVICES


def cut_bytes(text: str, limit: int) -> str:
    """`text` cut to at most `limit` UTF-8 bytes, never inside a character."""
    return text.encode("utf-8")[:limit].decode("utf-8", "ignore")


def safe_name(title: str, suffix: str = "", limit: int = MAX_NAME_BYTES, fallback: str = "note") -> str:
    """A file name made from a one-line title: unsafe characters become "-", cut by bytes, then `suffix`."""
    stem = unicodedata.normalize("NFC", title)
    stem = _UNSAFE.sub("-", " ".join(stem.split()))
    stem = cut_bytes(stem, limit)
    # Leading dots hide a file (and make "..");  trailing dots and spaces are dropped by Windows.
    stem = stem.lstrip(". ").rstrip(". ")
    if not stem:
        stem = fallback
    if is_device(stem):
        stem = f"_{stem}"
    return stem + suffix


def folder_parts(folder: str | Sequence[str] | None, writing: bool = True) -> tuple[str, ...]:
    """A folder under the root as its components, or a ToolError: relative, no `..`, no drive, no device name.

    Writing, no name may hold ":" (a drive, or an NTFS stream); reading, an existing file's name may (only a
    first component written as a drive is refused).
    """
    if folder is None or folder == "" or folder == ():
        return ()
    if isinstance(folder, str):
        if _CONTROL.search(folder):
            raise ToolError("a folder must be on one line (no line break or control character)")
        if folder.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:", folder):
            raise ToolError(f"the folder must be relative to the notes folder, not {folder!r:.80}")
        parts = [p for p in re.split(r"[/\\]", folder) if p not in ("", ".")]
    else:
        parts = list(folder)
    if len(parts) > MAX_DEPTH:
        raise ToolError(f"a folder at most {MAX_DEPTH} levels deep")
    if parts and re.match(r"^[A-Za-z]:", parts[0]):
        raise ToolError(f"the path must be relative to its folder, not {parts[0]!r:.40}")
    for part in parts:
        if part == ".." or (writing and ":" in part) or _CONTROL.search(part) or "/" in part or "\\" in part:
            raise ToolError(f"the folder may not hold {part!r:.40} (no '..', drive or separator in a name)")
        if is_device(part):
            raise ToolError(f"{part!r:.40} is a device name on Windows; choose another folder name")
        if len(part.encode("utf-8")) > MAX_NAME_BYTES:
            raise ToolError("a folder name is too long")
    return tuple(parts)


def open_folder(root: Path, parts: Sequence[str], make: bool = True) -> int:
    """A descriptor of root/parts, walked without following any link under the root; the caller closes it."""
    directory = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts:
            if make:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o700, dir_fd=directory)
            try:
                child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=directory)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR):
                    # Writing, nothing was (the caller writes only into the folder this gives); reading, no link
                    # is followed.
                    tail = "nothing was written" if make else "links are not followed"
                    raise ToolError(f"{part!r:.40} on the way is a link or a file, not a folder; {tail}") from None
                if error.errno == errno.ENOENT:
                    raise ToolError(f"no folder {part!r:.40} there") from None
                raise
            os.close(directory)
            directory = child
    except BaseException:
        os.close(directory)
        raise
    return directory


def create(root: Path, title: str, data: bytes, *, folder: str | Sequence[str] | None = None, suffix: str = ".md",
           make_folders: bool = True, fallback: str = "note") -> Path:
    """Write `data` as a new file under root/folder named from `title`; its path relative to `root`."""
    parts = folder_parts(folder)
    stem = safe_name(title, "", fallback=fallback)
    directory = open_folder(root, parts, make_folders)
    try:
        temporary = f".{secrets.token_hex(8)}.tmp"
        handle = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o644, dir_fd=directory)
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            name = _link_unused(directory, temporary, stem, suffix)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary, dir_fd=directory)
        os.fsync(directory)
    finally:
        os.close(directory)
    return Path(*parts, name)


def _link_unused(directory: int, temporary: str, stem: str, suffix: str) -> str:
    for number in range(1, 1000):
        name = stem + suffix if number == 1 else f"{stem} ({number}){suffix}"
        try:
            os.link(temporary, name, src_dir_fd=directory, dst_dir_fd=directory, follow_symlinks=False)
            return name
        except FileExistsError:
            continue
        except OSError as error:
            if error.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
                raise
        # A file system without hard links: take the name exclusively (empty), then rename the whole file onto it.
        try:
            os.close(os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600, dir_fd=directory))
        except FileExistsError:
            continue
        os.rename(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
        return name
    raise ToolError("no unused name could be made for that title; choose another")
