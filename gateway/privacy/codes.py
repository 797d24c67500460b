"""One-time codes and passwords given in messages: the codes masked, a password message replaced whole.

What was chosen: a *code message* names a code: verification code, one-time code or password, OTP, 2FA,
passcode, "is your ... code", "your PIN", "use 482913 to sign in", "votre code", "Bestätigungscode", "tu
código", "seu código"..., or warns not to share it ("don't share the code", "ne partagez pas le code", "no
compartas este código", "teilen Sie diesen Code nicht", "non condividere questo codice", "não compartilhe
este código"; such a warning in a source file's header makes its numbers masked too: one mask too many
rather than a leak). In it every number of 4 to 8 digits is a code, however written: "482913", "482 913",
"482-913", "48 29 13", digit by digit with spaces of any width (zero-width ones too), one digit per line
or per table cell (line breaks, "|", "[ ]", box lines, "> " quote marks between), in the digits of any
script (full-width ４８２９１３, Arabic-Indic ٤٨٢٩١٣, Devanagari, Thai, mathematical 𝟒𝟖𝟐...). Digits joined
by more than a space or a dash count together up to 8. A run of more than 8 digits is a phone or an
order number and stays, unless one of its groups has 6 to 8 digits (a code written before another
number). Never a code: a number glued to another by ":", "/", "." or "," (a time, a date, an amount, a
version), a year 1900-2099 after a month name or ©, an ISO, day-month-year or spaced date, a range of
years, a US number after "(555) ". Except just after the words that name a code ("your code is 482.913",
"Code: 48.29.13"), where a dotted number is the code, and is then masked wherever the message writes it.
Elsewhere in a code message, what reads as an amount (a currency sign or code before or after: "1 200 €",
"USD 4 500"), a time written with a space ("10 30"), a room, gate or seat ("room 4 512", "salle 4512") or
a short number to call or text (up to five digits after "call", "SMS"...) is left alone; just after the
code's words it is a code all the same. An order number of 4 to 8 digits in a code message is masked
too: one mask too many rather than a leak. (Every link of a code message is masked by `links`.)

Outside a code message, a code is a code where its word names it, however it is spaced: the number
just after "code", "PIN", "OTP", "passcode" ("Code: 731 904 (valid 10 min)", "The code: 731904", "Code
731904 expires soon", "My code is 482913"), capitals and digits there or just before "is your code"
("ABX-482"), and a code spelled out in words just after "code" (or "passcode", "codice"), a few words
between at most: four to eight digit words in English, French, German, Spanish or Italian ("my code is
seven three one nine zero four", "le code est sept trois un neuf zéro quatre"). Not an error, exit, status, postal, area, product or
source code (the word before "code" says so: see `_NOT_A_SECRET_CODE`), not a year alone ("Advent of Code
2023"), not a count ("one two three four"), not a name with a number ("COVID-19"). Digits of every form count: superscript ⁷³¹, circled
⑦③①, full-width, Arabic-Indic, mathematical bold (read by `unicodedata.digit`, each in its place).

A message giving a password says "temporary password" or its kin (French, German, Spanish, Italian), or
"password is / password: / mot de passe : / Passwort lautet" followed by something that looks like a
password (a digit, a symbol or mixed case), or holds a line that is only "Password: <value>". Not "Forgot
your password?", not "your password is about to expire"; a one-time password is a code.
"""

from __future__ import annotations

import re

from gateway.privacy.numbers import MASK_PREFIXES
from gateway.privacy.text import apply_edits, find_all, lower_same_length, plain_copy

CODE = "[code]"
PASSWORD_MESSAGE = "[a message giving a password, kept from agents]"

# --- messages giving a password -----------------------------------------------------------------------

_PASSWORD_HINTS = (re.compile(rb"pass"), re.compile(rb"kennwort"), re.compile(rb"contrase"))
_PASSWORD_WORDS = ("password", "passwort", "kennwort", "mot de passe", "contraseña", "contrasena")
_ONE_TIME = ("one-time", "one time", "onetime", "single-use", "single use", "einmal", "usage unique")
_ADJECTIVES = (
    "temporary", "temp", "provisional", "initial", "generated", "default", "temporäres", "temporares",
    "vorläufiges", "vorlaufiges", "initiales", "einmaliges",
)  # fmt: skip
# A value that looks like a password: 4+ characters holding a digit, a symbol, or mixed case. Never a
# bracket, so that no mask ("[code]") can be taken for one.
_PASSWORD_VALUE = (
    r"(?:[\"'«]|“)?(?![$<{%*])(?=[^\s\"'»\[\]]{0,128}(?:[0-9]|[!@#$%^&*+=~_/\\|<>{}-]|[a-z][A-Z]|[A-Z][a-z]*[A-Z]))"
    r"[^\s\"'»\[\]]{4,128}"
)
_PASSWORD_VERB = r"(?:is|was\s+set\s+to|has\s+been\s+(?:set|reset|changed)\s+to|è|est|lautet|ist|es)"
# Only the words ignore case: the value's own case tells whether it looks like a password.
_PASSWORD_AFTER = re.compile(
    r"(?i:\s+(?:temporaire|provisoire|initial|temporal|provisional|temporanea|provvisoria)\b)"
    rf"|(?i:(?:\s+{_PASSWORD_VERB})?\s*:|\s+{_PASSWORD_VERB}(?=\s))\s*{_PASSWORD_VALUE}"
)
_PASSWORD_LINE = re.compile(
    r"[ \t]*:[ \t]*(?![hH][tT][tT][pP][sS]?:|www\.|[$<{%*])[^\s\[\]]{4,128}[ \t]*$", re.MULTILINE
)


