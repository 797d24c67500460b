"""Masks for what others wrote: one-time codes, sign-in links, bank and card numbers, keys and tokens.

`mask(text)` takes one unit of someone else's text (a mail body, a transcript message, a window title).
`mask_secrets(text)` is its context-free part (IBANs, cards, French NIRs, keys, tokens, private keys): the
core runs it on every answer, so it leaves ordinary text untouched and costs a few microseconds on it.

What was chosen where the contract is silent:

- A *code message* names a code: verification code, one-time code or password, OTP, 2FA, passcode, "is
  your ... code", "your PIN", "use 482913 to sign in", "votre code", "Bestätigungscode", "tu código"...
  In it every number of 4 to 8 digits is a code, however written: "482913", "482 913", "482-913",
  "48 29 13", digit by digit with spaces of any width (zero-width ones too), one digit per line or per table
  cell (line breaks, "|", "[ ]", box lines, "> " quote marks between). Digits joined by more than a space
  or a dash count together up to 8. A run of more than 8 digits is a phone or an order number and stays,
  unless one of its groups has 6 to 8 digits (a code written before another number). Never a code: a
  number glued to another by ":", "/", "." or "," (a time, a date, an amount, a version: so "482.913" is
  read as an amount), a year 1900-2099 after a month name or ©, an ISO or day-month-year date with
  dashes, a range of years, a US number after "(555) ". An order number of 4 to 8 digits in a code
  message is masked too: one mask too many rather than a leak.
- A message giving a password says "temporary password" or its kin (French, German, Spanish, Italian),
  or "password is / password: / mot de passe : / Passwort lautet" followed by something that looks like a
  password (a digit, a symbol or mixed case), or holds a line that is only "Password: <value>". Not
  "Forgot your password?", not "your password is about to expire"; a one-time password is a code.
- A link is masked when its path or query (not its host) speaks of signing in, resetting, confirming,
  activating..., when a query parameter is named like a secret (token, key, code, sig, session...), or
  when a part looks drawn at random (20+ characters mixing both cases and digits; lowercase hex such as
  commit hashes, and UUIDs, do not count). With or without a scheme, in any case.
- IBANs: upper case, spaces of any width or none, the length of the country's registry entry (any other
  country: the number as written, 15 to 34 characters), then ISO 7064 mod 97. Cards: spaces or dashes in
  a card's layout (4 4 4 4..., 4 6 5, 4 6 4, 4 3 3 3, or none), a known issuer's prefix with one of its
  lengths, Luhn; 14 digits only as Diners' 4-6-4, since a SIRET has 14 Luhn-valid digits too; when a
  longer card also checks out (a security number after it), the longer is masked. NIRs: spaces of any
  width or none, only between its fields (1 85 05 78 006 084 36), sex 1, 2, 3, 4, 7 or 8, the key.
  A number glued to letters or digits is part of something longer and stays; a mask's bracket counts as
  such glue, so that masking twice finds nothing new.
- `mask_secrets` masks `password=...` unless the value is a plain name, a call or an index
  (`password=password`, `os.environ[...]` in code stay), a quoted value unless empty or a placeholder
  (`$PW`, `{{pw}}`, `<pw>`, `***`), `password: x` only as a whole lowercase line (a setting, not prose);
  `api_key`, `client_secret`, `*_token` and the like only when the value looks like a key. A secret query
  parameter (`access_token=`, `sig=`...) keeps its name and loses its value.
- Only ASCII digits are read as digits.
"""

from __future__ import annotations

import re

__all__ = ["mask", "mask_secrets"]

CODE = "[code]"
SIGN_IN_LINK = "[sign-in link]"
TOKEN_LINK = "[link with a token]"
PASSWORD_MESSAGE = "[a message giving a password, kept from agents]"

_MASK_PREFIXES = ("[IBAN …", "[card …", "[NIR …")

