"""Masks for what others wrote: one-time codes, sign-in links, bank and card numbers, keys and tokens.

`mask(text)` takes one unit of someone else's text (a mail body, a transcript message, a window title).
`mask_secrets(text)` is its context-free part (IBANs, cards, French NIRs, keys, tokens, private keys,
passwords in URLs, webhooks): the core runs it on every answer, so it leaves ordinary text untouched and
costs a few microseconds on it.

Each form has its module, whose docstring says what was chosen where the contract is silent: `codes`
(messages giving a password, one-time codes in code messages), `links` (sign-in links, secret query
values, every link of a code message), `secret_links` (credentials in URLs, webhooks), `keys` (API keys,
tokens, private keys, secret settings), `numbers` (IBANs, cards, NIRs); `text` holds what they share.
This module composes them. Digits of every script and form count as digits (`٤٨٢٩١٣`, `４８２９１３`,
`⁴⁸²⁹¹³`, `④⑧②⑨①③` are a code in a code message, a full-width card is a card): they are read in a copy
where each is its ASCII digit, and the masks land on the original text. That copy is made only for a text
whose UTF-8 holds the first bytes of such a digit: ASCII text pays nothing for it, accents, emoji, CJK and
most letters of other scripts a glance (`text.may_hold_other_digits`). Codes named by their word outside
code messages, and codes spelled out in words, are `codes.mask_named_codes`.
"""

from __future__ import annotations

from collections.abc import Callable

# The labels are re-exported (`X as X`): callers import them from here.
from types import ModuleType
from typing import Any

from gateway.privacy.keys import mask_keys
from gateway.privacy.numbers import mask_numbers
from gateway.privacy.secret_links import mask_secret_links
from gateway.privacy.text import LazyPattern, ascii_digits, may_hold_other_digits

__all__ = ["MASKS_VERSION", "clip", "mask", "mask_secrets", "mask_typed"]

# Raised whenever what the masks hide changes. A plugin that indexes masked text records the version it
# indexed with, and rebuilds that index when this differs (an index must hide exactly what answers hide).
# 2: passwords in URLs, webhooks, hf_/glpat-/npm_ tokens, AWS secret keys after their labels, IBANs in
# small letters or with dashes, cards with dots or slashes, every script's digits, more code phrases,
# every link of a code message masked, its amounts, times and rooms kept.
# 3: a code after its word outside code messages ("Code 731904", "My code is 482913", "ABX-482"), codes
# spelled out in words, superscript and circled digits, a card or IBAN across a tab or a line break, a bare
# AWS secret key after its label or beside its access key id.
# 4: a code's digits glued to letters mask the whole word; a text whose codes were masked is masked again until
# nothing changes (what the first pass uncovered: digits left standing alone, a placeholder naming the next code).
MASKS_VERSION = 4

# A glance at the UTF-8 bytes: digits become "0", capitals "A", small letters "a", spaces, tabs, line
# breaks, dashes and every non-ASCII byte (Unicode spaces among them) vanish, the rest becomes ".". A card
# or a NIR then shows as 13 "0" in a row (wrapped at a line's end too), a Corsican NIR as "A" and 8 "0",
# an IBAN as "AA00": without them, no number needs its check digits.
_SHAPE = bytes(
    48 if 48 <= byte <= 57 else 65 if 65 <= byte <= 90 else 97 if 97 <= byte <= 122 else 46 for byte in range(256)
)
_SHAPE_DROP = b" \t\r\n-" + bytes(range(128, 256))

# An IBAN in small letters: two letters glued to two digits, then (spaces dropped) mostly digits. Written
# to open on "00", rare in a shape, which the search skips to; "a" is everywhere.
_SMALL_IBAN_SHAPE = LazyPattern(rb"00(?<=[Aa]a00)(?:[Aa]{0,4}0{8}|[Aa]?0{10})")
# A card with dots or slashes ("." in the shape): 4 4 4 4 (or 19 digits), or 4 6 5 and 4 6 4.
_MARKED_CARD_SHAPES = (b"0000.0000.0000.0", b"0000.000000.0000")


_NumberScope = tuple[bool, bool, bool]  # around long runs of digits, IBANs in small letters, marked cards


def _number_scope(shape: bytes) -> _NumberScope | None:
    """Where IBANs, cards and NIRs may be (see `numbers.mask_numbers`), or None: nowhere."""
    # Plain `in` tests, each for a needle the form must hold, which the search skips through the shape to:
    # a text with small numbers only makes three passes, as many as before masks v2.
    if b"00" not in shape:  # each form has two digits side by side
        return None
    eight = b"00000000" in shape  # in a card, a NIR, most IBANs, an IBAN in small letters
    small_ibans = eight and _SMALL_IBAN_SHAPE.search(shape) is not None
    marked_cards = b"0000.0000" in shape and any(marked in shape for marked in _MARKED_CARD_SHAPES)
    around = (eight and (b"0000000000000" in shape or b"A00000000" in shape)) or b"AA00" in shape
    return (around, small_ibans, marked_cards) if around or small_ibans or marked_cards else None