def gives_a_password(text: str, low_bytes: bytes) -> bool:
    """Whether `text` (`low_bytes`: its UTF-8 bytes in lower case) gives a password."""
    if not any(hint.search(low_bytes) for hint in _PASSWORD_HINTS):
        return False
    low = lower_same_length(text)
    for word in _PASSWORD_WORDS:
        for index in find_all(low, word):
            before = low[max(0, index - 24) : index]
            if before.rstrip(" -").endswith(_ONE_TIME):
                continue
            if before.rstrip().endswith(_ADJECTIVES):
                return True
            if index and low[index - 1].isalpha():
                continue
            after = index + len(word)
            if _PASSWORD_AFTER.match(text, after):
                return True
            line_start = low.rfind("\n", max(0, index - 64), index) + 1 or max(0, index - 64)
            if not low[line_start:index].strip(" \t>") and _PASSWORD_LINE.match(text, after):
                return True
    return False


# --- one-time codes -----------------------------------------------------------------------------------

# Code messages are told in the UTF-8 bytes in lower case (ASCII letters lowered, accented capitals
# spelled out): no lowering of the whole text. Each clue opens on a literal, which `re` finds fast, and
# comes with the phrases to look for around it (so many bytes before and after): one search of the whole
# text for every phrase would try them all at every character. The specific phrases are grouped by first
# letter, which lets `re` skip most branches at once.
# The generic phrases ("your code", "use this code", "votre code") are everyday words among programmers:
# they make a code message only when the number follows them, a verb or marks at most between (or, for
# "... is your code", when it comes just before).
_DIGIT_NEAR = r"(?=(?:\s+(?:is|es|est|ist|lautet|è|é))?[\s:>|\[*\"'«-]{0,8}[0-9])"
# "Don't share this code", as code messages warn, in English, French, Spanish, German, Italian, Portuguese.
_SHARE_WARNINGS = (
    r"|(?<![a-z])(?:don(?:'|’)?t|do not|never) share (?:the |this |your |that )?(?:code|pin|otp)"
    r"|ne (?:partagez|communiquez|divulguez|donnez) (?:jamais |pas )?(?:ce |le |votre |ton )?code"
    r"|no (?:compartas|comparta|compartan) (?:este |el |tu |su |ese )?c(?:ó|Ó|o)digo"
    r"|(?:teilen sie|teile|gib|geben sie) (?:diesen |den |ihren |deinen )?code (?:niemals |nicht|mit niemandem)"
    r"|non condivider(?:e|lo) (?:questo |il |tuo )?codice"
    r"|n(?:ã|Ã|a)o (?:compartilhe|partilhe) (?:este |o |seu |esse )?c(?:ó|Ó|o)digo"
)
_CODE_PHRASES = re.compile(
    (
        r"a(?:uth(?:entication|enticator)?[ -]?code|ccess[ -]?code|nmelde-?code|uthentifizierungs-?code)"
        r"|b(?:ackup[ -]?code|est(?:ä|Ä|a)tigungs-?code)"
        r"|c(?:onfirmation[ -]?code|(?:ó|Ó|o)digo de (?:verificaci(?:ó|Ó|o)n|seguridad|acceso|confirmaci(?:ó|Ó|o)n)"
        r"|ode(?: pin\b| de (?:v(?:é|É|e)rification|confirmation|s(?:é|É|e)curit(?:é|É|e)|connexion|validation"
        r"|activation)| d(?:'|’)(?:acc(?:è|È|e)s|authentification|activation)"
        r"| (?:(?:à|À|a) usage unique|unique|temporaire|provisoire))"
        r"|odice (?:di (?:verifica|sicurezza|accesso|conferma)|otp))"
        r"|einmal-?code|freigabe-?code|log-?in[ -]?code|mfa[ -]?code|one[ -]?time[ -](?:code|passcode)"
        r"|otp[ -]?code|p(?:asscode|in[ -]?code)|recovery[ -]?code"
        r"|s(?:ecurity[ -]?code|ign(?:-in|in|-on)[ -]?code|ingle-use[ -]?code|ms[ -]?code|icherheits-?code)"
        r"|temporary[ -]?code|v(?:erif(?:ication|y)[ -]?code|erifizierungs-?code)|zugangs-?code|2fa[ -]?code"
        + _SHARE_WARNINGS
        + r"|c(?:ó|Ó|o)digo de (?:verifica(?:ç|Ç|c)(?:ã|Ã|a)o|seguran(?:ç|Ç|c)a|acesso|confirma(?:ç|Ç|c)(?:ã|Ã|a)o)"
        + r"|(?<![a-z])(?:(?:enter|use|type) (?:the |this |your )?code|votre code|ton code|ihr code|dein code"
        r"|tu c(?:ó|Ó|o)digo|su c(?:ó|Ó|o)digo|seu c(?:ó|Ó|o)digo|tuo codice)\b"
        + _DIGIT_NEAR
        + r"|(?<![a-z])your (?:[^ \n]{1,24} ){0,3}code\s*(?:is\b|:)"
        + _DIGIT_NEAR
        + r"|[0-9][^0-9\n]{0,16}is your (?:[^ \n]{1,24} ){0,3}code\b"
    ).encode()
)
_CODE_CLUES = tuple(
    (re.compile(clue.encode()), phrases if isinstance(phrases, re.Pattern) else re.compile(phrases.encode()), before, after)
    for clue, phrases, before, after in (
        ("cod", _CODE_PHRASES, 110, 40),
        ("ódigo", _CODE_PHRASES, 40, 40),
        ("otp", r"(?<![a-z])[th]?otp(?![a-z])", 1, 0),
        ("fa(?:(?<=[2m]fa)|ctor)", r"(?<![a-z0-9])[2m]fa(?![a-z])|two[ -]factor", 4, 6),
        ("step", r"(?<![a-z])(?:two|2)[ -]step", 4, 0),
        ("to (?:sign|log|verif|confirm)", r"(?<![a-z])(?:use|enter|type) [0-9][0-9 -]{2,10}[0-9] to (?:sign|log|verify|confirm)", 20, 8),
        ("pass", r"one[ -]?time[ -]pass(?:word|code)|mot de passe (?:(?:à|À|a) usage unique|unique)|einmal-?passwort", 12, 24),
        ("pin", r"(?<![a-z])(?:(?:your|the|this|enter|use|type) pin(?![a-z])|pin(?::| is))" + _DIGIT_NEAR
         + r"|(?<![a-z])(?:don(?:'|’)?t|do not|never) share (?:the |this |your |that )?pin(?![a-z])", 30, 30),
    )
)  # fmt: skip
_JOIN_CHARS = " \\t\\r\\n|>\\[\\]-"  # in the plain copy
# A run of digit groups joined by spaces, dashes, line breaks or table marks; a lone group needs 4 digits.
# (Written to open on [0-9] outside any alternation, so that `re` jumps from digit to digit.)
_CODE_RUN = re.compile(f"[0-9]++(?:(?:[{_JOIN_CHARS}]{{1,16}}+[0-9]++)+|(?<=[0-9]{{4}}))")
_DIGIT_GROUP = re.compile(r"[0-9]+")
_DIGIT_SPLIT = re.compile(r"([0-9]+)")
_US_AREA_BEFORE = re.compile(r"\(\s?[0-9]{3}\s?\)\s?$")
_DAY = re.compile(r"[0-3]?[0-9](?:st|nd|rd|th|er|\.)?,?")
_MONTH_NAMES = (
    "january february march april may june july august september october november december jan feb mar "
    "apr jun jul aug sep sept oct nov dec janvier février fevrier mars avril mai juin juillet août aout "
    "septembre octobre novembre décembre decembre janv févr fevr avr juil déc januar jänner februar märz "
    "maerz juni juli oktober dezember jän mär okt dez enero febrero marzo abril mayo junio julio agosto "
    "septiembre setiembre octubre noviembre diciembre ene abr ago dic gennaio febbraio aprile maggio "
    "giugno luglio settembre ottobre dicembre gen mag giu lug ott"
)
_MONTHS = frozenset(_MONTH_NAMES.split())


