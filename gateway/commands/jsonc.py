"""Setting one member of a host's JSON or JSONC config in place, leaving every other byte as the person wrote it.

Hosts' configs (VS Code's mcp.json above all) are JSON with comments and trailing commas. Reading them is
json5's work; what no Python library does without a Node.js helper is changing one member while keeping the
comments, the order, the indentation and the person's own formatting. This module only finds where values
start and end (skipping strings and comments) and splices the new member's text in; json5 then reads the
result back, and the edit is kept only when the file means exactly what it meant plus our member.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import json5


class JsoncError(ValueError):
    """The text cannot be read as JSON with comments, or holds something other than objects along the path."""


def loads(text: str) -> Any:
    """The value a JSON or JSONC text holds (comments and trailing commas allowed); JsoncError if none."""
    try:
        return json5.loads(text)
    except ValueError as error:
        raise JsoncError(str(error)) from None


def set_member(text: str, path: Sequence[str], value: Any) -> str:
    """`text` with the member at `path` (object keys from the top) set to `value`; nothing else changed."""
    before = loads(text) if text.strip() else {}
    if not isinstance(before, dict):
        raise JsoncError("the file does not hold a JSON object")
    if not text.strip():
        text = "{}\n"
    edited = _set(text, _skip(text, 0), list(path), value)
    # The splice is checked by reading it back: everything that was there is there, and ours is set.
    expected = _with(before, list(path), value)
    if loads(edited) != expected:
        raise JsoncError("the edit could not be made without changing other entries")
    return edited


def _with(data: dict[str, Any], path: list[str], value: Any) -> dict[str, Any]:
    copy = dict(data)
    inner = copy.get(path[0])
    copy[path[0]] = value if len(path) == 1 else _with(inner if isinstance(inner, dict) else {}, path[1:], value)
    return copy


def _set(text: str, start: int, path: list[str], value: Any) -> str:
    if start >= len(text) or text[start] != "{":
        raise JsoncError(f"expected an object where {path[0]!r} should be")
    members, close, last_end = _members(text, start)
    key = path[0]
    for name, key_start, value_start, value_end in members:
        if name == key:
            if len(path) == 1:
                step = _step(text, start, members)
                return text[:value_start] + _dump(value, _indent_at(text, key_start), step) + text[value_end:]
            return _set(text, value_start, path[1:], value)
    nested: Any = value
    for outer in reversed(path[1:]):
        nested = {outer: nested}
    indent = _member_indent(text, start, members)
    member = f"{json.dumps(key)}: {_dump(nested, indent, _step(text, start, members))}"
    if members:
        # After the last member (and its comma, if the person left a trailing one).
        after = _skip(text, last_end)
        if text[after] == ",":
            # A comment ending the last member's line stays with that member: insert after it.
            place = after + 1
            newline = text.find("\n", place)
            rest = text[place:newline] if newline >= 0 else ""
            if newline >= 0 and (not rest.strip() or rest.strip().startswith("//")):
                place = newline
            return text[:place] + f"\n{indent}{member}" + text[place:]
        return text[:last_end] + f",\n{indent}{member}" + text[last_end:]
    closing_indent = _indent_at(text, start)
    return text[: start + 1] + f"\n{indent}{member}\n{closing_indent}" + text[close:]


def _members(text: str, start: int) -> tuple[list[tuple[str, int, int, int]], int, int]:
    """The object's members as (key, key start, value start, value end), the index of its `}`, and the last member's end."""
    members: list[tuple[str, int, int, int]] = []
    index = _skip(text, start + 1)
    last_end = start + 1
    while index < len(text) and text[index] != "}":
        key_start, key_end = index, _value_end(text, index)
        key = text[key_start:key_end]
        name = loads(key) if key[:1] in "\"'" else key
        index = _skip(text, key_end)
        if index >= len(text) or text[index] != ":":
            raise JsoncError("a member without ':'")
        value_start = _skip(text, index + 1)
        value_end = _value_end(text, value_start)
        members.append((str(name), key_start, value_start, value_end))
        last_end = value_end
        index = _skip(text, value_end)
        if index < len(text) and text[index] == ",":
            index = _skip(text, index + 1)
    if index >= len(text):
        raise JsoncError("an object is not closed")
    return members, index, last_end


def _skip(text: str, index: int) -> int:
    """The index of the next character that is neither white space nor inside a comment."""
    while index < len(text):
        if text[index].isspace():
            index += 1
        elif text.startswith("//", index):
            newline = text.find("\n", index)
            index = len(text) if newline < 0 else newline + 1
        elif text.startswith("/*", index):
            end = text.find("*/", index + 2)
            if end < 0:
                raise JsoncError("a comment is not closed")
            index = end + 2
        else:
            break
    return index


def _value_end(text: str, index: int) -> int:
    """Where the value (or key) starting at `index` ends."""
    if index >= len(text):
        raise JsoncError("a value is missing")
    first = text[index]
    if first in "\"'":
        cursor = index + 1
        while cursor < len(text) and text[cursor] != first:
            cursor += 2 if text[cursor] == "\\" else 1
        if cursor >= len(text):
            raise JsoncError("a string is not closed")
        return cursor + 1
    if first in "{[":
        closing = "}" if first == "{" else "]"
        cursor = _skip(text, index + 1)
        while cursor < len(text) and text[cursor] != closing:
            if text[cursor] in ",:":
                cursor = _skip(text, cursor + 1)
                continue
            cursor = _skip(text, _value_end(text, cursor))
        if cursor >= len(text):
            raise JsoncError(f"a {'n object' if first == '{' else 'n array'} is not closed")
        return cursor + 1
    cursor = index
    while cursor < len(text) and not text[cursor].isspace() and text[cursor] not in ",:]}/":
        cursor += 1
    if cursor == index:
        raise JsoncError(f"unexpected {first!r}")
    return cursor


def _indent_at(text: str, index: int) -> str:
    line_start = text.rfind("\n", 0, index) + 1
    line = text[line_start:index]
    return line[: len(line) - len(line.lstrip())]


def _member_indent(text: str, start: int, members: list[tuple[str, int, int, int]]) -> str:
    """The indentation of the object's members: as its first member has it, else one step in from the brace."""
    if members and "\n" in text[start:members[0][1]]:
        return _indent_at(text, members[0][1])
    return _indent_at(text, start) + "  "


def _step(text: str, start: int, members: list[tuple[str, int, int, int]]) -> str:
    """One level of the file's indentation, as the object's members show it (two spaces when they cannot)."""
    outer, inner = _indent_at(text, start), _member_indent(text, start, members)
    step = inner[len(outer):] if inner.startswith(outer) else ""
    return step if step and not step.strip() else "  "


def _dump(value: Any, indent: str, step: str) -> str:
    """`value` as JSON, one `step` a level, its lines after the first indented to sit under `indent`."""
    return json.dumps(value, indent=step, ensure_ascii=False).replace("\n", "\n" + indent)
