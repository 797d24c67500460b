"""Reading a file of content lines (iCalendar, vCard) from a stranger in bounded time and memory.

Both formats are lines `NAME;PARAMS:VALUE`, folded by a leading space or tab, grouped by `BEGIN:X` / `END:X`.
`reduced` reads at most `limit` bytes of a file, a chunk at a time, and keeps only what its caller asks for: the
lines of the properties it wants, of the components it wants, each line at most `line_limit` bytes once unfolded,
each component (a card, an event) at most `unit_limit` bytes, at most `units` of them. What it gives is still
iCalendar or vCard, for icalendar or vobject to parse: this module only decides which lines go through, by the
name before the first `;` or `:`, and never reads a value. A component cut by the end of the bytes read is left
out whole, so a parser never sees half of one.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from attrs import frozen

CHUNK = 1 << 16


@frozen
class Reduced:
    """What went through: the kept lines, how many components, whether the file was read to its end."""

    lines: list[bytes]
    head: list[bytes]  # the kept properties of the container itself (VCALENDAR's VERSION, PRODID...)
    units: int
    whole: bool  # every byte of the file was looked at (none was left unread past `limit`)
    dropped: int  # lines left out because they were too long or of a property not wanted

    def text(self, container: bytes | None) -> bytes:
        if container is None:
            return b"\r\n".join(self.lines) + b"\r\n"
        return b"\r\n".join([b"BEGIN:" + container, *self.head, *self.lines, b"END:" + container]) + b"\r\n"


def open_regular(path: Path | str) -> BinaryIO:
    """The file opened for reading, if it is a regular file: not through a link (a file swapped for a link to
    anywhere since it was listed), never a FIFO that would wait for a writer forever (OSError)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise OSError(f"{path} is not a regular file")
    return os.fdopen(descriptor, "rb")


def _name(line: bytes | bytearray) -> bytes:
    head = bytes(line[:80])
    for mark in (b":", b";"):
        head = head.split(mark, 1)[0]
    return head.rsplit(b".", 1)[-1].strip().upper()  # a vCard group ("item1.EMAIL") is not the name


# Where a logical line ends: a line break not followed by the space or tab of a fold.
_NEXT = re.compile(rb"\n(?![ \t])")


class _Lines:
    """The logical lines (folds kept) of the first `limit` bytes of a file, each with whether it was left out
    (longer than `line_limit`, or of a property `skip` names): of those only the first bytes are kept, and the
    rest of the line is passed over by a search for its end, a chunk at a time, never held."""

    def __init__(self, path: Path, limit: int, line_limit: int, skip: Callable[[bytes], bool]) -> None:
        self.path, self.limit, self.line_limit, self.skip = path, limit, line_limit, skip
        self.whole = True

    def _line(self, line: bytes) -> tuple[bytes, bool]:
        line = line.rstrip(b"\r")
        if len(line) > self.line_limit or self.skip(_name(line)):
            return line[:80], True
        return line, False

    def __iter__(self) -> Iterator[tuple[bytes, bool]]:
        buffer = bytearray()
        start = searched = read = 0
        skipping = ended = False
        with open_regular(self.path) as handle:
            while True:
                while True:
                    found = _NEXT.search(buffer, max(searched, start))
                    if found is None or (found.start() == len(buffer) - 1 and not ended):
                        break  # a break at the very end: the next byte says whether a fold follows
                    if skipping:
                        skipping = False
                    else:
                        yield self._line(bytes(buffer[start:found.start()]))
                    start = found.start() + 1
                if ended:
                    if start < len(buffer) and not skipping and self.whole:
                        yield self._line(bytes(buffer[start:]))
                    return
                del buffer[:start]
                start = 0
                if not skipping and buffer and (len(buffer) > self.line_limit or (
                        len(buffer) >= 80 and self.skip(_name(buffer)))):
                    yield bytes(buffer[:80]), True
                    skipping = True
                if skipping:
                    buffer = bytearray(b"\n" if buffer.endswith(b"\n") else b"")
                searched = max(len(buffer) - 1, 0)
                if read >= self.limit:
                    self.whole = handle.read(1) == b""
                    ended = True
                    continue
                chunk = handle.read(min(CHUNK, self.limit - read))
                if not chunk:
                    ended = True
                read += len(chunk)
                buffer += chunk


def reduced(path: Path, *, limit: int, line_limit: int, unit_limit: int, units: int, container: bytes | None,
            wanted: Callable[[bytes, bytes], bool], kept_components: frozenset[bytes],
            skip: Callable[[bytes], bool] = lambda name: False, max_lines: int = 1 << 30) -> Reduced:
    """The wanted lines of the first `limit` bytes of `path`.

    `container`: the component wrapping the others (b"VCALENDAR"), or None when the components stand alone
    (vCards). `wanted(component, name)`: whether a property goes through, given the component it is in (b"" for
    the container). `kept_components`: the components kept (the others are left out with all they hold).
    `skip(name)`: properties never wanted anywhere (a PHOTO), passed over as fast as the bytes can be searched.
    `max_lines`: the lines kept at most (a parser's time grows with them: icalendar takes a few hundred
    microseconds a line). A component cut by the end of the bytes read, or by `max_lines`, gives what it had,
    closed.
    """
    logical = _Lines(path, limit, line_limit, skip)
    top = 2 if container is not None else 1  # the depth of a unit: an event in its calendar, a card alone
    stack: list[bytes] = []
    dropping: int | None = None  # the depth at which a left-out component began
    lines: list[bytes] = []
    head: list[bytes] = []
    unit: list[bytes] = []
    unit_size = 0
    count = dropped = 0
    whole = True
    for line, too_long in logical:
        if len(lines) + len(unit) >= max_lines:
            whole = False
            break
        name = _name(line)
        if name in (b"BEGIN", b"END"):
            value = line.partition(b":")[2].strip().upper()[:40]
            if name == b"BEGIN":
                stack.append(value)
                if len(stack) < top:
                    continue
                if len(stack) == top:
                    unit, unit_size = [], 0
                if dropping is None and value not in kept_components:
                    dropping = len(stack)
                if dropping is None:
                    unit.append(line)
                continue
            depth = len(stack)
            if stack:
                stack.pop()
            if dropping is not None:
                if depth <= dropping:
                    dropping = None
                continue
            if depth < top:
                continue
            unit.append(line)
            if depth == top:
                lines.extend(unit)
                unit = []
                count += 1
                if count >= units:
                    return Reduced(lines, head, count, False, dropped)

            continue
        if dropping is not None:
            continue
        component = stack[-1] if len(stack) >= top else b""
        if too_long or not wanted(component, name) or (len(stack) >= top and unit_size + len(line) > unit_limit):
            dropped += 1
            continue
        if len(stack) >= top:
            unit.append(line)
            unit_size += len(line)
        elif container is not None and len(stack) == 1 and len(head) < 32:
            head.append(line)
    if unit and len(stack) >= top and (dropping is None or dropping > top):
        # Cut by the end of what was read: what it had so far, closed as it stood.
        still_open = stack[top - 1:dropping - 1 if dropping is not None else len(stack)]
        lines.extend(unit)
        lines.extend(b"END:" + name for name in reversed(still_open))
        count += 1
    return Reduced(lines, head, count, whole and logical.whole, dropped)