def names_a_code(low_bytes: bytes) -> bool:
    """Whether the text (as lowered UTF-8 bytes) names a one-time code."""
    for clue, phrases, before, after in _CODE_CLUES:
        for found in clue.finditer(low_bytes):
            if phrases.search(low_bytes, max(0, found.start() - before), found.end() + after):
                return True
    return False


def _is_year(group: str) -> bool:
    return len(group) == 4 and group[:2] in ("19", "20")


def _date_words_before(text: str, start: int, day_allowed: bool) -> bool:
    """Whether a month name (or ©, for a year) comes just before `start`: "March 12, 2026", "© 2026"."""
    words = text[max(0, start - 32) : start].lower().replace("©", " © ").split()
    if not words:
        return False
    last = words[-1].strip(".,")
    if last in _MONTHS or (day_allowed and last in ("©", "(c)", "copyright")):
        return True
    return day_allowed and len(words) > 1 and bool(_DAY.fullmatch(last)) and words[-2].strip(".,") in _MONTHS


def _is_date(parts: list[str], joins: list[str]) -> bool:
    dashed = all("-" in join for join in joins) or (len(parts) == 3 and all(join == " " for join in joins))
    if len(parts) == 2 and dashed and _is_year(parts[0]) and _is_year(parts[1]):
        return True  # a range of years, 2025-2026
    if len(parts) != 3 or not dashed:
        return False
    if _is_year(parts[0]):
        _, month, day = parts
    elif _is_year(parts[2]):
        day, month, _ = parts
        if int(month) > 12:
            day, month = month, day
    else:
        return False
    return len(month) <= 2 and len(day) <= 2 and 1 <= int(month) <= 12 and 1 <= int(day) <= 31


