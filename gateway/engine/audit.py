"""The audit log: one JSON line per call, one file a month, readable by the person alone, never the words.

Lines are written with a single ``os.write`` on a file opened with O_APPEND, so several gateway processes
appending at once leave whole lines only.

The lines are chained: each carries ``prev``, the SHA-256 of the line before it (the month's first line, of the
last line of the month before; the very first line, ""). Reading the last line, hashing it and appending happen
under an exclusive lock on the month's file, so several writers keep one chain. `verify` walks the chain and
names the first line where it breaks (a line edited, removed, reordered or inserted; a last line cut short), and
keeps the head it verified in ``verified-head.json`` beside the log: a log rewritten whole, or cut back, since
the last verification no longer holds that head, and is named too.

A log remembers where the file ended after its own last line and that line's hash: when the file still ends there
under the lock (no other writer appended since), the next line chains to that hash without reading the file back.

What a line costs besides its four calls to the kernel (lock, stat, write, unlock) is kept small: the time written
from the clock's nanoseconds, its date and second made once a second (`_moment`, the same text as
``datetime.isoformat(timespec="milliseconds")``); a short string argument's masked form kept by the string's digest
(`_masked_kept`: masking is a pure function of the text, and an agent asks again with the same values).
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import stat
import time
from collections.abc import Collection, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gateway.privacy.framing import one_line
from gateway.privacy.masks import mask_typed

ARGUMENT_LIMIT = 40
# Arguments that hold what a person or an agent wrote for others to read (a message's body, a note's text):
# kept by their length only whatever their tool declares, as those its `private_arguments` name.
FREE_TEXT_NAMES = frozenset({"body", "text", "content", "message", "note", "notes", "description", "html"})


class AuditError(OSError):
    """The audit line cannot be written; its message is the sentence to give instead of the answer."""


def summarise_arguments(arguments: Mapping[str, Any], private: Collection[str] = frozenset()) -> dict:
    """What the log keeps of a call's arguments.

    Free texts (the arguments a tool declares private, and any named like a message's body or a note's
    text: `FREE_TEXT_NAMES`) by their length only. Every other string masked (`mask_typed`: a code an
    agent typed is masked like a code in a message), and one longer than `ARGUMENT_LIMIT` characters or
    on several lines by its first `ARGUMENT_LIMIT` characters (masked first, then put on one line and
    cut) and its length: `{"start": "...", "length": 123}`.
    """
    kept: dict[str, Any] = {}
    for key, value in arguments.items():
        kept[key] = _summarise(value, key in private or key.lower() in FREE_TEXT_NAMES)
    return kept


# Short string arguments' summaries (the masked string, or the masked start of one on several lines), kept by a digest
# of the string, never the string itself (the process keeps no argument longer than its call): an agent pages through
# a query, names the same folder, view or person again, and masking a string costs more than the rest of its line.
# Masking is a pure function of the text (its rules are code, versioned by MASKS_VERSION), so a kept summary is the
# one made afresh. At most KEPT_SUMMARIES are kept (then all are forgotten), each of a string of at most KEPT_LENGTH
# characters.
KEPT_SUMMARIES = 2048
KEPT_LENGTH = 256
_kept: dict[bytes, str] = {}


def _masked_kept(value: str, cut: bool) -> str:
    """`mask_typed(value)`, or when `cut` its start on one line (`ARGUMENT_LIMIT` characters), kept for short
    strings."""
    if len(value) > KEPT_LENGTH:
        return one_line(mask_typed(value), ARGUMENT_LIMIT) if cut else mask_typed(value)
    key = hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    found = _kept.get(key)
    if found is None:
        found = one_line(mask_typed(value), ARGUMENT_LIMIT) if cut else mask_typed(value)
        if len(_kept) >= KEPT_SUMMARIES:
            _kept.clear()
        _kept[key] = found
    return found


def _summarise(value: Any, private: bool) -> Any:
    if isinstance(value, str):
        if private:
            return {"length": len(value)}
        if len(value) > ARGUMENT_LIMIT or "\n" in value or "\r" in value:
            return {"start": _masked_kept(value, cut=True), "length": len(value)}
        return _masked_kept(value, cut=False)
    if isinstance(value, bool | int | float) or value is None:
        return value
    if isinstance(value, list):
        return [_summarise(v, private) for v in value[:10]] + (["…"] if len(value) > 10 else [])
    if isinstance(value, Mapping):
        return {
            one_line(mask_typed(str(k)), ARGUMENT_LIMIT): _summarise(v, private or str(k).lower() in FREE_TEXT_NAMES)
            for k, v in list(value.items())[:10]
        }
    return {"type": type(value).__name__}


HEAD_FILE = "verified-head.json"
# The line's serialisation, made once: the same text as json.dumps with these options. JSONEncoder.encode makes its C
# encoder again for every line (and walks twenty lines of Python to do it): the C encoder is made once here, without
# the check for circular references (an entry is made of the call's JSON arguments and the core's own values, never
# circular; one that were would fail its call with RecursionError rather than ValueError).
_LINE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)


def _line_encoder() -> Any:
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator in this Python: the encoder's own way
        return _LINE.encode
    encode = make(None, _LINE.default, json.encoder.encode_basestring, None, _LINE.key_separator,
                  _LINE.item_separator, False, False, True)
    return lambda record: "".join(encode(record, 0))


_encode_line = _line_encoder()
_TAIL = 4096  # a line is well under this; a longer one is read by growing the chunk


# The second the last line was written in: (seconds since the epoch, "YYYY-MM-DDTHH:MM:SS", "YYYY-MM").
_second: tuple[int, str, str] = (-1, "", "")  # replaced whole (one step under the GIL), never changed in place


def _moment(now_ns: int) -> tuple[str, str]:
    """The line's time for `now_ns` (time.time_ns()), as ``datetime.isoformat(timespec="milliseconds")`` writes it
    in UTC with a Z (the milliseconds cut, not rounded), and its month ("YYYY-MM"); the date and second made once a
    second."""
    global _second
    seconds, rest = divmod(now_ns, 1_000_000_000)
    kept = _second
    if kept[0] != seconds:
        moment = time.gmtime(seconds)
        day = f"{moment.tm_year:04d}-{moment.tm_mon:02d}"
        kept = (seconds, f"{day}-{moment.tm_mday:02d}T{moment.tm_hour:02d}:{moment.tm_min:02d}:{moment.tm_sec:02d}",
                day)
        _second = kept
    return f"{kept[1]}.{rest // 1_000_000:03d}Z", kept[2]


def _hash(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest() if line else ""


def _tail_line(fd: int, size: int) -> bytes:
    """The file's last line (without its newline), read from its end."""
    chunk = min(size, _TAIL)
    while True:
        data = os.pread(fd, chunk, size - chunk)
        body = data[:-1] if data.endswith(b"\n") else data
        cut = body.rfind(b"\n")
        if cut >= 0 or chunk == size:
            return body[cut + 1:]
        chunk = min(size, chunk * 4)