# Numbers and codes are looked for in a plain copy of the text, each character in its place: spaces of any
# width (the zero-width ones HTML mail leaves between characters too) become " ", dashes "-", the marks
# of a table turned to text "|". One pattern holds the wide characters; the others stay ASCII, quick to
# compile and to run.
_WIDE_SPACES = "\u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200E))) + "\u202f\u205f\u3000\u2060\ufeff"
_WIDE_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_PLAIN_CHARS = {**dict.fromkeys(_WIDE_SPACES, " "), **dict.fromkeys(_WIDE_DASHES, "-")}
_NOT_PLAIN = re.compile(f"[{_WIDE_SPACES}{_WIDE_DASHES}\u2500-\u257f\u00b7\u2022]")


def _plain(text: str) -> str:
    if text.isascii():
        return text
    return _NOT_PLAIN.sub(lambda match: _PLAIN_CHARS.get(match.group(), "|"), text)


# A glance at the UTF-8 bytes: digits become "0", capitals "A", spaces, dashes and every non-ASCII byte
# (Unicode spaces among them) vanish, the rest becomes ".". A card or a NIR then shows as 13 "0" in a row,
# a Corsican NIR as "A" and 8 "0", an IBAN as "AA00": without them, no number needs its check digits.
_SHAPE = bytes(48 if 48 <= byte <= 57 else 65 if 65 <= byte <= 90 else 46 for byte in range(256))
_SHAPE_DROP = b" \t-" + bytes(range(128, 256))


_IBAN_SHAPE = re.compile(rb"AA00")


def _may_hold_a_long_number(shape: bytes) -> bool:
    return b"0000000000000" in shape or b"A00000000" in shape or _IBAN_SHAPE.search(shape) is not None