def _not_a_code(text: str, start: int, parts: list[str], joins: list[str]) -> bool:
    """Dates, years after a month name, US phone numbers: digit runs that a code message holds too."""
    if len(parts) == 1:
        return _is_year(parts[0]) and _date_words_before(text, start, day_allowed=True)
    if len(parts) == 2:
        first, second = parts
        if _is_year(second) and len(first) <= 2:  # March 12 2026
            return 1 <= int(first) <= 31 and _date_words_before(text, start, day_allowed=False)
        if _is_year(second) and _is_year(first):  # 2025-2026
            return "-" in joins[0]
        return (
            len(first) == 3
            and len(second) == 4
            and bool(_US_AREA_BEFORE.search(text, max(0, start - 8), start))
        )
    return len(parts) == 3 and _is_date(parts, joins)


# One or two spaces (of any width, in the plain copy), or a dash with at most a space on each side.
_TIGHT_JOINS = frozenset({" ", "  ", "-", " -", "- ", " - "})


def _cannot_be_a_code(text: str, start: int, end: int) -> bool:
    """A group glued to another number by ':', '/', '.' or ',' (a time, a date, an amount, a version), or
    the last four characters a mask keeps."""
    if start >= 2 and text[start - 1] in ":/.," and text[start - 2].isdigit():
        return True
    if end + 1 < len(text) and text[end] in ":/.," and text[end + 1].isdigit():
        return True
    return text[max(0, start - 7) : start].endswith(MASK_PREFIXES)


_Unit = tuple[int, int, list[str], list[str]]  # start, end, digit groups, what joins them


def _segments(text: str, groups: list[tuple[int, int]]) -> list[list[_Unit]]:
    """Units (groups joined tightly: "482 913", "48-29-13", "4 8 2 9 1 3") in segments (units joined more
    loosely: line breaks, table cells), cut where a unit is a date or a phone number."""
    units: list[_Unit] = []
    unit_start, previous_end = groups[0]
    parts, joins = [text[unit_start:previous_end]], []
    for start, end in groups[1:]:
        join = text[previous_end:start]
        if join in _TIGHT_JOINS:
            parts.append(text[start:end])
            joins.append(join)
        else:
            units.append((unit_start, previous_end, parts, joins))
            unit_start, parts, joins = start, [text[start:end]], []
        previous_end = end
    units.append((unit_start, previous_end, parts, joins))
    segments: list[list[_Unit]] = [[]]
    for unit in units:
        if _not_a_code(text, unit[0], unit[2], unit[3]):
            segments.append([])
        else:
            segments[-1].append(unit)
    return segments


def _code_spans(text: str, run: re.Match[str]) -> list[tuple[int, int]]:
    start, end = run.span()
    written = run.group()
    if written.isdigit():  # one lone group, the common case
        if end - start > 8 or _cannot_be_a_code(text, start, end) or _not_a_code(text, start, [written], []):
            return []
        return [(start, end)]
    pieces = _DIGIT_SPLIT.split(written)
    parts, joins = pieces[1::2], pieces[2:-1:2]
    # Only the first and the last group touch what lies around the run: only they can be glued to more.
    if not _cannot_be_a_code(text, start, start + len(parts[0])) and not _cannot_be_a_code(
        text, end - len(parts[-1]), end
    ):
        total = sum(map(len, parts))
        if total < 4:
            return []
        if total <= 8 and all(len(part) != 4 for part in parts):  # without 4 digits, no date nor phone
            return [(start, end)]
        if all(join in _TIGHT_JOINS for join in joins):  # a single unit
            if total <= 8:
                return [] if _not_a_code(text, start, parts, joins) else [(start, end)]
            return [(start, end)] if any(6 <= len(part) <= 8 for part in parts) else []
    groups = [group.span() for group in _DIGIT_GROUP.finditer(text, start, end)]
    if _cannot_be_a_code(text, *groups[0]):
        groups.pop(0)
    if groups and _cannot_be_a_code(text, *groups[-1]):
        groups.pop()
    if not groups:
        return []
    spans: list[tuple[int, int]] = []
    for units in _segments(text, groups):
        sizes = [sum(map(len, unit[2])) for unit in units]
        total = sum(sizes)
        if total < 4:
            continue
        if total <= 8:  # one code, whatever its layout
            spans.append((units[0][0], units[-1][1]))
            continue
        # A longer segment: each unit of 4 to 8 digits, each stretch of small units adding up to 4 or more.
        stretch: list[int] = []
        for index, size in enumerate([*sizes, 99]):
            if size <= 3:
                stretch.append(index)
                continue
            if sum(sizes[i] for i in stretch) >= 4:
                spans.append((units[stretch[0]][0], units[stretch[-1]][1]))
            stretch = []
            if index < len(units) and (size <= 8 or any(6 <= len(part) <= 8 for part in units[index][2])):
                spans.append((units[index][0], units[index][1]))
    return spans


