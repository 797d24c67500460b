"""The one cursor codec of the core: a position as compact JSON in URL-safe base64, opaque to hosts.

The resource listing's cursor (which source, and that source's own cursor) and the list pages' offsets
(tools, templates, prompts) are both written with it; each caller checks the shape it decoded.
"""

from __future__ import annotations

import base64
import json
from typing import Any


def encode_cursor(position: Any) -> str:
    """`position` (anything JSON holds) as a cursor."""
    raw = json.dumps(position, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> Any:
    """The position a cursor holds; ValueError when it is not one `encode_cursor` made."""
    try:
        return json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, TypeError):  # binascii.Error, JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ValueError("not a cursor this gateway gave") from None
