"""Masks for what others wrote: one-time codes, sign-in links, bank and card numbers, keys and tokens.

`mask(text)` takes one unit of someone else's text (a mail body, a transcript message, a window title).
`mask_secrets(text)` is its context-free part (IBANs, cards, French NIRs, keys, tokens, private keys): the
core runs it on every answer, so it leaves ordinary text untouched and costs a few microseconds on it.

Each form has its module, whose docstring says what was chosen where the contract is silent: `codes`
(messages giving a password, one-time codes in code messages), `links` (sign-in links, secret query
values), `keys` (API keys, tokens, private keys, secret settings), `numbers` (IBANs, cards, NIRs); `text`
holds what they share. This module composes them. In all of them, only ASCII digits are read as digits.
"""

from __future__ import annotations

import re

# The labels are re-exported (`X as X`): callers import them from here.
from gateway.privacy.codes import CODE as CODE
from gateway.privacy.codes import PASSWORD_MESSAGE, gives_a_password, mask_codes, names_a_code
from gateway.privacy.keys import mask_keys
from gateway.privacy.links import SIGN_IN_LINK as SIGN_IN_LINK
from gateway.privacy.links import TOKEN_LINK as TOKEN_LINK
from gateway.privacy.links import mask_links
from gateway.privacy.numbers import mask_numbers

__all__ = ["MASKS_VERSION", "clip", "mask", "mask_secrets"]

# Raised whenever what the masks hide changes. A plugin that indexes masked text records the version it
# indexed with, and rebuilds that index when this differs (an index must hide exactly what answers hide).
MASKS_VERSION = 1

# A glance at the UTF-8 bytes: digits become "0", capitals "A", spaces, dashes and every non-ASCII byte
# (Unicode spaces among them) vanish, the rest becomes ".". A card or a NIR then shows as 13 "0" in a row,
# a Corsican NIR as "A" and 8 "0", an IBAN as "AA00": without them, no number needs its check digits.
_SHAPE = bytes(48 if 48 <= byte <= 57 else 65 if 65 <= byte <= 90 else 46 for byte in range(256))
_SHAPE_DROP = b" \t-" + bytes(range(128, 256))


_IBAN_SHAPE = re.compile(rb"AA00")


def _may_hold_a_long_number(shape: bytes) -> bool:
    return b"0000000000000" in shape or b"A00000000" in shape or _IBAN_SHAPE.search(shape) is not None


def _mask_secrets(text: str, long_number: bool) -> str:
    text = mask_keys(text)
    return mask_numbers(text) if long_number else text


def mask_secrets(text: str) -> str:
    """`text` with IBANs, payment cards, French NIRs, API keys, tokens and private keys masked.

    Context-free, so safe on any text: a number is masked only when its check digits hold.
    """
    if not text:
        return text
    shape = text.encode("utf-8", "surrogatepass").translate(_SHAPE, _SHAPE_DROP)
    return _mask_secrets(text, _may_hold_a_long_number(shape))


def mask(text: str) -> str:
    """Someone else's `text` with its codes, sign-in links, account and card numbers and secrets masked.

    A message that gives a password comes back as one sentence saying so, none of its words kept.
    """
    if not text:
        return text
    data = text.encode("utf-8", "surrogatepass")
    low_bytes = data.lower()
    if gives_a_password(text, low_bytes):
        return PASSWORD_MESSAGE
    shape = data.translate(_SHAPE, _SHAPE_DROP)
    masked = _mask_secrets(mask_links(text), _may_hold_a_long_number(shape))
    if shape.count(b"0") < 4:  # no code has fewer digits
        return masked
    # Whether it is a code message is read once links and numbers are masked, as a second pass would read
    # it: a mask must not complete a phrase ("your [sign-in link] code is") the first pass did not see.
    if masked is not text:
        low_bytes = masked.encode("utf-8", "surrogatepass").lower()
    return mask_codes(masked) if names_a_code(low_bytes) else masked


def clip(text: str | None, limit: int | None = None) -> str:
    """Someone else's words masked whole, then put on one line and cut to `limit` characters.

    Masking comes first: a field cut first could end in half a card or account number that no mask
    recognises any more. Every title, snippet or field shown shortened goes through here.
    """
    from gateway.privacy.framing import one_line

    return one_line(mask(text), limit) if text else ""