# A code written just after the words that name it ("your code is 482.913", "Code: 12 34") is a code
# whatever it looks like; elsewhere in a code message, what looks like an amount, a time, a room, a
# short phone number or a date is left alone.
_CODE_WORDS_BEFORE = re.compile(
    r"(?:code|codice|c[óo]digo|pin|otp|passcode|password|passwort|kennwort|mot de passe|contrase[ñn]a|senha)"
    r"(?:\s+(?:is|es|est|ist|lautet|è|é))?[\s:>*\"'«=-]{0,8}$"
)
_DOTTED_CODE = re.compile(r"[0-9](?<![0-9.,][0-9])[0-9]{1,3}(?:\.[0-9]{2,4}){1,3}(?![0-9]|[.,][0-9])")
_CURRENCY = r"[€$£¥₹₽₩₺₪฿]"
_CURRENCY_BEFORE = re.compile(
    _CURRENCY + r"[ \t]{0,2}$|(?<![a-z])(?:eur|usd|gbp|chf|jpy|cad|aud|sek|nok|dkk|pln|czk|inr|brl|r\$|us\$)[ \t]{0,2}$"
)
_CURRENCY_AFTER = re.compile(
    r"[ \t]{0,2}(?:" + _CURRENCY + r"|(?:eur|euros?|usd|gbp|chf|jpy|cad|aud|sek|nok|dkk|pln|czk|huf|inr|brl"
    r"|mxn|cny|rub|zar|dollars?|francs?|pounds?|kr|zł)(?![a-z]))"
)
_TIME = re.compile(r"(?:[01]?[0-9]|2[0-3]) {1,2}[0-5][0-9]")
_PLACE_NAMES = (
    "room rooms salle raum zimmer sala stanza aula office bureau büro buero suite floor étage etage stock "
    "gate porte door platform quai gleis voie seat siège building bâtiment batiment gebäude edificio "
    "apt apartment appartement flat unit box locker desk ward bay hall halle aisle row"
)
_PLACE_WORDS = frozenset(_PLACE_NAMES.split())
_PHONE_NAMES = (
    "call phone tel tél telephone téléphone telefon teléfono telefono dial fax hotline appelez appeler "
    "appel composez anrufen llame llama llamar chiama ligue sms text texto"
)
_PHONE_WORDS = frozenset(_PHONE_NAMES.split())


def after_code_words(low: str, start: int) -> bool:
    """Whether the number at `start` comes just after the words that name a code (`low`: the plain copy
    in lower case)."""
    return _CODE_WORDS_BEFORE.search(low, max(0, start - 40), start) is not None


def _ordinary_number(low: str, start: int, end: int) -> bool:
    """An amount ("1 200 €"), a time ("10 30"), a room ("room 4 512"), a short phone number ("call
    3179"): numbers a code message holds besides its code."""
    if _CURRENCY_BEFORE.search(low, max(0, start - 6), start) or _CURRENCY_AFTER.match(low, end):
        return True
    written = low[start:end]
    if _TIME.fullmatch(written):
        return True
    if sum(map(str.isdigit, written)) > 5:  # rooms and short numbers have at most five digits
        return False
    words = [word.strip(".,:;()#°n") for word in low[max(0, start - 32) : start].split()[-3:]]
    return bool(words) and (words[-1] in _PLACE_WORDS or any(word in _PHONE_WORDS for word in words))


def _dotted_codes(plain: str, low: str) -> list[tuple[int, int]]:
    """"482.913" just after a code's words: a code, where anywhere else it would read as an amount; and,
    once known, that code wherever else the message writes it."""
    found = [(match.span(), re.sub(r"[^0-9]", "", match.group())) for match in _DOTTED_CODE.finditer(plain)]
    codes = {
        digits for (start, _), digits in found if 4 <= len(digits) <= 8 and after_code_words(low, start)
    }
    return [span for span, digits in found if digits in codes]


def mask_codes(text: str, other_digits: bool = False, named: bool = False) -> str:
    """`text` with every code masked: for a text that `names_a_code`. `other_digits`: the text may hold
    digits of other scripts, read as ASCII ones. `named`: the codes its words name too (`mask_named_codes`),
    read in the same copy."""
    plain = plain_copy(text, other_digits)
    low = lower_same_length(plain)
    # Its numbers are all masked below: of the codes its words name, only those in letters are left.
    named_spans = _named_spans(plain, low, numbers=False) if named else []
    spans = _dotted_codes(plain, low) if "." in plain else []
    for run in _CODE_RUN.finditer(plain):
        for start, end in _code_spans(plain, run):
            # Only a number that reads as ordinary needs to know whether the code's words come before it.
            if not _ordinary_number(low, start, end) or (start == run.start() and after_code_words(low, start)):
                spans.append((start, end))
    if not spans and not named_spans:
        return text
    spans = [_whole_word(plain, start, end) for start, end in spans]
    masked = apply_edits(text, [(start, end, CODE) for start, end in spans + named_spans])
    return mask_named_codes(masked, other_digits) if named_spans else masked


