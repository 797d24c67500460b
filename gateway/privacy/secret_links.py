"""Links that are secrets in themselves: a password written into a URL, a webhook's address.

What was chosen: in `scheme://user:password@host` (postgres, mysql, redis, amqp, mongodb+srv, https, any
scheme), the password is masked and the user kept: a user name alone opens nothing, and it tells the
reader which account a connection string uses (as `user=jane` in a query is kept). The host, port and
path are kept too. A user part without a password that looks like a key (`https://<token>@host`, how
tokens are handed to git) is masked whole. A placeholder (`$PW`, `${PW}`, `<password>`, `%(pw)s`, `***`,
the bare word `password`) stays. Slack and Discord webhooks are masked whole, scheme to last character:
the address is the secret (whoever holds it posts as the app).
"""

from __future__ import annotations

import re

from gateway.privacy.text import LazyPattern, find_all

URL_PASSWORD = "[secret: password]"

_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
# After "://": a user, ":", a password (no space, slash or bracket; "@" allowed, as the last "@" before
# the host ends it, as URL parsers read it), "@" and a host with no "@" left in it.
_CREDENTIALS = LazyPattern(
    r"([^\s:/?#@\[\]<>\"'`]{0,128}):([^\s/?#\[\]<>\"'`]{1,256}?)@(?=[^\s@/?#\[\]<>\"'`]*(?:[/?#\s\[\]<>\"'`]|$))"
)
_TOKEN_USER = LazyPattern(r"([A-Za-z0-9_~.-]{20,256})@(?=[A-Za-z0-9.-])")
_PLACEHOLDER_START = ("$", "{", "<", "%(", "%s", "[", "(")
_PLACEHOLDER_WORDS = frozenset({"password", "passwd", "pass", "pwd", "pw", "secret", "xxx", "..."})

_SLACK_WEBHOOK = LazyPattern(
    r"(?:https?://)?(?<![A-Za-z0-9.-])hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{8,}",
    re.IGNORECASE,
)
_DISCORD_WEBHOOK = LazyPattern(
    r"(?:https?://)?(?<![A-Za-z0-9.-])(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api(?:/v[0-9]{1,2})?"
    r"/webhooks/[0-9]{5,}/[A-Za-z0-9_-]{20,}",
    re.IGNORECASE,
)


def _is_placeholder(value: str) -> bool:
    return value.startswith(_PLACEHOLDER_START) or value.lower() in _PLACEHOLDER_WORDS or not value.strip("*x•.")


def _looks_like_a_token(value: str) -> bool:
    return any(ch.isdigit() for ch in value) and any(ch.isalpha() for ch in value)


def _credential_edits(text: str) -> list[tuple[int, int, str]]:
    edits = []
    for anchor in find_all(text, "://"):
        if anchor == 0 or text[anchor - 1] not in _SCHEME_CHARS:
            continue
        start = anchor + 3
        found = _CREDENTIALS.match(text, start)
        if found:
            if not _is_placeholder(found.group(2)):
                edits.append((found.start(2), found.end(2), URL_PASSWORD))
            continue
        user = _TOKEN_USER.match(text, start)
        if user and _looks_like_a_token(user.group(1)):
            edits.append((user.start(1), user.end(1), "[secret: token]"))
    return edits


def mask_secret_links(text: str) -> str:
    """`text` with passwords written in URLs and webhook addresses masked."""
    if "/" not in text:
        return text
    if "@" in text and "://" in text:  # "@" first: a single character is found fastest
        edits = _credential_edits(text)
        if edits:
            pieces, done = [], 0
            for start, end, new in edits:
                pieces += [text[done:start], new]
                done = end
            text = "".join(pieces) + text[done:]
    if "hooks" in text:  # hooks.slack.com, discord.com/api/webhooks (their tokens are never in capitals)
        text = _SLACK_WEBHOOK.sub("[secret: Slack webhook]", text)
        text = _DISCORD_WEBHOOK.sub("[secret: Discord webhook]", text)
    return text
