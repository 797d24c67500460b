"""Reading timewarrior's data files: where they are, and their `inc` lines.

Timewarrior keeps one file a month, `<database>/data/YYYY-MM.data`, one interval a line, as its own serialiser
writes it (`IntervalFactory::fromSerialization` reads it back):

    inc 20261102T090000Z - 20261102T113000Z # acme "deep work" project:acme
    inc 20261103T090000Z - 20261103T100000Z # back\\slash "say \\"hi\\"" # "an annotation"
    inc 20261201T081337Z # writing

`inc`, the start (UTC, `YYYYMMDDTHHMMSSZ`), optionally `-` and the end (none: the interval is open, the one
running now), optionally `#` and the tags, optionally a second `#` and the annotation. A tag holding a space, a
quote or an operator's character is written between double quotes, a quote inside it escaped with a backslash;
any other tag is written bare, a backslash in it kept as it is (the real `timew` writes `back\\slash` so). The
database is found as timewarrior finds it: `TIMEWARRIORDB`, then `$XDG_DATA_HOME/timewarrior`, then
`~/.timewarrior`. A line that is none of this is counted and skipped; the others are read.
"""

from __future__ import annotations

import calendar
import os
import re
from datetime import UTC, datetime
from pathlib import Path

from attrs import frozen

MAX_TAGS = 64
MAX_TAG = 200
MAX_ANNOTATION = 2_000
_STAMP = re.compile(r"^\d{8}T\d{6}Z$")
_MONTH_FILE = re.compile(r"^\d{4}-\d{2}\.data$")
_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


@frozen
class Interval:
    """One tracked interval: start and end in seconds since 1970 (UTC), no end while it runs; tags as written."""

    start: int
    end: int | None
    tags: tuple[str, ...]
    annotation: str
    line: int


@frozen
class Read:
    """A data file's intervals, and its lines that could not be read (their numbers, the first few)."""

    intervals: tuple[Interval, ...]
    malformed: int
    malformed_lines: tuple[int, ...]


def database(setting: Path | None, home: Path | None = None) -> Path:
    """The timewarrior database folder: the setting when given, else timewarrior's own lookup."""
    if setting is not None:
        return setting
    home = home or Path(os.path.expanduser("~"))
    named = os.environ.get("TIMEWARRIORDB", "")
    if named:
        return Path(os.path.expanduser(named))
    xdg = Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share") / "timewarrior"
    legacy = home / ".timewarrior"
    if not xdg.is_dir() and legacy.is_dir():
        return legacy
    return xdg


def data_folder(db: Path) -> Path:
    """Where the month files are: `<database>/data`, or the folder itself when it holds them directly."""
    inner = db / "data"
    if inner.is_dir():
        return inner
    return db if db.is_dir() and any(_MONTH_FILE.match(p.name) for p in db.iterdir()) else inner


def data_files(db: Path) -> list[Path]:
    """The month files (`YYYY-MM.data`; `tags.data` and `undo.data` are not intervals), oldest first."""
    folder = data_folder(db)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if _MONTH_FILE.match(p.name) and p.is_file())


_WORD = re.compile(r"""\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([^\s"'][^\s]*))""")
_ESCAPE = re.compile(r"\\(.)")


def _unescaped(word: str) -> str:
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), word) if "\\" in word else word


def tokens(line: str) -> list[str]:
    """A data line cut into its words: bare words as written, quoted ones with their escapes read."""
    if '"' not in line and "'" not in line:
        return line.split()  # most lines: nothing quoted
    found: list[str] = []
    at, end = 0, len(line.rstrip())
    while at < end:
        match = _WORD.match(line, at)
        if match is None or match.end() == at:
            raise ValueError("a quoted word is not closed")
        double, single, bare = match.groups()
        found.append(bare if bare is not None else _unescaped(double if double is not None else single))
        at = match.end()
    return found


def _moment(stamp: str) -> int:
    if len(stamp) != 16 or not _STAMP.match(stamp):
        raise ValueError(f"not a timewarrior time: {stamp[:20]!r}")
    return calendar.timegm((int(stamp[0:4]), int(stamp[4:6]), int(stamp[6:8]), int(stamp[9:11]),
                            int(stamp[11:13]), int(stamp[13:15]), 0, 0, 0))


def parse(line: str, number: int = 0) -> Interval:
    """One `inc` line; ValueError when it is not one."""
    words = tokens(line)
    if len(words) < 2 or words[0] != "inc":
        raise ValueError("not an inc line")
    start = _moment(words[1])
    end, at = None, 2
    if len(words) > 3 and words[2] == "-":
        end = _moment(words[3])
        at = 4
        if end < start:
            raise ValueError("ends before it starts")
    tags: list[str] = []
    annotation = ""
    if at < len(words):
        if words[at] != "#":
            raise ValueError("words after the times that are not tags")
        at += 1
        while at < len(words) and words[at] != "#":
            tags.append(words[at][:MAX_TAG])
            at += 1
        if at < len(words):
            annotation = " ".join(words[at + 1:])[:MAX_ANNOTATION]
    return Interval(start, end, tuple(dict.fromkeys(tags))[:MAX_TAGS], annotation, number)


def read_file(path: Path, max_bytes: int) -> Read:
    """Every interval of a month file; a line that cannot be read is counted and skipped. OSError or ValueError
    (too large) when the file itself cannot be read."""
    size = path.stat().st_size
    if size > max_bytes:
        raise ValueError(f"{size // 2**20} MiB, over the limit of {max_bytes // 2**20} MiB (max_data_mb)")
    intervals: list[Interval] = []
    bad: list[int] = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            text = raw.decode("utf-8", "replace").strip()
            if not text:
                continue
            try:
                intervals.append(parse(text, number))
            except (ValueError, OverflowError):
                bad.append(number)
    return Read(tuple(intervals), len(bad), tuple(bad[:10]))


def stamp(seconds: int) -> str:
    """A moment as timewarrior writes it (`20261102T090000Z`): what an interval's address is made of."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y%m%dT%H%M%SZ")