def _whole_word(text: str, start: int, end: int) -> tuple[int, int]:
    """A code's span widened to the letters and digits glued to it: "K7Q9PL482913" is one code, masked whole,
    never its digits alone (which would leave half of it, and a "K7Q9PL[code]" that reads as a code again)."""
    while start > 0 and text[start - 1].isalnum():
        start -= 1
    while end < len(text) and text[end].isalnum():
        end += 1
    return start, end


# --- codes named in any text --------------------------------------------------------------------------

# Outside a code message, a code is still a code where the words name it: the number just after "code",
# "PIN", "OTP" or "passcode" ("Code: 731 904 (valid 10 min)", "The code: 731904", "Code 731904 expires
# soon", "My code is 482913"), a code of capitals and digits there ("Your code is ABX-482") or just
# before "is your ... code", and a code spelled out in words just after "code", a few words between at
# most ("seven three one nine zero four", "sept trois un neuf zéro quatre"). Not the code of something
# else: an error, exit or status code, a postal, area or country code, a product or article code, source
# code... (the word before "code" says so), nor a "code postal" (a word between), nor a year alone.
# Each opens on a literal, which `re` finds fast ("passcode" is found as "code", then read whole; "código"
# as "digo"), and gives where its word begins.
_CODE_WORDS = (
    ("cod", re.compile(r"cod(?:e|ice)(?![^\W\d_])"), 0),
    ("digo", re.compile(r"digo(?<=c[óo]digo)(?![^\W\d_])"), 2),
    ("pin", re.compile(r"pin(?![^\W\d_])"), 0),
    ("otp", re.compile(r"otp(?![^\W\d_])"), 0),
)
# The glance, on the lowered UTF-8 bytes: one of these words, not inside a longer one ("pinned", "encode").
_CODE_GLANCE = re.compile(rb"cod(?:e(?:(?<![a-z]code)|(?<=passcode))(?![a-z])|ice(?![a-z]))")
_OTHER_GLANCES = ((b"pin", re.compile(rb"pin(?![a-z])")), (b"otp", re.compile(rb"otp(?![a-z])")))
_NOT_A_SECRET_NAMES = (
    "error errors exit status return response http zip postal post area country dialing dialling dial "
    "region tax product item sku article source station airport color colour hs naf ape bank sort swift "
    "branch iso language currency reason fault stop exception result event key char character gpio "
    "ascii qr bar op class course program sample example test library module line font erreur retour "
    "sortie pays couleur produit fehler länder"
)
_NOT_A_SECRET_CODE = frozenset(_NOT_A_SECRET_NAMES.split())
_NOT_LETTERS = re.compile(r"[\W\d_]+")
_AFTER_CODE_WORD = re.compile(
    r"(?:\s+(?:is|was|est|es|ist|lautet|è|é|era|war|était|sera|will be))?[\s:=>*\"'«#_-]{1,8}"
)
_DIGIT_CODE = re.compile(r"[0-9]")
_JSON_NUMBER = re.compile(r"[\"']\s*:\s*[0-9]")
_CODE_START = re.compile(r"[0-9A-Z]")
# A code of capitals and digits, dashes between (`ABX-482`, `K7Q9PL`): see `_letter_code`.
_LETTER_CODE = re.compile(r"[A-Z0-9]{1,10}(?:-[A-Z0-9]{1,10}){0,3}(?![A-Za-z0-9]|[-.][A-Za-z0-9])")
# Glued to a mask's label (`[code]ABX-482`) is glued to what the label hides: no code of its own, as unmasked.
_LETTER_CODE_BEFORE = re.compile(r"(?<![A-Za-z0-9\]-])[A-Z0-9]{1,10}(?:-[A-Z0-9]{1,10}){0,3}$")
_IS_YOUR_CODE = re.compile(r" is your (?:[^ \n]{1,24} ){0,3}(?:code|pin|passcode)(?![^\W\d_])")
_DIGIT_WORDS = {
    **dict.fromkeys(("zero", "zéro", "oh", "null", "cero"), "0"),
    **dict.fromkeys(("one", "un", "une", "eins", "uno"), "1"),
    **dict.fromkeys(("two", "deux", "zwei", "dos", "due"), "2"),
    **dict.fromkeys(("three", "trois", "drei", "tres", "tre"), "3"),
    **dict.fromkeys(("four", "quatre", "vier", "cuatro", "quattro"), "4"),
    **dict.fromkeys(("five", "cinq", "fünf", "funf", "cinco", "cinque"), "5"),
    **dict.fromkeys(("six", "sechs", "seis", "sei"), "6"),
    **dict.fromkeys(("seven", "sept", "sieben", "siete", "sette"), "7"),
    **dict.fromkeys(("eight", "huit", "acht", "ocho", "otto"), "8"),
    **dict.fromkeys(("nine", "neuf", "neun", "nueve", "nove"), "9"),
}


