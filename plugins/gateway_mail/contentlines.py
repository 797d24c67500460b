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

from collections.abc import Callable
from pathlib import Path

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


def _name(line: bytes) -> bytes:
    head = line[:80]
    for mark in (b":", b";"):
        head = head.split(mark, 1)[0]
    return head.rsplit(b".", 1)[-1].strip().upper()  # a vCard group ("item1.EMAIL") is not the name


def _logical(path: Path, limit: int, line_limit: int) -> tuple[list[tuple[bytes, bool]], bool]:
    """The logical lines (folded lines kept folded) of the first `limit` bytes, each with whether it was too long;
    a too-long line keeps only its first bytes (enough for its name), so memory stays within `limit`."""
    found: list[tuple[bytes, bool]] = []
    current: list[bytes] = []
    size = 0
    too_long = False

    def close() -> None:
        nonlocal current, size, too_long
        if current:
            found.append((b"\r\n".join(current), too_long))
        current, size, too_long = [], 0, False

    def physical(line: bytes, long_line: bool) -> None:
        nonlocal size, too_long
        line = line.rstrip(b"\r")
        if line[:1] in (b" ", b"\t") and current:
            size += len(line)
        else:
            close()
            size = len(line)
        if long_line or size > line_limit:
            too_long = True
        if too_long:
            if not current:
                current.append(line[:80])
            return
        current.append(line)

    read = 0
    partial = bytearray()
    partial_long = False
    whole = True
    with open(path, "rb") as handle:
        while True:
            if read >= limit:
                whole = handle.read(1) == b""
                break
            chunk = handle.read(min(CHUNK, limit - read))
            if not chunk:
                break
            read += len(chunk)
            pieces = chunk.split(b"\n")
            for piece in pieces[:-1]:
                if not partial_long:
                    partial += piece
                physical(bytes(partial), partial_long)
                partial.clear()
                partial_long = False
            if not partial_long:
                partial += pieces[-1]
                if len(partial) > line_limit:
                    del partial[80:]
                    partial_long = True
    if partial and whole:
        physical(bytes(partial), partial_long)
    close()
    return found, whole


def reduced(path: Path, *, limit: int, line_limit: int, unit_limit: int, units: int, container: bytes | None,
            wanted: Callable[[bytes, bytes], bool], kept_components: frozenset[bytes]) -> Reduced:
    """The wanted lines of the first `limit` bytes of `path`.

    `container`: the component wrapping the others (b"VCALENDAR"), or None when the components stand alone
    (vCards). `wanted(component, name)`: whether a property goes through, given the component it is in (b"" for
    the container). `kept_components`: the components kept (the others are left out with all they hold).
    """
    logical, whole = _logical(path, limit, line_limit)
    top = 2 if container is not None else 1  # the depth of a unit: an event in its calendar, a card alone
    stack: list[bytes] = []
    dropping: int | None = None  # the depth at which a left-out component began
    lines: list[bytes] = []
    head: list[bytes] = []
    unit: list[bytes] = []
    unit_size = 0
    count = dropped = 0
    for line, too_long in logical:
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
    return Reduced(lines, head, count, whole, dropped)