def _last_line(path: Path) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        size = os.fstat(fd).st_size
        return _tail_line(fd, size) if size else b""
    finally:
        os.close(fd)


def _hash_at(files: list[Path], at: int) -> str:
    """The hash of the chain's line number `at` (1-based, across the month files)."""
    if at <= 0:
        return ""
    seen = 0
    for path in files:
        lines = path.read_bytes().split(b"\n")
        lines = lines[:-1] if lines and lines[-1] == b"" else lines
        if seen + len(lines) >= at:
            return _hash(lines[at - seen - 1])
        seen += len(lines)
    return ""


def _read_head(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_head(path: Path, head: dict[str, Any]) -> None:
    temporary = path.with_suffix(".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(json.dumps(head))
    os.replace(temporary, path)


class AuditLog:
    """Appends entries to ``<folder>/YYYY-MM.jsonl`` (0600, in a 0700 folder) and reads them back."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._month = ""
        self._fd: int | None = None
        self._path = ""  # the open month's file, as a string (a Path made per line costs more than the line)
        self._held: tuple[int, int] = (0, 0)  # its (inode, device) when opened
        # Where the open file ended after this log's last line, and that line's hash: while the file still ends
        # there (nobody appended since), the hash the next line chains to is known without reading the file back.
        self._end = -1
        self._end_hash = ""

    def path_for(self, moment: datetime) -> Path:
        return self.folder / f"{moment:%Y-%m}.jsonl"

    def _open(self, month: str) -> int:
        """The file of `month` ("YYYY-MM"), opened once (O_APPEND), made the person's alone when first opened.

        The open file is checked against the path on each call (one stat): a file deleted, moved or replaced
        under us is opened again, so lines never go to a file nobody will read.
        """
        if self._fd is not None and month == self._month:
            try:
                on_disk = os.stat(self._path, follow_symlinks=False)
                if (on_disk.st_ino, on_disk.st_dev) == self._held:
                    return self._fd
            except OSError:
                pass
        path = self.folder / f"{month}.jsonl"
        self.close()
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.folder, 0o700)
        # O_NOFOLLOW: a link put in the log's place is refused, not followed to wherever it points.
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
        fd = os.open(path, flags, 0o600)
        try:
            held = os.fstat(fd)
            if not stat.S_ISREG(held.st_mode):
                raise OSError(errno.EINVAL, "not a plain file")
            os.fchmod(fd, 0o600)
        except OSError:
            os.close(fd)
            raise
        self._fd, self._month, self._path, self._held = fd, month, str(path), (held.st_ino, held.st_dev)
        return fd

    def _locked(self, month: str) -> tuple[int, int]:
        """The month's file, open and locked (LOCK_EX), and its size: one stat of its path under the lock both checks
        that the open file is still the one there (not deleted, moved or replaced) and, the lock held, gives its
        size, where opening it first and asking its size apart would cost two calls to the kernel more per line."""
        if self._fd is not None and month == self._month:
            fd = self._fd
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                on_disk = os.stat(self._path, follow_symlinks=False)
            except OSError:
                on_disk = None
            if on_disk is not None and (on_disk.st_ino, on_disk.st_dev) == self._held:
                return fd, on_disk.st_size
            fcntl.flock(fd, fcntl.LOCK_UN)
            self.close()
        fd = self._open(month)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            return fd, os.fstat(fd).st_size
        except OSError:
            fcntl.flock(fd, fcntl.LOCK_UN)
            raise

    def write(self, entry: Mapping[str, Any]) -> None:
        """Append one line; raises AuditError when it cannot be written (then nothing may be given)."""
        written, month = _moment(time.time_ns())
        record = {"time": written, **entry}
        try:
            # Read the last line, hash it, append: one writer at a time, under the lock.
            fd, size = self._locked(month)
            try:
                record["prev"] = self._end_hash if size == self._end and size else self._last_hash(fd, month, size)
                line = (_encode_line(record) + "\n").encode()
                # One write of one whole line: O_APPEND keeps lines whole with several writers.
                if os.write(fd, line) != len(line):
                    self._end = -1
                    raise OSError(errno.ENOSPC, "the line was written only in part")
                # Under the lock, so the line just written is the file's last: the next one chains to it.
                self._end, self._end_hash = size + len(line), _hash(line[:-1])
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        except OSError as error:
            self.close()
            raise AuditError(self._refusal(self._cause(error))) from error

    def _last_hash(self, fd: int, month: str, size: int) -> str:
        """The hash of the last line of the month's file (`size` bytes long); for an empty file, of the month
        before's last line."""
        if size == 0:
            earlier = [p for p in sorted(self.folder.glob("*.jsonl")) if p.stem < month]
            return _hash(_last_line(earlier[-1])) if earlier else ""
        return _hash(_tail_line(fd, size))

    def verify(self) -> list[str]:
        """Walk the chain; [] when it holds, else sentences naming where it breaks. The head verified is kept."""
        problems: list[str] = []
        previous, count, last_file, last_line = "", 0, "", b""
        files = sorted(self.folder.glob("*.jsonl")) if self.folder.is_dir() else []
        for path in files:
            data = path.read_bytes()
            if data and not data.endswith(b"\n"):
                problems.append(f"{path.name}: its last line is cut short (the file was truncated mid-line)")
            for number, raw in enumerate(data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"),
                                         start=1):
                try:
                    entry = json.loads(raw)
                except ValueError:
                    entry = None
                if not isinstance(entry, dict) or "prev" not in entry:
                    problems.append(f"{path.name}:{number}: not a line of the chain (edited, or written by hand)")
                    return problems
                if entry["prev"] != (_hash(last_line) if count else previous):
                    problems.append(
                        f"{path.name}:{number}: the chain breaks here: this line does not follow the one before it "
                        "(a line before it was edited, removed, reordered or inserted)")
                    return problems
                count, last_file, last_line = count + 1, path.name, raw
        head = self.folder / HEAD_FILE
        kept = _read_head(head)
        if kept is not None and not problems:
            at = kept.get("count", 0)
            if at > count:
                problems.append(f"the log holds {count} lines, fewer than the {at} verified before: lines at its "
                                "end were removed (or the log replaced)")
            elif _hash_at(files, at) != kept.get("hash"):
                problems.append(f"line {at} is not the line verified before: the log was rewritten since "
                                "(a consistent chain made anew)")
        if not problems:
            _write_head(head, {"count": count, "hash": _hash(last_line) if count else "", "file": last_file})
        return problems

    def check(self) -> str | None:
        """None when a line can be written now, else the sentence an agent is answered instead."""
        problem = self.problem()
        return None if problem is None else self._refusal(problem)

    def problem(self) -> str | None:
        """None when a line can be written now, else what stands in the way (for `gateway doctor`)."""
        try:
            self._open(_moment(time.time_ns())[1])
        except OSError as error:
            self.close()
            return self._cause(error)
        return None

    def _cause(self, error: OSError) -> str:
        return f"the audit log in {self.folder} cannot be written ({error.strerror or error})"

    @staticmethod
    def _refusal(cause: str) -> str:
        return (
            f"{cause[0].upper()}{cause[1:]}, and nothing is given that cannot be logged. The person can see what "
            "is wrong with `gateway doctor`."
        )

    def close(self) -> None:
        self._end = -1
        if self._fd is not None:
            try:
                os.close(self._fd)
            finally:
                self._fd = None

    def read(
        self,
        *,
        since: datetime | None = None,
        tool: str | None = None,
        client: str | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Entries in time order, filtered; a torn or foreign line is skipped, never fatal."""
        if not self.folder.is_dir():
            return
        for path in sorted(self.folder.glob("*.jsonl")):
            if since is not None and path.stem < f"{since:%Y-%m}":
                continue
            with path.open("rb") as handle:
                for raw in handle:
                    try:
                        entry = json.loads(raw)
                    except ValueError:
                        continue
                    if not isinstance(entry, dict):
                        continue
                    if since is not None and str(entry.get("time", "")) < since.astimezone(UTC).isoformat()[:19]:
                        continue
                    if tool is not None and tool not in (
                        entry.get("tool"), entry.get("uri"), entry.get("prompt"), entry.get("method")
                    ):
                        continue
                    if client is not None and client.casefold() not in str(entry.get("client", "")).casefold():
                        continue
                    yield entry


class Stopwatch:
    def __init__(self) -> None:
        self.start = time.perf_counter()

    @property
    def ms(self) -> float:
        return round((time.perf_counter() - self.start) * 1000, 3)
