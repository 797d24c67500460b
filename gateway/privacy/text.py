"""What the masks share: a plain copy of a text, its lower case, every place of a word, edits made at once."""

from __future__ import annotations

import re

# Numbers and codes are looked for in a plain copy of the text, each character in its place: spaces of any
# width (the zero-width ones HTML mail leaves between characters too) become " ", dashes "-", the marks
# of a table turned to text "|". One pattern holds the wide characters; the others stay ASCII, quick to
# compile and to run.
_WIDE_SPACES = "\u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200E))) + "\u202f\u205f\u3000\u2060\ufeff"
_WIDE_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_PLAIN_CHARS = {**dict.fromkeys(_WIDE_SPACES, " "), **dict.fromkeys(_WIDE_DASHES, "-")}
_NOT_PLAIN = re.compile(f"[{_WIDE_SPACES}{_WIDE_DASHES}\u2500-\u257f\u00b7\u2022]")


def plain_copy(text: str) -> str:
    """`text` with wide spaces as " ", wide dashes as "-", box lines and dots as "|", each in its place."""
    if text.isascii():
        return text
    return _NOT_PLAIN.sub(lambda match: _PLAIN_CHARS.get(match.group(), "|"), text)


def lower_same_length(text: str) -> str:
    """`text` in lower case, each character kept in its place (a few lower into two characters)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)


def find_all(haystack: str, needle: str) -> list[int]:
    """Every index where `needle` starts in `haystack`, overlapping ones included."""
    found = []
    index = haystack.find(needle)
    while index >= 0:
        found.append(index)
        index = haystack.find(needle, index + 1)
    return found


Edit = tuple[int, int, str]  # start, end, what to put there


def apply_edits(text: str, edits: list[Edit]) -> str:
    """`text` with the edits made in order of place; one that overlaps an edit before it is dropped."""
    pieces: list[str] = []
    done = 0
    for start, end, new in sorted(edits):
        if start >= done:
            pieces += [text[done:start], new]
            done = end
    return "".join(pieces) + text[done:]