def _lower_same_length(text: str) -> str:
    """`text` in lower case, each character kept in its place (a few lower into two characters)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)


def _find_all(haystack: str, needle: str) -> list[int]:
    found = []
    index = haystack.find(needle)
    while index >= 0:
        found.append(index)
        index = haystack.find(needle, index + 1)
    return found


def _looks_random(value: str) -> bool:
    """Whether a part of a link looks drawn at random: letters of both cases and digits, mixed."""
    digits = sum(ch.isdigit() for ch in value)
    return digits >= 2 and any(ch.isupper() for ch in value) and any(ch.islower() for ch in value)


def _looks_like_a_key(value: str) -> bool:
    """Whether the value given to a name such as `api_key` is a key rather than a word or a name."""
    if len(value) < 12 or any(ch.isspace() for ch in value):
        return False
    has_digit = any(ch.isdigit() for ch in value)
    return (has_digit and any(ch.isalpha() for ch in value)) or len(value) >= 30


# --- keys and tokens -----------------------------------------------------------------------------------
# Most patterns open on a literal, which `re` searches for fast; the boundary is checked just after it.
# A mask's bracket counts as a letter at every boundary: a number glued to a code stays glued once the code
# reads "[code]", so that masking again finds nothing new.

_GITHUB = re.compile(
    r"g(?<![A-Za-z0-9_\]]g)(?:h[pousr]_[A-Za-z0-9]{20,255}|ithub_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_\[])"
)
_STRIPE = re.compile(r"(?<![A-Za-z0-9_\]])[sr]k_(?:live|test)_[0-9A-Za-z]{16,}")
_ANTHROPIC = re.compile(r"sk-(?<![A-Za-z0-9_\]-]sk-)ant-[A-Za-z0-9_-]{20,}")
_OPENAI = re.compile(
    r"sk-(?<![A-Za-z0-9_\]-]sk-)(?:proj-|svcacct-|admin-)?(?=[A-Za-z_-]{0,256}[0-9])[A-Za-z0-9_-]{20,}"
)
_SLACK = re.compile(r"x(?<![A-Za-z0-9_\]-]x)(?:ox[abprse]-[0-9A-Za-z-]{10,}|app-[0-9]-[0-9A-Za-z-]{10,})")
_AWS_KEY = re.compile(r"A(?<![A-Za-z0-9\]]A)(?:KIA|SIA)[A-Z0-9]{16}(?![A-Za-z0-9\[])")
_GOOGLE = re.compile(r"A(?<![A-Za-z0-9_\]-]A)Iza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_\[-])")
_JWT = re.compile(r"eyJ(?<![A-Za-z0-9_\]-]eyJ)[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
_PRIVATE_KEY = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.DOTALL,
)
# A ':' after a quote (JSON) or after a name that may hold a secret (YAML, headers); the class first
# turns most colons away at once.
_COLON_HINT = re.compile(
    r":(?<=[\"'dDyYnNtT]:)(?:(?<=[\"']:)|(?<=ssword:)|(?<=SSWORD:)|(?<=sswd:)|(?<=uthorization:)"
    r"|(?<=UTHORIZATION:)|(?<=[kK]ey:)|(?<=KEY:)|(?<=[tT]oken:)|(?<=TOKEN:)|(?<=[sS]ecret:)|(?<=SECRET:))"
)
_BEARER_HINT = re.compile(r"earer(?<=[Bb]earer)")
_DASH_TOKEN_HINT = re.compile(r"-(?:(?<=sk-)|(?<=xox[abprse]-)|(?<=xapp-)|----BEGIN)")
_A_TOKEN_HINT = re.compile(r"A(?:KIA|SIA|Iza)")
_JWT_HINT = re.compile(r"J(?<=eyJ)")

_AUTH_HEADER = re.compile(
    r"(authorization[\"']?\s*[:=]\s*[\"']?(bearer|basic|token|bot)\s+)(?![\[$<{])[A-Za-z0-9._~+/=-]{8,}",
    re.IGNORECASE,
)
_BEARER = re.compile(r"(bearer\s+)(?![\[$<{])[A-Za-z0-9._~+/-]{20,}=*", re.IGNORECASE)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")
_ASSIGNMENT_WORDS = ("pass", "pwd", "secret", "key", "token", "sig")
_ASSIGNMENT_TAIL = re.compile(r"[a-z0-9_.-]{0,24}[\"']?[ \t]*[:=]")
_ASSIGNMENT = re.compile(
    r"""
    (?P<name>["']?(?:[a-z0-9]+[_.-])*
        (?:(?P<pw>password|passwd|passphrase|pwd)
          |secret|secret[_-]?key|client[_-]?secret|api[_-]?key|apikey|access[_-]?key
          |auth[_-]?token|access[_-]?token|api[_-]?token|refresh[_-]?token)["']?)
    (?P<op>[ \t]*[:=][ \t]*)
    (?:(?P<q>["'])(?P<quoted>[^"'\n]{0,1024})(?P=q)|(?P<bare>[^\s"',;&(){}\[\]]{0,1024}[^\s"',;&(){}\[\].]))
    """,
    re.VERBOSE | re.IGNORECASE,
)
_QUERY_SECRET = re.compile(
    r"((?:[a-z0-9]+[_.-])*(?:access_token|refresh_token|id_token|auth_token|client_secret|api_key|apikey|token"
    r"|signature|sig|password|passwd|pwd|security-token)=)[^&#\s\"'<>\[\]]{8,}",
    re.IGNORECASE,
)
_PLAIN_NAME = re.compile(r"[A-Za-z_]+(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_PLACEHOLDER_START = ("[", "$", "%", "{", "<", "(", "`", "*")
_NOT_VALUES = frozenset({"none", "null", "nil", "true", "false", "undefined", "..."})


def _assignment(match: re.Match[str]) -> str | None:
    """The masked form of `name = value`, or None when the value is no secret."""
    quoted, bare = match.group("quoted"), match.group("bare")
    value = quoted if quoted is not None else bare
    if not value or value.startswith(_PLACEHOLDER_START) or value.lower() in _NOT_VALUES:
        return None
    if not value.strip("*x.•"):
        return None
    name = match.group("name").lower()
    if match.group("pw"):
        if bare is not None:
            if _is_code(match, bare):
                return None
            if ":" in match.group("op") and not _is_a_lowercase_setting_line(match):
                return None
        label = "[secret: password]"
    elif not _looks_like_a_key(value) or (bare is not None and _is_code(match, bare)):
        return None
    elif "aws" in name and "secret" in name:
        label = "[secret: AWS secret key]"
    else:
        label = "[secret: token]" if "token" in name else "[secret: key]"
    quote = match.group("q") or ""
    return f"{match.group('name')}{match.group('op')}{quote}{label}{quote}"


def _is_code(match: re.Match[str], bare: str) -> bool:
    """A plain name, an attribute, a call or an index (`password=password`, `os.environ[...]`): code."""
    after = match.string[match.end() : match.end() + 1]
    return bool(_PLAIN_NAME.fullmatch(bare)) or after in ("(", "[")


def _is_a_lowercase_setting_line(match: re.Match[str]) -> bool:
    """`password: hunter2` is a setting only as a whole line with a lowercase key; in prose it is not."""
    text = match.string
    name_start = match.start("name")
    line_start = text.rfind("\n", max(0, name_start - 64), name_start) + 1 or max(0, name_start - 64)
    line_end = text.find("\n", match.end(), match.end() + 64)
    line_end = min(len(text), match.end() + 64) if line_end < 0 else line_end
    return (
        not text[line_start:name_start].strip(" \t-")
        and not text[match.end() : line_end].strip()
        and match.group("name").islower()
    )


def _name_start(text: str, low: str, index: int) -> int:
    start = index
    while start > 0 and index - start < 64 and low[start - 1] in _NAME_CHARS:
        start -= 1
    if start > 0 and text[start - 1] in "\"'":
        start -= 1
    return start


def _assignment_edits(text: str, low: str) -> list[_Edit]:
    """`name = value` settings and secret query parameters, found from the words their names hold."""
    candidates = sorted(
        (index, index + len(word))
        for word in _ASSIGNMENT_WORDS
        for index in _find_all(low, word)
        if _ASSIGNMENT_TAIL.match(low, index + len(word))
    )
    edits: list[_Edit] = []
    covered = 0
    for index, _ in candidates:
        start = _name_start(text, low, index)
        if start < covered or text[start - 1 : start] == "]":  # glued to a mask, as to a letter
            continue
        if start > 0 and text[start - 1] in "?&;":
            query = _QUERY_SECRET.match(text, start)
            if query:
                edits.append((start, query.end(), query.group(1) + "[secret]"))
                covered = query.end()
                continue
        match = _ASSIGNMENT.match(text, start)
        masked = _assignment(match) if match else None
        if match and masked is not None:
            edits.append((start, match.end(), masked))
            covered = match.end()
    return edits


def _authorization_edits(text: str, low: str) -> list[_Edit]:
    edits = []
    schemes_seen = set()
    for index in _find_all(low, "authorization"):
        match = _AUTH_HEADER.match(text, index)
        if match:
            scheme = match.group(2).lower()
            label = "[secret: bearer token]" if scheme == "bearer" else "[secret: credentials]"
            edits.append((index, match.end(), match.group(1) + label))
            schemes_seen.add(match.start(2))
    for index in _find_all(low, "bearer"):
        if index in schemes_seen or index and (low[index - 1].isalnum() or low[index - 1] == "]"):
            continue
        match = _BEARER.match(text, index)
        if match:
            edits.append((index, match.end(), match.group(1) + "[secret: bearer token]"))
    return edits


_Edit = tuple[int, int, str]  # start, end, what to put there


def _apply(text: str, edits: list[_Edit]) -> str:
    pieces: list[str] = []
    done = 0
    for start, end, new in sorted(edits):
        if start >= done:
            pieces += [text[done:start], new]
            done = end
    return "".join(pieces) + text[done:]


def _mask_keys(text: str) -> str:
    # Single characters first: finding one is a memchr, far cheaper than a search for a longer string.
    if "-" in text and _DASH_TOKEN_HINT.search(text):
        if "-----BEGIN" in text:
            text = _PRIVATE_KEY.sub("[secret: private key]", text)
        text = _ANTHROPIC.sub("[secret: Anthropic key]", text)
        text = _OPENAI.sub("[secret: OpenAI key]", text)
        text = _SLACK.sub("[secret: Slack token]", text)
    if "_" in text:
        text = _GITHUB.sub("[secret: GitHub token]", text)
        if "k_live_" in text or "k_test_" in text:
            text = _STRIPE.sub("[secret: Stripe key]", text)
    if _A_TOKEN_HINT.search(text):
        text = _AWS_KEY.sub("[secret: AWS access key]", text)
        text = _GOOGLE.sub("[secret: Google API key]", text)
    if _JWT_HINT.search(text):
        text = _JWT.sub("[secret: JWT]", text)
    if "=" in text or (":" in text and _COLON_HINT.search(text)):
        # Headers first, then settings found in what they leave: each step sees the masks of the one
        # before, as a second pass would.
        low = _lower_same_length(text)
        if "bearer" in low or "authorization" in low:
            edits = _authorization_edits(text, low)
            if edits:
                text = _apply(text, edits)
                low = _lower_same_length(text)
        edits = _assignment_edits(text, low)
        return _apply(text, edits) if edits else text
    if _BEARER_HINT.search(text):
        edits = _authorization_edits(text, _lower_same_length(text))
        return _apply(text, edits) if edits else text
    return text


# --- IBANs, cards and French NIRs ---------------------------------------------------------------------

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
_NUMBER_CLUSTER = re.compile(r"[0-9](?<![0-9][0-9])(?<![0-9][ -][0-9])(?:[ -]{0,2}+[0-9A-Z]){11,}+")
_IBAN = re.compile(r"[A-Z](?<![A-Za-z0-9\]][A-Z])[A-Z][0-9]{2}(?: {0,2}[0-9A-Z]){11,30}")
_NIR = re.compile(
    r"[1-478](?<![0-9A-Za-z\]][1-478])(?<![0-9\]] [1-478])(?: {0,2}[0-9AB]){14}(?![0-9A-Za-z\[])(?! [0-9\[])"
)
_NIR_LAYOUT = re.compile(r"[0-9]{5}(?:[0-9]{2}|2[AB])[0-9]{8}")
_CARD_RUN = re.compile(r"[0-9](?<![0-9A-Za-z\]][0-9])(?:[ -]{0,2}[0-9]){12,}+(?![A-Za-z\[])")
_DIGIT_GROUP = re.compile(r"[0-9]+")
_DIGIT_SPLIT = re.compile(r"([0-9]+)")
_IBAN_BEFORE = re.compile(r"[A-Z]{2}[0-9]{2} {1,2}$")
_IBAN_GOES_ON = re.compile(r" {0,2}[0-9A-Za-z\[]")


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


def _iban_edits(plain: str) -> list[_Edit]:
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


def _nir_edits(plain: str) -> list[_Edit]:
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


def _card_edits(plain: str) -> list[_Edit]:
    edits = []
    for run in _CARD_RUN.finditer(plain):
        if not _IBAN_BEFORE.search(plain, max(0, run.start() - 8), run.start()):  # else an IBAN that failed
            edits += _cards_in(plain, run)
    return edits


def _cards_in(plain: str, run: re.Match[str]) -> list[_Edit]:
    """Cards inside one run of digit groups: the first group where a card starts, its longest valid end."""
    groups = [group.span() for group in _DIGIT_GROUP.finditer(plain, run.start(), run.end())]
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
            if (len(digits) in lengths or diners_layout) and _card_layout(sizes) and _luhn(digits):
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
    for finder in (_iban_edits, _nir_edits, _card_edits):
        edits = finder(plain)
        if edits:
            region, plain = _apply(region, edits), _apply(plain, edits)
    return region


def _mask_numbers(text: str) -> str:
    """IBANs, NIRs and cards, looked for only around long numbers (with a margin for the lookarounds)."""
    plain = _plain(text)
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


def _mask_secrets(text: str, long_number: bool) -> str:
    text = _mask_keys(text)
    return _mask_numbers(text) if long_number else text


def mask_secrets(text: str) -> str:
    """`text` with IBANs, payment cards, French NIRs, API keys, tokens and private keys masked.

    Context-free, so safe on any text: a number is masked only when its check digits hold.
    """
    if not text:
        return text
    shape = text.encode("utf-8", "surrogatepass").translate(_SHAPE, _SHAPE_DROP)
    return _mask_secrets(text, _may_hold_a_long_number(shape))


# --- links --------------------------------------------------------------------------------------------

_URL_TAIL = re.compile("[^\\s<>\"'`\\[\\]{}|\\\\^]*")
_BARE_LINK_HINT = re.compile(r"\.[A-Za-z]{2,24}(?::[0-9]{1,5})?[/?]")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
_URL_HEAD = re.compile(r"(?:[a-z][a-z0-9+.-]*://)?[^/?#]*")
# Grouped by first letter, each branch opening on a literal: `re` then skips most positions at once.
_SIGN_IN_WORDS = re.compile(
    r"p(?:ass(?:word|wort|wd))"
    r"|l(?:og(?:in|on)|(?<![a-z]l)og[-_](?:in|on)(?![a-z]))"
    r"|s(?:(?<![a-z]s)ign[-_]?(?:in|on)(?![a-z])|(?<!des)(?<!ass)ignin|(?<![a-z]s)so(?![a-z]))"
    r"|a(?:uthenticat|uthori[sz]|(?<![a-z]a)uth2?(?![a-z])|ctivat)"
    r"|o(?:(?<![a-z]o)auth2?(?![a-z])|ne-?time|(?<![a-z]o)tp(?![a-z]))"
    r"|v(?:erif|alidat)|c(?:onfirm|onnexion|allback)|m(?:agic|fa|ot-?de-?passe)"
    r"|t(?<![a-z]t)otp(?![a-z])|h(?<![a-z]h)otp(?![a-z])|2fa"
    r"|r(?:(?<!pr)eset|(?:e|é|%c3%a9)initiali[sz]|ecover)|i(?:nvit(?:e|ation))|u(?:nlock)"
)
_SECRET_PARAM = re.compile(
    r"[?&;#](?:[a-z0-9]+[_.-])*(?:token|key|code|sig|signature|secret|password|passwd|pwd|pass|otp|ticket"
    r"|nonce|session|sessionid|sid|jwt|auth|credential|hash|hmac)=[^&#]"
)
_RANDOM_CHUNK = re.compile(r"[A-Za-z0-9_~-]{20,}")
_TRAILING = ".,;:!?)'\"»"


def _link_kind(url: str) -> str | None:
    """What to show instead of `url`, or None to keep it."""
    low = _lower_same_length(url)
    head = _URL_HEAD.match(low)
    rest_start = head.end() if head else 0
    rest = low[rest_start:]
    if not rest.strip("/"):
        return None
    if _SIGN_IN_WORDS.search(rest):
        return SIGN_IN_LINK
    if "token" in rest or _SECRET_PARAM.search(rest):
        return TOKEN_LINK
    if any(_looks_random(chunk) for chunk in _RANDOM_CHUNK.findall(url, rest_start)):
        return TOKEN_LINK
    return None


def _link_start(text: str, anchor: int, after_scheme: bool) -> int | None:
    """Where the link around `anchor` ("://" or the dot before a top-level domain) begins."""
    start = anchor
    allowed = _SCHEME_CHARS if after_scheme else _HOST_CHARS
    while start > 0 and text[start - 1] in allowed:
        start -= 1
    if after_scheme:
        while start < anchor and not text[start].isalpha():
            start += 1
        return start if start < anchor else None
    while start < anchor and text[start] in ".-":
        start += 1
    if start == anchor or text[max(0, start - 3) : start] == "://" or text[start - 1 : start] == "@":
        return None
    return start


def _mask_links(text: str) -> str:
    anchors = [(index, True) for index in _find_all(text, "://")] if "://" in text else []
    anchors += [(hint.start(), False) for hint in _BARE_LINK_HINT.finditer(text)]
    if not anchors:
        return text
    pieces: list[str] = []
    done = covered = 0
    for anchor, after_scheme in sorted(anchors):
        if anchor < covered:
            continue
        start = _link_start(text, anchor, after_scheme)
        if start is None or start < covered:
            continue
        end = _URL_TAIL.match(text, anchor).end()  # type: ignore[union-attr]  # matches the empty string
        while end > anchor and text[end - 1] in _TRAILING:
            end -= 1
        covered = end
        kind = _link_kind(text[start:end])
        if kind:
            pieces += [text[done:start], kind]
            done = end
    return "".join(pieces) + text[done:] if pieces else text


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


def _gives_a_password(text: str, low_bytes: bytes) -> bool:
    if not any(hint.search(low_bytes) for hint in _PASSWORD_HINTS):
        return False
    low = _lower_same_length(text)
    for word in _PASSWORD_WORDS:
        for index in _find_all(low, word):
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
_DIGIT_NEAR = r"(?=(?:\s+(?:is|es|est|ist|lautet|è))?[\s:>|\[*\"'«-]{0,8}[0-9])"
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
        r"|(?<![a-z])(?:(?:enter|use|type) (?:the |this |your )?code|votre code|ton code|ihr code|dein code"
        r"|tu c(?:ó|Ó|o)digo|su c(?:ó|Ó|o)digo|tuo codice)\b"
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
        ("ódigo", _CODE_PHRASES, 10, 40),
        ("otp", r"(?<![a-z])[th]?otp(?![a-z])", 1, 0),
        ("fa(?:(?<=[2m]fa)|ctor)", r"(?<![a-z0-9])[2m]fa(?![a-z])|two[ -]factor", 4, 6),
        ("step", r"(?<![a-z])(?:two|2)[ -]step", 4, 0),
        ("to (?:sign|log|verif|confirm)", r"(?<![a-z])(?:use|enter|type) [0-9][0-9 -]{2,10}[0-9] to (?:sign|log|verify|confirm)", 20, 8),
        ("pass", r"one[ -]?time[ -]pass(?:word|code)|mot de passe (?:(?:à|À|a) usage unique|unique)|einmal-?passwort", 12, 24),
        ("pin", r"(?<![a-z])(?:(?:your|the|this|enter|use|type) pin(?![a-z])|pin(?::| is))" + _DIGIT_NEAR, 6, 30),
    )
)  # fmt: skip
_JOIN_CHARS = " \\t\\r\\n|>\\[\\]-"  # in the plain copy
# A run of digit groups joined by spaces, dashes, line breaks or table marks; a lone group needs 4 digits.
# (Written to open on [0-9] outside any alternation, so that `re` jumps from digit to digit.)
_CODE_RUN = re.compile(f"[0-9]++(?:(?:[{_JOIN_CHARS}]{{1,16}}+[0-9]++)+|(?<=[0-9]{{4}}))")
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


def _names_a_code(low_bytes: bytes) -> bool:
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
    dashed = all("-" in join for join in joins)
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
    return text[max(0, start - 7) : start].endswith(_MASK_PREFIXES)


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


def _mask_codes(text: str) -> str:
    plain = _plain(text)
    pieces: list[str] = []
    done = 0
    for run in _CODE_RUN.finditer(plain):
        for start, end in _code_spans(plain, run):
            pieces += [text[done:start], CODE]
            done = end
    return "".join(pieces) + text[done:] if pieces else text


# --- the whole mask -----------------------------------------------------------------------------------


def mask(text: str) -> str:
    """Someone else's `text` with its codes, sign-in links, account and card numbers and secrets masked.

    A message that gives a password comes back as one sentence saying so, none of its words kept.
    """
    if not text:
        return text
    data = text.encode("utf-8", "surrogatepass")
    low_bytes = data.lower()
    if _gives_a_password(text, low_bytes):
        return PASSWORD_MESSAGE
    shape = data.translate(_SHAPE, _SHAPE_DROP)
    masked = _mask_secrets(_mask_links(text), _may_hold_a_long_number(shape))
    if shape.count(b"0") < 4:  # no code has fewer digits
        return masked
    # Whether it is a code message is read once links and numbers are masked, as a second pass would read
    # it: a mask must not complete a phrase ("your [sign-in link] code is") the first pass did not see.
    if masked is not text:
        low_bytes = masked.encode("utf-8", "surrogatepass").lower()
    return _mask_codes(masked) if _names_a_code(low_bytes) else masked
