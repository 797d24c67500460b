"""The tadoru event envelope: checking what recorders give, and making what agents are given safe to show.

A stored event keeps what the recorder wrote (its redactions included); what leaves the plugin has every
string of others' words on one line and masked, URLs without the secrets of their query strings, and
never an event from a private (incognito) window.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from gateway import clip, mask_url, one_line
from gateway_timeline.rows import FORMAT_ACTIVITYWATCH, EventRow
from gateway_timeline.timeexpr import iso_ms

VERSION = 1
TYPE_PATTERN = re.compile(r"^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)*$")
FIELD_LIMIT = 300  # a window title or URL longer than this is cut: it is a label, not a document

# Query-string and fragment keys whose values are credentials or one-time secrets.
_SECRET_KEYS = re.compile(
    r"(token|secret|password|passwd|pwd|auth|session|sid|key|sig|signature|code|otp|nonce|state|ticket|"
    r"credential|saml|jwt|hash|magic|reset|confirm|verify)",
    re.IGNORECASE,
)
PRIVATE_MODES = {"private", "incognito", "inprivate"}

# How browsers title their private windows (checked against the window title, and a page or tab title):
# Firefox and its forks "Page — Mozilla Firefox Private Browsing" (macOS "Page — Private Browsing", before
# 2019 "Page - Mozilla Firefox (Private Browsing)"), Safari "Private Browsing"; Chrome and Chromium
# "Page - Google Chrome (Incognito)", some watchers "Page - Incognito"; Brave "Page - Brave (Private)",
# "Private Window with Tor"; Edge "Page - [InPrivate] - Microsoft Edge", "Page - InPrivate"; and Tor Browser,
# whose every window is private. A normal page whose own title ends so is dropped too: a lost event is
# better than a private one given.
_PRIVATE_TITLE = re.compile(
    r"Private Browsing\)?\s*$"
    r"|\((?:Incognito|Private|InPrivate)\)\s*$"
    r"|\[InPrivate\]"
    r"|(?:^|\s[-—–|]\s*)(?:Incognito|InPrivate)\s*$"
    r"|\bInPrivate\b.*\bEdge\s*$"
    r"|\bPrivate Window with Tor\b"
    r"|[-—–]\s*(?:Tor|Mullvad) Browser\s*$",
    re.IGNORECASE,
)
# Raised whenever the forms change: the next import then forgets the stored events the new forms recognise.
PRIVATE_FORMS_VERSION = 1
# Every form above holds one of these (any case): the store looks titles up by them before the pattern is tried.
PRIVATE_TITLE_WORDS = ("private", "incognito", "tor browser", "mullvad browser")
# Browsers whose windows are all private: Tor Browser, and Mullvad Browser (private browsing by default).
_PRIVATE_APPS = {"torbrowser", "mullvadbrowser"}


class EnvelopeError(ValueError):
    """A recorder's line is not an event we can keep; the message says what is wrong."""


def parse_ts(value: Any) -> int:
    """An envelope `ts` (ISO-8601; a zone is required, Z or offset) as milliseconds since the epoch."""
    if not isinstance(value, str) or not value:
        raise EnvelopeError("ts must be an ISO-8601 time with a zone, such as 2026-08-16T08:46:12.120Z")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise EnvelopeError(f"ts {value[:40]!r} is not ISO-8601") from None
    if moment.tzinfo is None:
        raise EnvelopeError(f"ts {value[:40]!r} has no zone; recorders write UTC with a Z")
    return int(moment.astimezone(UTC).timestamp() * 1000)


