"""The documents folder: which files are papers, and what their place says of them (kind, correspondent, date).

Found at any depth, hidden files and folders and symbolic links left out (a link could lead anywhere on the
computer): PDFs, images (`.png`, `.jpg`, `.jpeg`, `.tif`, `.tiff`, `.webp`, `.gif`, `.bmp`), plain text (`.txt`,
`.md`), and paperless-ngx exports (a folder holding `manifest.json` and `metadata.json`, as its exporter writes
them; every file under it is the export's). An image's text layer is a sidecar beside it
(`scan.txt` or `scan.jpg.txt`, or tesseract's `scan.hocr`): no OCR engine runs here; a sidecar is not a paper of its
own.

- Kind: `contract` or `letter` when a word of a folder on the way to the file (or of the export's document type)
  is one of the `contracts` or `letters` settings' words (`contracts/`, `Letters 2024/`, `Rental agreement`),
  the nearest folder first; else `paper`.
- Correspondent: the nearest folder on the way that is neither the documents folder, nor a kind's folder, nor a
  year or a month (`2024`, `03`); the export's correspondent for an export's document.
- Date: a date at the start of the file's name (`2024-03-01 Statement.pdf`, `20240301-statement.pdf`), else the
  PDF's creation date, else the file's modification day.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from datetime import date, datetime
from pathlib import Path

from attrs import frozen

PDF = frozenset({".pdf"})
IMAGES = frozenset({".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".gif", ".bmp"})
TEXTS = frozenset({".txt", ".md"})
SIDECARS = (".txt", ".hocr")
MANIFEST = "manifest.json"
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_DATED = re.compile(r"^(\d{4})[-_.]?(\d{2})[-_.]?(\d{2})(?:\b|_|(?=[A-Za-z]))[\s_.\-]*")
_PERIOD = re.compile(r"^\d{1,4}([-_ ]\d{1,2})?$")


@frozen
class Found:
    """What a walk of the folder found: each file by its kind, the manifests, and each image's sidecar."""

    files: dict[Path, str]  # path -> "pdf", "image", "text"
    manifests: tuple[Path, ...]
    sidecars: dict[Path, Path]  # image -> its sidecar
    truncated: bool = False
    folders: tuple[str, ...] = ()  # every folder walked, for the file notifications

    def stamp(self, path: Path, status: os.stat_result) -> str:
        own = f"{status.st_size}:{status.st_mtime_ns}"
        sidecar = self.sidecars.get(path)
        if sidecar is None:
            return own
        try:
            other = sidecar.stat()
        except OSError:
            return own
        return f"{own}|{sidecar.name}:{other.st_size}:{other.st_mtime_ns}"


def walk(root: Path | None, max_files: int) -> Found:
    """Every paper's file under `root` (at most `max_files`), without following links or entering hidden folders."""
    files: dict[Path, str] = {}
    manifests: list[Path] = []
    texts: dict[Path, Path] = {}
    images: list[Path] = []
    walked: list[str] = []
    truncated = False
    if root is None or not root.is_dir():
        return Found({}, (), {})
    for folder, folders, names in os.walk(root, followlinks=False):
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        walked.append(folder)
        here = Path(folder)
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = here / name
            suffix = path.suffix.lower()
            if name == MANIFEST:
                if "metadata.json" in names:  # paperless-ngx's exporter writes both, always
                    manifests.append(path)
                continue
            if suffix not in PDF | IMAGES | TEXTS and suffix != ".hocr":
                continue
            try:
                if not stat.S_ISREG(os.lstat(path).st_mode):
                    continue
            except OSError:
                continue
            if suffix in PDF:
                files[path] = "pdf"
            elif suffix in IMAGES:
                files[path] = "image"
                images.append(path)
            elif suffix in TEXTS:
                files[path] = "text"
                texts[path] = path
            else:
                texts[path] = path  # an .hocr: only ever an image's sidecar
            if len(files) >= max_files:
                truncated = True
                break
        if truncated:
            break
    sidecars: dict[Path, Path] = {}
    for image in images:
        for candidate in _sidecar_names(image):
            if candidate in texts:
                sidecars[image] = candidate
                break
    for sidecar in sidecars.values():
        files.pop(sidecar, None)
    return Found(files, tuple(manifests), sidecars, truncated, tuple(walked))


def _sidecar_names(image: Path) -> Iterable[Path]:
    for suffix in SIDECARS:
        yield image.with_suffix(suffix)
        yield image.with_name(image.name + suffix)


def words_of(name: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(name)}


def kind_of(names: Iterable[str], contracts: Iterable[str], letters: Iterable[str]) -> str:
    """`contract`, `letter` or `paper`: the first of `names` (the nearest folder first) holding a kind's word."""
    contract_words = {w.casefold() for w in contracts}
    letter_words = {w.casefold() for w in letters}
    for name in names:
        words = words_of(name)
        if words & contract_words:
            return "contract"
        if words & letter_words:
            return "letter"
    return "paper"


def folders_of(root: Path, path: Path) -> list[str]:
    """The folders between `root` and the file, the nearest first."""
    try:
        relative = path.relative_to(root)
    except ValueError:
        return []
    return list(reversed(relative.parts[:-1]))


def correspondent_of(folders: list[str], contracts: Iterable[str], letters: Iterable[str]) -> str:
    kinds = {w.casefold() for w in (*contracts, *letters)}
    for name in folders:
        if _PERIOD.match(name.strip()) or words_of(name) & kinds:
            continue
        return name
    return ""


def dated(stem: str) -> tuple[str, str]:
    """(the date at the start of a file's name as YYYY-MM-DD, the rest of the name); ("", stem) when none."""
    match = _DATED.match(stem)
    if match:
        try:
            day = date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        except ValueError:
            return "", stem
        rest = stem[match.end():].strip(" -_.") or stem
        return day.isoformat(), rest
    return "", stem


def modified_day(status: os.stat_result) -> str:
    return datetime.fromtimestamp(status.st_mtime).date().isoformat()
