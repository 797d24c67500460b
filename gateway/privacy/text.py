"""What the masks share: a plain copy of a text (every script's digits as ASCII ones), its lower case, every
place of a word, edits made at once."""

from __future__ import annotations

import re
import unicodedata
from typing import Any


class LazyPattern:
    """A regular expression compiled when it is first used, not when its module is imported.

    The masks hold about sixty patterns, a dozen milliseconds of `re` compiling together, while an ordinary text
    (a tool's description, which every listing masks) reaches only a few of them. On first use each of the
    compiled pattern's methods and attributes is copied onto this object, so that later uses find it directly.
    """

    _SAME = ("search", "match", "fullmatch", "sub", "subn", "finditer", "findall", "split", "scanner", "pattern",
             "flags", "groups", "groupindex")

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        compiled = re.compile(*self._source)
        for same in self._SAME:
            setattr(self, same, getattr(compiled, same))
        return getattr(compiled, name)


# Numbers and codes are looked for in a plain copy of the text, each character in its place: spaces of any
# width (the zero-width ones HTML mail leaves between characters too) become " ", dashes "-", the marks
# of a table turned to text "|". One pattern holds the wide characters; the others stay ASCII, quick to
# compile and to run.
_WIDE_SPACES = "\u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200E))) + "\u202f\u205f\u3000\u2060\ufeff"
_WIDE_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"
_PLAIN_CHARS = {**dict.fromkeys(_WIDE_SPACES, " "), **dict.fromkeys(_WIDE_DASHES, "-")}
_NOT_PLAIN = LazyPattern(f"[{_WIDE_SPACES}{_WIDE_DASHES}\u2500-\u257f\u00b7\u2022]")


# Digits of other scripts and forms, told by the first two or three bytes of their UTF-8 (a test checks every
# one of them against unicodedata): the decimal digits of every script (٤ ۴ ४ ๔ ４ 𝟒...), and the digits that
# are forms of these (superscript ⁴ and subscript ₄, circled ④ and ⓸, parenthesized ⑷, with a full stop ⒋,
# dingbats ❹ ➃ ➍, Ethiopic ፬...). A text with none of these has no digit but ASCII ones. Emoji, accents,
# typographic signs, CJK and most letters of other scripts open otherwise, so looking for the digits
# themselves (a category test per character) is left to the texts that may hold one.
_OTHER_DIGIT_STARTS = {
    0xC2: rb"\xc2[\xb2\xb3\xb9]",
    0xD9: rb"\xd9[\xa0-\xa9]",
    0xDB: rb"\xdb[\xb0-\xb9]",
    0xDF: rb"\xdf[\x80-\x89]",
    0xE0: rb"\xe0[\xa5-\xbc]",
    0xE1: rb"\xe1[\x81-\xb1]",
    0xE2: rb"\xe2(?:\x81[\xb0\xb4-\xb9]|\x82[\x80-\x89]|\x91[\xa0-\xa8\xb4-\xbc]|\x92[\x88-\x90]"
    rb"|\x93[\xaa\xb5-\xbd\xbf]|\x9d[\xb6-\xbe]|\x9e[\x80-\x88\x8a-\x92])",
    0xEA: rb"\xea[\x98-\xaf]",
    0xEF: rb"\xef\xbc[\x90-\x99]",
    0xF0: rb"\xf0(?:[\x90-\x9e]|\x9f(?:\xaf|\x84[\x80-\x8a]))",
}
# One pattern per first byte, each opening on it as a literal (which `re` finds fast), tried only when
# that byte is in the text; a translate that keeps nothing else tells which (usually none).
_OTHER_DIGIT_PATTERNS = {lead: LazyPattern(start) for lead, start in _OTHER_DIGIT_STARTS.items()}
_NOT_A_DIGIT_LEAD = bytes(byte for byte in range(256) if byte not in _OTHER_DIGIT_STARTS)
# Without the forms of digits (superscripts, circled digits), whose first bytes (0xC2, 0xE2) typographic
# signs share: for `mask_secrets`, which leaves those forms to `mask`.
_NOT_A_DECIMAL_LEAD = _NOT_A_DIGIT_LEAD + b"\xc2\xe2"
# The digits that are no decimal digit of a script but a form of one (unicodedata.digit reads them; a test
# checks this list against it): ² ³ ¹ ፩-፱ ᧚ ⁰ ⁴-⁹ ₀-₉ ①-⑨ ⑴-⑼ ⒈-⒐ ⓪ ⓵-⓽ ⓿ ❶-❾ ➀-➈ ➊-➒ 𐩀-𐩃 𐹠-𐹨 𑁒-𑁚 🄀-🄊.
DIGIT_FORMS = (
    "\u00b2\u00b3\u00b9\u1369-\u1371\u19da\u2070\u2074-\u2079\u2080-\u2089\u2460-\u2468\u2474-\u247c"
    "\u2488-\u2490\u24ea\u24f5-\u24fd\u24ff\u2776-\u277e\u2780-\u2788\u278a-\u2792"
    "\U00010a40-\U00010a43\U00010e60-\U00010e68\U00011052-\U0001105a\U0001f100-\U0001f10a"
)
# Two patterns of one class each: an alternation of the two would cost `re` far more on every character.
_OTHER_DECIMAL = LazyPattern(r"[^\D0-9]")
_DIGIT_FORM = LazyPattern(f"[{DIGIT_FORMS}]")


def may_hold_other_digits(data: bytes, forms: bool = True) -> bool:
    """Whether UTF-8 `data` may hold a digit of another script than ASCII, or (`forms`) a form of a digit:
    superscript, subscript, circled..."""
    leads = data.translate(None, _NOT_A_DIGIT_LEAD if forms else _NOT_A_DECIMAL_LEAD)
    if not leads:
        return False
    return any(_OTHER_DIGIT_PATTERNS[lead].search(data) for lead in set(leads))


def ascii_digits(text: str) -> str:
    """`text` with each digit of another script or form (`٤`, `４`, `⁴`, `④`) as its ASCII digit, in its place
    (`text` itself when it has none)."""
    if text.isascii():
        return text
    if _OTHER_DECIMAL.search(text):
        text = _OTHER_DECIMAL.sub(lambda match: str(unicodedata.decimal(match.group())), text)
    elif not _DIGIT_FORM.search(text):
        return text
    return _DIGIT_FORM.sub(lambda match: str(unicodedata.digit(match.group())), text)


def plain_copy(text: str, other_digits: bool = False) -> str:
    """`text` with wide spaces as " ", wide dashes as "-", box lines and dots as "|", and (if
    `other_digits`) every script's digits as ASCII ones, each in its place."""
    if text.isascii():
        return text
    plain = _NOT_PLAIN.sub(lambda match: _PLAIN_CHARS.get(match.group(), "|"), text)
    return ascii_digits(plain) if other_digits else plain


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
