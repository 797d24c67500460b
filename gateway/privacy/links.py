"""Links that sign someone in or carry a secret, masked whole.

What was chosen: a link is masked when its path or query (not its host) speaks of signing in, resetting,
confirming, activating..., when a query parameter is named like a secret (token, key, code, sig,
session...), or when a part looks drawn at random (20+ characters mixing both cases and digits; lowercase
hex such as commit hashes, and UUIDs, do not count). With or without a scheme, in any case.

In a message giving a one-time code, every link is masked, whatever it looks like (`mask_links(text,
every=True)`): its help, tracker and "not you?" links are how such mail signs in or points to the
account, and a tracker may carry the code in its path. A link there is one with a scheme, or a host
followed by a path or query; a bare host (`example.com`) and a mail address are no links and stay.
"""

from __future__ import annotations

import re

from gateway.privacy.text import find_all, lower_same_length

SIGN_IN_LINK = "[sign-in link]"
TOKEN_LINK = "[link with a token]"
LINK = "[link]"

_URL_TAIL = re.compile("[^\\s<>\"'`\\[\\]{}|\\\\^]*")
# In a code message, where the other masks have already run: a link's tail runs on through the masks
# they left inside it (a password, a number), so that the link goes whole.
_URL_TAIL_THROUGH_MASKS = re.compile(  # written as runs of plain characters between masks: fast in `re`
    "[^\\s<>\"'`\\[\\]{}|\\\\^]*(?:\\[(?:secret(?:: [A-Za-z ]{1,24})?|IBAN …[0-9A-Z]{4}|card …[0-9]{4}"
    "|NIR …[0-9A-Z]{4}|code)\\][^\\s<>\"'`\\[\\]{}|\\\\^]*)*"
)
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


def _looks_random(value: str) -> bool:
    """Whether a part of a link looks drawn at random: letters of both cases and digits, mixed."""
    digits = sum(ch.isdigit() for ch in value)
    return digits >= 2 and any(ch.isupper() for ch in value) and any(ch.islower() for ch in value)


def link_kind(url: str) -> str | None:
    """What to show instead of `url`, or None to keep it."""
    low = lower_same_length(url)
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


def mask_links(text: str, every: bool = False) -> str:
    """`text` with each link that signs in or carries a secret replaced by what it is (`every`: each
    other link too, by `[link]`)."""
    anchors = [(index, True) for index in find_all(text, "://")] if "://" in text else []
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
        tail = _URL_TAIL_THROUGH_MASKS if every else _URL_TAIL
        end = tail.match(text, anchor).end()  # type: ignore[union-attr]  # matches the empty string
        while end > anchor and text[end - 1] in _TRAILING:
            end -= 1
        covered = end
        kind = link_kind(text[start:end]) or (LINK if every and end > anchor + 3 else None)
        if kind:
            pieces += [text[done:start], kind]
            done = end
    return "".join(pieces) + text[done:] if pieces else text
