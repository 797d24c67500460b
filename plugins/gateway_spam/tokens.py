"""A message's tokens: the shared `spamfilter.tokens` (importable without the gateway, for the lean classifier)."""

from spamfilter.tokens import (
    ADDRESS_HEADERS,
    LEAKING,
    MAX_NESTING,
    MAX_PARTS,
    MAX_TEXT,
    Unreadable,
    address_tokens,
    header_text,
    html_text,
    parse,
    stripped,
    texts,
    tokens,
    tokens_of,
    url_tokens,
    words,
)

__all__ = ["ADDRESS_HEADERS", "LEAKING", "MAX_NESTING", "MAX_PARTS", "MAX_TEXT", "Unreadable", "address_tokens",
           "header_text", "html_text", "parse", "stripped", "texts", "tokens", "tokens_of", "url_tokens", "words"]