def _trie(words: list[str]) -> str:
    """An alternation of `words` written as a tree of their letters: `re` then tries one branch per letter."""
    branches: dict[str, list[str]] = {}
    for word in words:
        branches.setdefault(word[0], []).append(word[1:])
    pattern = []
    for letter, rests in sorted(branches.items()):
        longer = [rest for rest in rests if rest]
        if not longer:
            pattern.append(re.escape(letter))
            continue
        optional = "?" if len(longer) < len(rests) else ""
        pattern.append(f"{re.escape(letter)}(?:{_trie(longer)}){optional}")
    return "|".join(pattern)


_DIGIT_WORD = f"(?:{_trie(sorted(_DIGIT_WORDS))})(?![^\\W\\d_])"
# Four or more digit words in a row, spaces, commas, dots or dashes between (in the lowered plain copy).
_SPELLED_RUN = re.compile(rf"(?<![^\W\d_]){_DIGIT_WORD}(?:[\s,.;/-]{{1,4}}{_DIGIT_WORD}){{3,}}")
_SPELLED_SPLIT = re.compile(r"[\s,.;/-]+")
# A code spelled out begins just after a code's word, or a few words after it, words only between ("the
# code they sent me is: seven three..."): a number or a mask between ends the reach, in a second pass too.
_SPELLED_LEAD = re.compile(
    _AFTER_CODE_WORD.pattern + rf"(?:[^\W\d_]+[\s,:'’-]{{1,3}}){{0,4}}?(?={_SPELLED_RUN.pattern})"
)
# The code words followed by what may be a code (a digit; letters and dashes then a digit: `ABX-482`;
# after "code", a code spelled out): a glance in `re` that passes over the others at once.
_MAY_FOLLOW = _AFTER_CODE_WORD.pattern + r"[a-z-]{0,12}[0-9]"
_FOLLOWED_CODE_WORDS = tuple(
    (literal, re.compile(f"{pattern.pattern}(?={_MAY_FOLLOW}{spelled})"), back)
    for literal, pattern, back in _CODE_WORDS
    for spelled in [f"|{_SPELLED_LEAD.pattern}" if literal == "cod" else ""]
)


def may_name_a_code(low_bytes: bytes, digits: int) -> bool:
    """Whether the text (as lowered UTF-8 bytes, holding so many `digits`) may name a code: a glance for
    `mask_named_codes`. Without two digits, only a code spelled out after "code" can be there."""
    if b"cod" in low_bytes and _CODE_GLANCE.search(low_bytes) is not None:
        return True
    if digits < 2:
        return False
    for hint, word in _OTHER_GLANCES:
        if hint in low_bytes:
            for found in word.finditer(low_bytes):
                if not found.start() or not low_bytes[found.start() - 1 : found.start()].isalpha():
                    return True
    return b"digo" in low_bytes


def _code_word_at(low_bytes: bytes, clue: bytes, start: int) -> bool:
    """Whether the clue found at `start` is a code's word (`may_name_a_code`, read where `names_a_code`
    found it)."""
    if clue == b"cod":
        return _CODE_GLANCE.match(low_bytes, start) is not None
    if clue in (b"otp", b"pin"):
        return not low_bytes[start + 3 : start + 4].isalpha() and not low_bytes[start - 1 : start].isalpha()
    return clue == "ódigo".encode()


def read_code_words(low_bytes: bytes, digits: int) -> tuple[bool, bool]:
    """Whether the text (as lowered UTF-8 bytes, holding so many `digits`) is a code message
    (`names_a_code`), and whether it may name a code (`may_name_a_code`): one reading for both."""
    if digits < 4:  # no code message has fewer
        return False, may_name_a_code(low_bytes, digits)
    named = False
    for clue, phrases, before, after in _CODE_CLUES:
        for found in clue.finditer(low_bytes):
            if phrases.search(low_bytes, max(0, found.start() - before), found.end() + after):
                return True, named or may_name_a_code(low_bytes, digits)
            named = named or _code_word_at(low_bytes, clue.pattern, found.start())
    return False, named


def _names_a_secret_code(low: str, start: int) -> bool:
    """Whether the code word at `start` names a secret: not glued to a word, not an error or postal code."""
    if low.endswith("pass", 0, start):
        start -= 4
    if start and (low[start - 1].isalnum() or low[start - 1] in "[]"):  # "[code]" is a mask, not a word
        return False
    before = low[max(0, start - 24) : start]
    kept = before.rstrip(" _-")
    if len(before) - len(kept) not in (1, 2):  # the word before: one or two spaces, dashes or "_" between
        return True
    words = _NOT_LETTERS.split(kept)
    return words[-1] not in _NOT_A_SECRET_CODE


_LETTERS_OR_DIGITS = re.compile(r"[A-Z]+|[0-9]+")


