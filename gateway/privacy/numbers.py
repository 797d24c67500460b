"""IBANs, payment cards and French NIRs, masked only when their check digits hold.

What was chosen: IBANs in capitals, spaces of any width or none, the length of the country's registry
entry (any other country: the number as written, 15 to 34 characters), then ISO 7064 mod 97. An IBAN
in small letters (or mixed), or with dashes, is read only for a country of the registry and only in the
layout people copy it in, groups of four or none (`fr76-3000-6000-...`, `gb29 nwbk 6016 ...`): prose in
small letters would otherwise offer many 1-in-97 chances. Cards: spaces or dashes in a card's layout
(4 4 4 4..., 4 6 5, 4 6 4, 4 3 3 3, or none), or dots or slashes in the same layouts, the same mark
throughout (`4111.1111.1111.1111`, `4111/1111/1111/1111`), a known issuer's prefix with one of its
lengths, Luhn; 14 digits only as Diners' 4-6-4, since a SIRET has 14 Luhn-valid digits too; when a
longer card also checks out (a security number after it), the longer is masked. NIRs: spaces of any
width or none, only between its fields (1 85 05 78 006 084 36), sex 1, 2, 3, 4, 7 or 8, the key. A
number glued to letters or digits is part of something longer and stays; a mask's bracket counts as
such glue, so that masking twice finds nothing new. Digits of every script count (a full-width card is
a card): they are read from a plain copy where each is its ASCII digit.
"""

from __future__ import annotations

import re

from gateway.privacy.text import Edit, LazyPattern, apply_edits, plain_copy

# How the masks of this module open: a code next to one is no code of its own (see `codes`).
MASK_PREFIXES = ("[IBAN …", "[card …", "[NIR …")

# ISO 13616 registry lengths, with the countries that use the format without being in the registry.
_IBAN_REGISTRY = (
    "AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BI27 BR29 BY28 CH21 CR22 CY28 CZ24 DE22 DJ27 DK18 DO28 "
    "EE20 EG29 ES24 FI18 FK18 FO18 FR27 GB22 GE22 GI23 GL18 GR27 GT28 HN28 HR21 HU28 IE22 IL23 IQ23 IS26 "
    "IT27 JO30 KW30 KZ20 LB28 LC32 LI21 LT20 LU20 LV21 LY25 MC27 MD24 ME22 MK19 MN20 MR27 MT31 MU30 NI28 "
    "NL18 NO15 OM23 PK24 PL28 PS29 PT25 QA29 RO24 RS22 RU33 SA24 SC31 SD18 SE24 SI19 SK24 SM27 SO23 ST25 "
    "SV28 TL23 TN24 TR26 UA29 VA22 VG24 XK20 YE30 "
    "AO25 BF28 BJ28 CF27 CG27 CI28 CM27 CV25 DZ26 GA27 GQ27 GW25 IR26 KM27 MA28 MG27 ML28 MZ25 NE28 SN28 "
    "TD27 TG28 GF27 GP27 MQ27 RE27 PF27 TF27 YT27 NC27 PM27 WF27 BL27 MF27"
)
_IBAN_LENGTHS = {entry[:2]: int(entry[2:]) for entry in _IBAN_REGISTRY.split()}
# These read the plain copy. Where a long number is: a digit, then 11 more letters or digits with small
# gaps (phone numbers have fewer).
_NUMBER_CLUSTER = LazyPattern(r"[0-9](?<![0-9][0-9])(?<![0-9][ -][0-9])(?:[ -]{0,3}+[0-9A-Z]){11,}+")
_IBAN = LazyPattern(r"[A-Z](?<![A-Za-z0-9\]][A-Z])[A-Z][0-9]{2}(?: {0,3}[0-9A-Z]){11,30}")
_NIR = LazyPattern(
    r"[1-478](?<![0-9A-Za-z\]][1-478])(?<![0-9\]] [1-478])(?: {0,2}[0-9AB]){14}(?![0-9A-Za-z\[])(?! [0-9\[])"
)
# A number's groups in table cells or wrapped at a line's end: in the plain copy a tab, and a line break
# alone (spaces and tabs around it), read as spaces; a blank line still parts two numbers.
_BLANK_LINE = LazyPattern(r"\n[ \t\r]*\n\s*")
_NIR_LAYOUT = LazyPattern(r"[0-9]{5}(?:[0-9]{2}|2[AB])[0-9]{8}")
# A run of digit groups; its last group is left out when a word or a mask's label is glued to it (`2633\n482913code`:
# the card before it still is one), so masking what follows first or last finds the same card.
_CARD_RUN = LazyPattern(r"[0-9](?<![0-9A-Za-z\]][0-9])(?:[ -]{0,3}[0-9]){12,}+")
_DIGIT_GROUP = LazyPattern(r"[0-9]+")
_IBAN_BEFORE = LazyPattern(r"[A-Za-z]{2}[0-9]{2}[ -]{1,3}$")
# An IBAN in small letters or with dashes (see the docstring): read in groups of four only.
_LOOSE_IBAN = LazyPattern(
    r"[A-Za-z](?<![A-Za-z0-9\]][A-Za-z])[A-Za-z][0-9]{2}(?:([ -]{1,2})[0-9A-Za-z]{4}(?:\1[0-9A-Za-z]{4}){1,6}"
    r"(?:\1[0-9A-Za-z]{1,3})?|[0-9A-Za-z]{11,30})(?![0-9A-Za-z\[])"
)
# Where one may start, found from its check digits: digits are rare in text, letters everywhere.
_LOOSE_IBAN_DIGITS = LazyPattern(r"[0-9]{2}(?<=[A-Za-z]{2}[0-9]{2})")
# A card written with dots or slashes, the same mark between every group.
_MARKED_CARD = LazyPattern(
    r"[2-6](?<![0-9A-Za-z.\]/][2-6])[0-9]{3}([./])[0-9]{3,6}(?:\1[0-9]{1,5}){1,3}(?![0-9A-Za-z\[]|[./][0-9])"
)
_IBAN_GOES_ON = LazyPattern(r" {0,3}[0-9A-Za-z\[]")


