"""Account numbers masked to their last four, on top of the core's masks.

The core's masks (`gateway.mask`) hide what checks out as an IBAN (mod 97) or a payment card (Luhn). A bank
account's number written in an account's name (`Assets:Bank:Checking-00123456789`) or in metadata (`number:
"0012 3456 789"`) checks out as neither, so here every run of six digits or more (spaces, dots or dashes between
them allowed) in an account's name or a metadata value becomes `[account …6789]`, after the core's masks. A date
(`2026-12-01`) is not a number to hide. The narration and the payee get the core's masks only: amounts and
invoice numbers written there stay readable.
"""

from __future__ import annotations

import functools
import re

from gateway import mask

_RUN = re.compile(r"(?<![\w…])\d(?:[ .\-]?\d){5,}(?![\w])")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _hide(match: re.Match[str]) -> str:
    written = match.group(0)
    if _DATE.match(written):
        return written
    digits = re.sub(r"\D", "", written)
    return f"[account …{digits[-4:]}]"


@functools.lru_cache(maxsize=65536)
def masked_number(text: str) -> str:
    """The core's masks, then every long run of digits but a date kept to its last four."""
    return _RUN.sub(_hide, mask(text))


def masked_account(name: str) -> str:
    """An account's name with any number in it kept to its last four (each part of the name on its own)."""
    return ":".join(masked_number(part) for part in name.split(":"))