def _letter_code(written: str) -> bool:
    """A code of capitals and digits: three digits or more (`ABX-482`), or letters and digits mixed
    (`K7Q9PL`); not a name with a number (`COVID-19`, `UTF-8`)."""
    letters = sum(ch.isalpha() for ch in written)
    digits = sum(ch.isdigit() for ch in written)
    if not letters or not 4 <= letters + digits <= 16:
        return False
    return digits >= 3 or (digits >= 2 and len(_LETTERS_OR_DIGITS.findall(written)) >= 4)


def _named_code_edit(plain: str, low: str, start: int, numbers: bool = True) -> tuple[int, int] | None:
    """The code that comes just after the code word ending at `start`, if one does (`numbers`: one written
    in digits alone too)."""
    after = _AFTER_CODE_WORD.match(low, start)
    if after is None or after.end() >= len(plain):
        return None
    begin = after.end()
    if not _CODE_START.match(plain, begin):  # a word in small letters, a mask: no code
        return None
    if numbers and _DIGIT_CODE.match(plain, begin):
        dotted = _DOTTED_CODE.match(plain, begin) if "." in plain[begin : begin + 12] else None
        if dotted and 4 <= sum(ch.isdigit() for ch in dotted.group()) <= 8:
            return dotted.span()
        run = _CODE_RUN.match(plain, begin)
        spans = _code_spans(plain, run) if run else []
        # A year alone is a year here ("Advent of Code 2023"): a code message, where it is a code, is read apart.
        if spans and spans[0][0] == begin and not _is_year(plain[spans[0][0] : spans[0][1]]):
            return spans[0]
    letters = _LETTER_CODE.match(plain, begin)
    if letters and _letter_code(letters.group()):
        return letters.span()
    return None


def _spelled_code(low: str, start: int) -> tuple[int, int] | None:
    """A code spelled out in words, four to eight digits, after the code word ending at `start`; unless it
    comes just after the word, not a count (one two three four) nor one word said again (null, null...)."""
    lead = _SPELLED_LEAD.match(low, start)
    if lead is None:
        return None
    run = _SPELLED_RUN.match(low, lead.end())
    if run is None:
        return None
    digits = [_DIGIT_WORDS[word] for word in _SPELLED_SPLIT.split(run.group()) if word]
    if not 4 <= len(digits) <= 8:
        return None
    steps = {int(b) - int(a) for a, b in zip(digits, digits[1:], strict=False)}
    if len(steps) == 1 and steps <= {-1, 0, 1}:
        just_after = _AFTER_CODE_WORD.match(low, start)
        if just_after is None or just_after.end() != run.start():
            return None
    return run.span()


def _named_spans(plain: str, low: str, numbers: bool = True) -> list[tuple[int, int]]:
    """Where the codes named by their words are, in a plain copy and its lower case (`numbers`: those
    written in digits alone too; without them, as in a code message whose numbers are all masked, only
    what follows "code" is read: a code in capitals or spelled out)."""
    spans: list[tuple[int, int]] = []
    for literal, pattern, back in _FOLLOWED_CODE_WORDS if numbers else _FOLLOWED_CODE_WORDS[:1]:
        if literal not in low:
            continue
        for word in pattern.finditer(low):
            # A glance at what follows first: a digit or a capital may open a code, a letter a code spelled
            # out (after "code" only); most code words have neither a code nor a secret's name.
            after = _AFTER_CODE_WORD.match(low, word.end())
            follows = plain[after.end() : after.end() + 1] if after else ""
            # `"code": 4001` in JSON is an error's or a status's number; a one-time code there is a string.
            written = (follows.isdigit() and not _JSON_NUMBER.match(low, word.end())) or "A" <= follows <= "Z"
            spelled = literal == "cod" and follows.isalpha()
            if not (written or spelled) or not _names_a_secret_code(low, word.start() - back):
                continue
            found = _named_code_edit(plain, low, word.end(), numbers) if written else None
            if found is None and spelled:
                found = _spelled_code(low, word.end())
            if found:
                spans.append(found)
    if " is your " in low:
        for index in find_all(low, " is your "):
            if _IS_YOUR_CODE.match(low, index):
                before = _LETTER_CODE_BEFORE.search(plain, max(0, index - 44), index)
                if before and _letter_code(before.group()):
                    spans.append(before.span())
    return spans


def _named_codes_once(text: str, other_digits: bool) -> str:
    plain = plain_copy(text, other_digits)
    spans = _named_spans(plain, lower_same_length(plain))
    return apply_edits(text, [(start, end, CODE) for start, end in spans]) if spans else text


def mask_named_codes(text: str, other_digits: bool = False) -> str:
    """`text` with the codes its words name masked (see above): for a text that `may_name_a_code`, code
    message or not. `other_digits`: the text may hold digits of other scripts, read as ASCII ones.

    Whatever was masked, the masks are looked for again until nothing changes (twice in all, almost
    always), as a second pass would: one mask must not bring another code within reach of its word.
    """
    for _ in range(8):
        masked = _named_codes_once(text, other_digits)
        if masked is text:
            break
        text = masked
    return text