def _lines_joined(plain: str) -> str:
    """`plain` with each tab, and each line break that is not part of a blank line, as a space (in its place)."""
    if "\n" not in plain:
        return plain.replace("\t", " ")
    joined = plain.replace("\t", " ").replace("\r", " ").replace("\n", " ")
    pieces: list[str] = []
    done = 0
    for blank in _BLANK_LINE.finditer(plain):
        pieces += [joined[done : blank.start()], plain[blank.start() : blank.end()]]
        done = blank.end()
    return "".join(pieces) + joined[done:] if pieces else joined


def _compact(chars: str) -> str:
    return "".join(ch for ch in chars if ch.isascii() and ch.isalnum())


def _iban_valid(iban: str) -> bool:
    if not 2 <= int(iban[2:4]) <= 98:
        return False
    rearranged = iban[4:] + iban[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


def _iban_end(text: str, match: re.Match[str]) -> int | None:
    """Where the IBAN opening `match` ends, by its country's length; None if it cannot be one."""
    written = match.group(0)
    length = _IBAN_LENGTHS.get(written[:2])
    if length is None:  # a country missing from the table: the number as written, if it ends there
        if _IBAN_GOES_ON.match(text, match.end()):
            return None
        return match.end() if 15 <= len(_compact(written)) <= 34 else None
    seen = 0
    for offset, ch in enumerate(written):
        if ch.isascii() and ch.isalnum():
            seen += 1
            if seen == length:
                end = match.start() + offset + 1
                glued = end < len(text) and (text[end].isascii() and text[end].isalnum() or text[end] == "[")
                return None if glued else end
    return None


def _loose_iban_edits(plain: str) -> list[Edit]:
    edits: list[Edit] = []
    for digits in _LOOSE_IBAN_DIGITS.finditer(plain):
        start = digits.start() - 2
        if plain[start : start + 2].upper() not in _IBAN_LENGTHS:  # the country first: the cheapest test
            continue
        match = _LOOSE_IBAN.match(plain, start)
        if match is None or (edits and match.start() < edits[-1][1]):
            continue
        iban = _compact(match.group()).upper()
        if _IBAN_LENGTHS.get(iban[:2]) == len(iban) and _iban_valid(iban):
            edits.append((match.start(), match.end(), f"[IBAN …{iban[-4:]}]"))
    return edits


def _marked_card_edits(plain: str) -> list[Edit]:
    edits = []
    for match in _MARKED_CARD.finditer(plain):
        sizes = [len(group) for group in _DIGIT_GROUP.findall(match.group())]
        digits = "".join(_DIGIT_GROUP.findall(match.group()))
        diners_layout = sizes == [4, 6, 4] and (digits[:2] in ("36", "38") or "300" <= digits[:3] <= "305")
        if (
            13 <= len(digits) <= 19
            and (len(digits) in _card_lengths(digits) or diners_layout)
            and _card_layout(sizes)
            and _luhn(digits)
        ):
            edits.append((match.start(), match.end(), f"[card …{digits[-4:]}]"))
    return edits


def _iban_edits(plain: str) -> list[Edit]:
    edits = []
    position = 0
    while match := _IBAN.search(plain, position):
        end = _iban_end(plain, match)
        iban = _compact(plain[match.start() : end]) if end else ""
        if end and _iban_valid(iban):
            edits.append((match.start(), end, f"[IBAN …{iban[-4:]}]"))
            position = end
        else:
            position = match.start() + 2
    return edits


# Where a NIR may be cut: after the sex, the year, the month, the department, the town and the number
# (1 85 05 78 006 084 36). Spaces elsewhere make it some other row of numbers; so does a NIR cut but not
# after its sex digit, unless only its key stands apart (three numbers of 5 digits are no NIR).
_NIR_CUTS = frozenset({1, 3, 5, 7, 10, 13})


def _nir_edits(plain: str) -> list[Edit]:
    edits = []
    for match in _NIR.finditer(plain):
        nir = _compact(match.group())
        if not _NIR_LAYOUT.fullmatch(nir) or not _nir_layout(match.group()):
            continue
        number = nir[:5] + {"2A": "19", "2B": "18"}.get(nir[5:7], nir[5:7]) + nir[7:13]
        if int(nir[13:]) == 97 - int(number) % 97:
            edits.append((match.start(), match.end(), f"[NIR …{nir[-4:]}]"))
    return edits


def _cuts(written: str) -> set[int]:
    """After how many characters `written` has spaces."""
    cuts, seen = set(), 0
    for ch in written:
        if ch == " ":
            cuts.add(seen)
        else:
            seen += 1
    return cuts


def _nir_layout(written: str) -> bool:
    cuts = _cuts(written)
    return not cuts or cuts == {13} or (1 in cuts and cuts <= _NIR_CUTS)


def _card_layout(sizes: list[int]) -> bool:
    """Whether digit groups of these sizes are written as cards are: 4 4 4 4 (the last group may be
    shorter), 4 6 5, 4 6 4, 4 3 3 3, or unbroken."""
    if len(sizes) == 1 or sizes in ([4, 6, 5], [4, 6, 4], [4, 3, 3, 3]):
        return True
    return all(size == 4 for size in sizes[:-1]) and sizes[-1] <= 4


def _luhn(digits: str) -> bool:
    total = 0
    for index, ch in enumerate(reversed(digits)):
        value = ord(ch) - 48
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


_VISA_LENGTHS = frozenset({13, 16, 19})
_SIXTEEN = frozenset({16})
_FIFTEEN = frozenset({15})
_SIXTEEN_TO_NINETEEN = frozenset(range(16, 20))
_NO_LENGTH: frozenset[int] = frozenset()


def _card_lengths(digits: str) -> frozenset[int]:
    """The lengths a known issuer gives its cards opening on these digits (at least four of them)."""
    two, three, four = int(digits[:2]), int(digits[:3]), int(digits[:4])
    if digits[0] == "4":
        return _VISA_LENGTHS
    if 51 <= two <= 55 or 2221 <= four <= 2720:
        return _SIXTEEN
    if two in (34, 37):
        return _FIFTEEN
    if four == 6011 or 644 <= three <= 649 or two == 65 or 3528 <= four <= 3589 or two == 62:
        return _SIXTEEN_TO_NINETEEN
    if two in (36, 38) or 300 <= three <= 305:
        # Diners also makes cards of 14 digits, a SIRET's length (Luhn-valid too): see _cards_in.
        return _SIXTEEN_TO_NINETEEN
    if two == 50 or 56 <= two <= 69:  # Maestro
        return _SIXTEEN_TO_NINETEEN
    return _NO_LENGTH


def _card_edits(plain: str, written: str = "") -> list[Edit]:
    """Cards in `plain`; `written` is the same text as written (same offsets), where line breaks still show."""
    edits = []
    for run in _CARD_RUN.finditer(plain):
        end = run.end()
        if end < len(plain) and (plain[end] == "[" or (plain[end].isascii() and plain[end].isalpha())):
            while end > run.start() and plain[end - 1].isdigit():
                end -= 1  # the glued group is no part of a card
        if end - run.start() >= 13 and not _IBAN_BEFORE.search(plain, max(0, run.start() - 8), run.start()):
            edits += _cards_in(plain, run.start(), end, written)  # (not after an IBAN that failed its check)
    return edits


def _wrapped_sizes(groups: list[tuple[int, int]], written: str) -> list[int] | None:
    """The groups' sizes read with each line break between two of them as no gap at all (a card wrapped in the
    middle of a group: `4970 1012 34` at a line's end, `56 7890` on the next), or None when none is wrapped."""
    if "\n" not in written:
        return None
    sizes = [groups[0][1] - groups[0][0]]
    wrapped = False
    for (_, end), (start, after) in zip(groups, groups[1:], strict=False):
        if "\n" in written[end:start]:
            sizes[-1] += after - start
            wrapped = True
        else:
            sizes.append(after - start)
    return sizes if wrapped else None


def _cards_in(plain: str, start: int, end: int, written: str = "") -> list[Edit]:
    """Cards inside one run of digit groups (`plain[start:end]`): the first group where a card starts, its longest
    valid end."""
    groups = [group.span() for group in _DIGIT_GROUP.finditer(plain, start, end)]
    edits = []
    first = 0
    while first < len(groups):
        if plain[groups[first][0]] not in "23456":  # no issuer opens on 0, 1, 7, 8 or 9
            first += 1
            continue
        best = None
        digits = ""
        sizes: list[int] = []
        lengths = None
        for last in range(first, len(groups)):
            start, end = groups[last]
            digits += plain[start:end]
            sizes.append(end - start)
            if len(digits) > 19:
                break
            if len(digits) < 13:
                continue
            lengths = _card_lengths(digits) if lengths is None else lengths
            diners_layout = sizes == [4, 6, 4] and (
                digits[:2] in ("36", "38") or "300" <= digits[:3] <= "305"
            )
            laid_out = _card_layout(sizes) or _card_layout(_wrapped_sizes(groups[first : last + 1], written) or sizes)
            if (len(digits) in lengths or diners_layout) and laid_out and _luhn(digits):
                best = (last, digits)
        if best is None:
            first += 1
            continue
        last, digits = best
        edits.append((groups[first][0], groups[last][1], f"[card …{digits[-4:]}]"))
        first = last + 1
    return edits


def _mask_numbers_in(region: str, plain: str) -> str:
    """IBANs first, then NIRs, then cards, each found in the plain copy and masked in both."""
    for finder in (_iban_edits, _loose_iban_edits, _nir_edits, _card_edits):
        edits = _card_edits(plain, region) if finder is _card_edits else finder(plain)
        if edits:
            region, plain = apply_edits(region, edits), apply_edits(plain, edits)
    return region


def mask_numbers(
    text: str, around: bool = True, small_ibans: bool = False, marked_cards: bool = False, other_digits: bool = False
) -> str:
    """IBANs, NIRs and cards, looked for `around` long runs of digits (with a margin for the lookarounds);
    IBANs in small letters and cards with dots or slashes, which have no such run, in the whole text when
    a glance saw one may be there. `other_digits`: the text may hold digits of other scripts."""
    plain = _lines_joined(plain_copy(text, other_digits))
    edits = (_loose_iban_edits(plain) if small_ibans else []) + (_marked_card_edits(plain) if marked_cards else [])
    if edits:
        text, plain = apply_edits(text, edits), apply_edits(plain, edits)
    if not around:
        return text
    regions: list[list[int]] = []
    for cluster in _NUMBER_CLUSTER.finditer(plain):
        start, end = max(0, cluster.start() - 6), min(len(plain), cluster.end() + 3)
        if regions and start <= regions[-1][1]:
            regions[-1][1] = end
        else:
            regions.append([start, end])
    pieces: list[str] = []
    done = 0
    for start, end in regions:
        pieces += [text[done:start], _mask_numbers_in(text[start:end], plain[start:end])]
        done = end
    return "".join(pieces) + text[done:] if regions else text