def _glance(text: str, forms: bool = True) -> tuple[str, bytes]:
    """`text` with every script's digits (and, if `forms`, superscript, circled... digits) as ASCII ones
    (`text` itself when it has none), and its UTF-8."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) == len(text) or not may_hold_other_digits(data, forms):
        return text, data
    digits = ascii_digits(text)
    return (text, data) if digits is text else (digits, digits.encode("utf-8", "surrogatepass"))


def _mask_secrets(text: str, numbers: _NumberScope | None, other_digits: bool) -> str:
    text = mask_keys(mask_secret_links(text))
    return mask_numbers(text, *numbers, other_digits=other_digits) if numbers else text


def mask_secrets(text: str) -> str:
    """`text` with IBANs, payment cards, French NIRs, API keys, tokens, private keys, passwords in URLs
    and webhooks masked.

    Context-free, so safe on any text: a number is masked only when its check digits hold. Digits of
    every script count; the forms of digits (superscript, circled) are left to `mask`, which reads them.
    """
    if not text:
        return text
    digits, data = _glance(text, forms=False)
    shape = data.translate(_SHAPE, _SHAPE_DROP)
    return _mask_secrets(text, _number_scope(shape), digits is not text)


def mask(text: str) -> str:
    """Someone else's `text` with its codes, sign-in links, account and card numbers and secrets masked.

    A message that gives a password comes back as one sentence saying so, none of its words kept.
    """
    return _mask(text, 0)


def _mask(text: str, depth: int) -> str:
    if not text:
        return text
    codes, links = _FORMS or _forms()
    digits, data = _glance(text)
    other_digits = digits is not text
    low_bytes = data.lower()
    if codes.gives_a_password(digits, low_bytes):
        return codes.PASSWORD_MESSAGE
    shape = data.translate(_SHAPE, _SHAPE_DROP)
    numbers = _number_scope(shape)
    masked = _mask_secrets(links.mask_links(text), numbers, other_digits)
    # No code message has fewer than 4 digits; a code named by its word may (`ABX-482`, spelled out).
    digit_count = shape.count(b"0")
    if digit_count < 2 and b"cod" not in low_bytes:
        return masked
    # Whether it is a code message is read once links and numbers are masked, as a second pass would read
    # it: a mask must not complete a phrase ("your [sign-in link] code is") the first pass did not see.
    if masked is not text:
        low_bytes = _glance(masked)[1].lower()
    code_message, named = codes.read_code_words(low_bytes, digit_count)
    if code_message:
        # A code message loses every link (with whatever the other masks left in it), then its codes.
        linked = links.mask_links(masked, every=True)
        return _settled(_mask, linked, codes.mask_codes(linked, other_digits, named), depth)
    return _settled(_mask, masked, codes.mask_named_codes(masked, other_digits), depth) if named else masked


def mask_typed(text: str) -> str:
    """What an agent typed (a query, a title, an address) masked as others' words are, and each number
    that may be a code masked as in a code message: a code typed as a search is a code.

    Dates, times, amounts and rooms stay, as they do in a code message; so do numbers of 3 digits or
    fewer, and of more than 8.
    """
    return _mask_typed(text, 0)


def _mask_typed(text: str, depth: int) -> str:
    masked = mask(text)
    if not masked:
        return masked
    codes, _ = _FORMS or _forms()
    digits, data = _glance(masked)
    if data.translate(_SHAPE, _SHAPE_DROP).count(b"0") < 4:  # no code has fewer digits
        return masked
    return _settled(_mask_typed, masked, codes.mask_codes(masked, digits is not masked), depth)


# Masking codes can make a text another pass would mask further: a code masked with the letters glued to it
# ("482913OTPDE75-5121-...") leaves the next word's digits standing alone, where they now read as a card; the
# placeholder's own word ("[code] 8 2 9 1 3") names the digits after it. What a text gives is what masking it again
# would give, so a text whose codes were masked is masked once more, until nothing changes (a few times at most:
# each pass only masks more, and a placeholder stays as it is). A text where no code was masked is given as it is.
SETTLE_PASSES = 3


def _settled(again: Callable[[str, int], str], before: str, masked: str, depth: int) -> str:
    if depth >= SETTLE_PASSES or masked == before:
        return masked
    more = again(masked, depth + 1)
    return masked if more == masked else more


# The code and link forms (most of the masks' patterns) are compiled when mask() first runs, not when the gateway
# starts: mask_secrets, which the core runs on every answer and listing, needs neither.
_FORMS: tuple[ModuleType, ModuleType] | None = None


def _forms() -> tuple[ModuleType, ModuleType]:
    global _FORMS
    from gateway.privacy import codes, links

    _FORMS = (codes, links)
    return _FORMS


_FROM_FORMS = {"CODE": "codes", "PASSWORD_MESSAGE": "codes", "LINK": "links", "SIGN_IN_LINK": "links",
               "TOKEN_LINK": "links"}


def __getattr__(name: str) -> Any:
    """The forms' patterns by their old names here (``masks.CODE``), importing their module on first use."""
    if name in _FROM_FORMS:
        codes, links = _FORMS or _forms()
        return getattr(codes if _FROM_FORMS[name] == "codes" else links, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def clip(text: str | None, limit: int | None = None) -> str:
    """Someone else's words masked whole, then put on one line and cut to `limit` characters.

    Masking comes first: a field cut first could end in half a card or account number that no mask
    recognises any more. Every title, snippet or field shown shortened goes through here.
    """
    from gateway.privacy.framing import one_line

    return one_line(mask(text), limit) if text else ""


def mask_url(url: str) -> str:
    """A URL given as a field of its own (a page visited): its scheme and host kept, and its path, query and
    fragment masked as one label when they hold a secret (as the masks judge a link, or a value already masked
    in it); else the URL as it is. Text that is not a URL with a host is given back for `mask` to judge."""
    from urllib.parse import urlsplit

    links = (_FORMS or _forms())[1]
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.scheme or not parts.netloc:
        return url
    head = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
    rest = url[url.index(parts.netloc) + len(parts.netloc):]
    if not rest.strip("/"):
        return head + rest
    kind = links.link_kind(head + rest)
    if kind is None and "[masked]" not in rest and "[" not in mask(rest):
        return head + rest
    return f"{head}/{kind or links.TOKEN_LINK}"