def _object_or_none(event: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    value = event.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise EnvelopeError(f"{key} must be an object or null")
    return value


def normalise(event: Any) -> dict[str, Any]:
    """A recorder's event as a complete envelope (v, id, ts, ... redaction); EnvelopeError if it is not one."""
    if not isinstance(event, dict):
        raise EnvelopeError("the line is not a JSON object")
    version = event.get("v", VERSION)
    if version != VERSION:
        raise EnvelopeError(f"envelope version {version!r} is not supported (only v {VERSION})")
    kind = event.get("type")
    if not isinstance(kind, str) or not TYPE_PATTERN.match(kind):
        raise EnvelopeError("type must be a dotted lower-case name such as app.focus or browser.navigate")
    ts_ms = parse_ts(event.get("ts"))
    app = _object_or_none(event, "app")
    window = _object_or_none(event, "window")
    element = _object_or_none(event, "element")
    data = _object_or_none(event, "data") or {}
    redaction = _object_or_none(event, "redaction") or {"applied": False, "rules": []}
    if app is not None and not isinstance(app.get("name", ""), str | None):
        raise EnvelopeError("app.name must be a string")
    if window is not None and not isinstance(window.get("title", ""), str | None):
        raise EnvelopeError("window.title must be a string")
    mono = event.get("mono_ns")
    if mono is not None and (not isinstance(mono, int) or isinstance(mono, bool)):
        raise EnvelopeError("mono_ns must be an integer or null")
    source = event.get("source") or "unknown"
    if not isinstance(source, str):
        raise EnvelopeError("source must be a string")
    envelope = {
        "v": VERSION,
        "id": "",
        "ts": event["ts"],
        "mono_ns": mono,
        "source": source,
        "type": kind,
        "app": app,
        "window": window,
        "element": element,
        "data": data,
        "redaction": redaction,
    }
    given_id = event.get("id")
    if given_id is not None and (not isinstance(given_id, str) or not given_id or len(given_id) > 200):
        raise EnvelopeError("id must be a non-empty string (at most 200 characters)")
    # An event without an id gets one from its content, so ingesting the same file twice adds nothing.
    envelope["id"] = given_id or "evt_" + hashlib.sha256(
        json.dumps(envelope, sort_keys=True, ensure_ascii=False).encode()
    ).hexdigest()[:26]
    envelope["_ts_ms"] = ts_ms
    return envelope


@functools.lru_cache(maxsize=65_536)  # a day's titles come back in every call
def is_private_title(title: str | None) -> bool:
    """Is this the title of a private or incognito browser window (see `_PRIVATE_TITLE` for the forms)?"""
    if not title:
        return False
    # Most titles hold none of the words every form holds: those are settled without the pattern.
    folded = title.casefold()
    return any(word in folded for word in PRIVATE_TITLE_WORDS) and _PRIVATE_TITLE.search(title) is not None


@functools.lru_cache(maxsize=4096)
def is_private_app(name: str | None) -> bool:
    """An app all of whose windows are private (Tor Browser, Mullvad Browser), whatever the watcher calls it."""
    if not name:
        return False
    key = "".join(ch for ch in name.lower().removesuffix(".exe") if ch.isalnum())
    return key in _PRIVATE_APPS


def is_private(event: Mapping[str, Any]) -> bool:
    """An event from a private or incognito window: by the browser's flag, the recorder's mode, the window's
    or page's title, or the app (whichever watcher or bucket it came from)."""
    for part in (event.get("data"), event.get("window"), event.get("app")):
        if isinstance(part, Mapping):
            if part.get("incognito") is True or part.get("private") is True:
                return True
            mode = part.get("mode")
            if isinstance(mode, str) and mode.strip().lower() in PRIVATE_MODES:
                return True
            if any(isinstance(part.get(key), str) and is_private_title(part[key]) for key in ("title", "tab_title")):
                return True
    app = event.get("app")
    return isinstance(app, Mapping) and isinstance(app.get("name"), str) and is_private_app(app["name"])


def strip_url_secrets(url: str) -> str:
    """A URL without user:password, and with credential-like query or fragment values replaced by `[masked]`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.scheme or not parts.netloc:
        return url
    netloc = parts.netloc.rpartition("@")[2]

    def clean(text: str) -> str:
        if "=" not in text:
            return text
        pairs = parse_qsl(text, keep_blank_values=True)
        if not pairs:
            return text
        cleaned = [(k, "[masked]" if v and _SECRET_KEYS.search(k) else v) for k, v in pairs]
        return urlencode(cleaned, safe="[]/:,")

    return urlunsplit((parts.scheme, netloc, parts.path, clean(parts.query), clean(parts.fragment)))


def safe_text(value: str, limit: int | None = FIELD_LIMIT) -> str:
    """Others' words for display: a URL's query-string secrets removed, then masked whole, one line, and cut
    (`gateway.clip`: a field cut before masking could end in half a card or IBAN no mask knows any more)."""
    text = one_line(value)
    if "://" in text:
        # A URL keeps its scheme and host; what is secret in the rest goes as one label (gateway.mask_url).
        text = " ".join(mask_url(strip_url_secrets(word)) if "://" in word else word for word in text.split(" "))
    return clip(text, limit)


class Cleaner:
    """`safe_text` for one answer, remembering what it did: the same titles and URLs come back many times."""

    def __init__(self) -> None:
        self.done: dict[tuple[str, int], str] = {}

    def text(self, value: str, limit: int | None = FIELD_LIMIT) -> str:
        cleaned = self.done.get((value, limit))
        if cleaned is None:
            cleaned = self.done[(value, limit)] = safe_text(value, limit)
        return cleaned

    def file_name(self, path: str, limit: int) -> str:
        """The last part of a path, taken after the whole path was masked (a number may span its slashes)."""
        return one_line(self.text(path, None).rsplit("/", 1)[-1], limit)

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {str(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value[:50]]
        return value


def for_agent(event: Mapping[str, Any], cleaner: Cleaner | None = None) -> dict[str, Any]:
    """The envelope as given to an agent: every string of app, window, element and data one line and masked."""
    clean = (cleaner or Cleaner()).value
    app, window, element = event.get("app"), event.get("window"), event.get("element")
    return {
        "v": event.get("v", VERSION),
        "id": event["id"],
        "ts": event["ts"],
        "mono_ns": event.get("mono_ns"),
        "source": clip(event.get("source"), 100),
        "type": event["type"],
        "app": clean(app) if isinstance(app, dict) else None,
        "window": clean(window) if isinstance(window, dict) else None,
        "element": clean(element) if isinstance(element, dict) else None,
        "data": clean(event.get("data") or {}),
        "redaction": event.get("redaction") or {"applied": False, "rules": []},
    }


def traits(event: Mapping[str, Any]) -> dict[str, str | None]:
    """What the store indexes and the gate routes on: app name, bundle id, label, URL, file path."""
    app = event.get("app") or {}
    window = event.get("window") or {}
    data = event.get("data") or {}
    url = data.get("url") if isinstance(data.get("url"), str) else None
    path = next((data[k] for k in ("path", "file") if isinstance(data.get(k), str) and data[k]), None)
    title = window.get("title") if isinstance(window.get("title"), str) else None
    tab_title = data.get("tab_title") if isinstance(data.get("tab_title"), str) else None
    label = (tab_title if event.get("type", "").startswith("browser.") else None) or title or tab_title
    return {
        "app": app.get("name") if isinstance(app.get("name"), str) else None,
        "bundle_id": app.get("bundle_id") if isinstance(app.get("bundle_id"), str) else None,
        "label": label[:1000] if label else None,
        "url": url[:2000] if url else None,
        "path": path[:1000] if path else None,
    }


# --- a stored row's envelope ------------------------------------------------------------------------------


def envelope_of(row: EventRow) -> dict[str, Any]:
    """The envelope of a stored event, whichever way its body was kept."""
    if row.format == FORMAT_ACTIVITYWATCH:
        return envelope_of_row(row)
    return json.loads(row.body)


def envelope_of_row(row: EventRow) -> dict[str, Any]:
    """The envelope of a stored ActivityWatch row (store columns, and the event's own data as body)."""
    event_id, start_ms, end_ms, kind, source, app, label, url, path = (
        row.id, row.ts_ms, row.end_ms, row.type, row.source, row.app, row.label, row.url, row.path
    )
    try:
        original = json.loads(row.body)
    except (TypeError, ValueError):
        original = {}
    if not isinstance(original, dict):
        original = {}
    data: dict[str, Any] = {}
    window = None
    if kind == "browser.navigate":
        window = {"title": label, "id": None}
        data = {"url": url, "tab_title": label, "mode": "normal", "audible": bool(original.get("audible", False))}
    elif kind == "editor.activity":
        data = {"path": path, "project": original.get("project"), "language": original.get("language")}
    elif kind in ("app.focus", "window.focus"):
        window = {"title": label, "id": None}
        if url:
            data["url"] = url
    data["duration_s"] = round(((end_ms or start_ms) - start_ms) / 1000, 3)
    return {
        "v": 1,
        "id": event_id,
        "ts": iso_ms(start_ms),
        "mono_ns": None,
        "source": source,
        "type": kind,
        "app": None if app is None else {"name": app, "bundle_id": None, "pid": None},
        "window": window,
        "element": None,
        "data": data,
        "redaction": {"applied": False, "rules": []},
    }
