"""Who is on a conversation: phone numbers normalised with `phonenumbers`, and the person's own vCards.

A number is written many ways (`+1 555-0123`, `(555) 0123`, `0612345678`, `+33 6 12 34 56 78`); each is brought
to its E.164 form (`+15550123`) by Google's libphonenumber (the `phonenumbers` port), taking a number written
without its country code in the `region` of the plugin's settings (two letters, such as `FR`). A number that
cannot be read so (a short code such as `36111`, a sender's name such as `BANK`) keeps its digits, or its letters,
as written: it is still one conversation, never one that can be drafted to.

The person's address book is a vdir of vCards (as vdirsyncer and khard keep it), read with `vobject`, bounded in
files and size. Each card's numbers are normalised the same way and mapped to the card, so that a conversation's
people are given to the gate with the card's e-mail addresses and the projects whose `client` names the card.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path

import attrs
from attrs import field, frozen

_NOT_DIAL = re.compile(r"[^\d+]")
MAX_CARDS_FILES = 20_000
MAX_CARD_BYTES = 1 << 20


@functools.lru_cache(maxsize=65_536)
def normalised(number: str, region: str = "") -> str:
    """A number in its E.164 form when it reads as a full number; else its digits (or its words, trimmed)."""
    import phonenumbers

    text = number.strip()
    if text.lower().startswith("tel:"):
        text = text[4:]
    try:
        parsed = phonenumbers.parse(text, region.upper() or None)
    except phonenumbers.NumberParseException:
        parsed = None
    if parsed is not None and phonenumbers.is_possible_number(parsed):
        return phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164)
    digits = _NOT_DIAL.sub("", text)
    if any(c.isdigit() for c in digits):
        return digits
    return " ".join(text.split())[:40]


def draftable(number: str) -> bool:
    """Can a text be written to this (normalised) number from a phone: a full number, not a short code or a name?"""
    import phonenumbers

    if not number.startswith("+"):
        return False
    try:
        parsed = phonenumbers.parse(number, None)
    except phonenumbers.NumberParseException:
        return False
    return phonenumbers.is_possible_number(parsed) and len(str(parsed.national_number)) >= 6


def match_key(number: str) -> str:
    """What a card's number and a conversation's number are compared by: their last nine digits, as the core's
    phone routes compare (so `06 39 98 01 23` on a card is `+33 6 39 98 01 23` in an export, whatever the region
    setting); a number of fewer than eight digits, or a name, whole."""
    digits = re.sub(r"\D", "", number)
    return digits[-9:] if len(digits) >= 8 else number


@frozen
class Card:
    uid: str
    name: str
    emails: tuple[str, ...]
    numbers: tuple[str, ...]
    book: str  # the address book's folder name, for an `addressbooks` route


@frozen
class Book:
    """The cards, and each normalised number's cards."""

    cards: tuple[Card, ...] = ()
    by_number: dict[str, tuple[Card, ...]] = field(factory=dict)
    problems: tuple[str, ...] = ()
    # What the book was read from (each card file's path, size and time): what remembered verdicts are keyed by.
    signature: tuple = ()

    def of(self, numbers: Iterable[str]) -> list[Card]:
        found: dict[str, Card] = {}
        for number in numbers:
            for card in self.by_number.get(match_key(number), ()):
                found[card.uid] = card
        return list(found.values())


_books: dict[tuple[str, str], tuple[tuple, Book]] = {}
NO_BOOK = Book()


def read_book(folder: Path | None, region: str) -> Book:
    """The vCards under `folder` (remembered while their files' sizes and times stay the same)."""
    if folder is None or not folder.is_dir():
        return NO_BOOK
    files = []
    for path in sorted(folder.rglob("*.vcf")):
        if len(files) >= MAX_CARDS_FILES:
            break
        try:
            status = path.stat()
        except OSError:
            continue
        files.append((path, status.st_size, status.st_mtime_ns))
    signature = tuple((str(p), s, t) for p, s, t in files)
    key = (str(folder), region)
    cached = _books.get(key)
    if cached is not None and cached[0] == signature:
        return cached[1]
    book = attrs.evolve(_read(folder, files, region), signature=(str(folder), region, signature))
    if len(_books) > 8:
        _books.clear()
    _books[key] = (signature, book)
    return book


def _read(folder: Path, files: list[tuple[Path, int, int]], region: str) -> Book:
    import vobject

    cards: list[Card] = []
    problems: list[str] = []
    for path, size, _mtime in files:
        if size > MAX_CARD_BYTES:
            problems.append(f"{path.name}: over {MAX_CARD_BYTES // 1024} KiB, not read")
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
            components = list(vobject.readComponents(text, ignoreUnreadable=True))
        except Exception as error:  # noqa: BLE001 (vobject raises many kinds on a broken card: that card fails alone)
            problems.append(f"{path.name}: {type(error).__name__}")
            continue
        relative = path.relative_to(folder)
        book = relative.parts[0] if len(relative.parts) > 1 else ""
        for number, card in enumerate(components):
            if getattr(card, "name", "").upper() != "VCARD":
                continue
            contents = card.contents
            uid = _first(contents.get("uid")) or (path.stem if number == 0 else f"{path.stem}#{number}")
            emails = tuple(v.strip() for v in _values(contents.get("email")) if "@" in v)
            numbers = tuple(dict.fromkeys(normalised(v, region) for v in _values(contents.get("tel")) if v.strip()))
            cards.append(Card(uid, _first(contents.get("fn")), emails, numbers, book))
    by_number: dict[str, list[Card]] = {}
    for card in cards:
        for number in card.numbers:
            by_number.setdefault(match_key(number), []).append(card)
    return Book(tuple(cards), {n: tuple(c) for n, c in by_number.items()}, tuple(problems))


def _values(lines: list | None) -> list[str]:
    return [line.value for line in lines or () if isinstance(getattr(line, "value", None), str)]


def _first(lines: list | None) -> str:
    values = _values(lines)
    return values[0].strip() if values else ""
