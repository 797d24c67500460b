"""Reading the XML exports of Android's "SMS Backup & Restore": `sms-*.xml` (`<sms>` and `<mms>`) and `calls-*.xml`.

The files come from the phone, and a text in them from anyone: each is read by `defusedxml`'s streaming parser
(the standard library's expat, with entity declarations and external references refused, so a "billion laughs"
file or one that asks for a file of this computer stops at its DTD), element by element, each cleared once read.
A file is bounded in size, in elements and in time; past a bound, or on any XML error, that file fails alone with
a sentence saying why, and the others are read.

The attributes used, as the app writes them (its documentation's "fields" page):

- `<sms address date type body contact_name date_sent>`: `type` 1 received, 2 sent, 3 draft, 4 outbox,
  5 failed, 6 queued; `date` in milliseconds since 1970 (UTC).
- `<mms date msg_box address contact_name>` with `<parts><part ct text/></parts>` and
  `<addrs><addr address type/></addrs>`: `msg_box` 1 received, 2 sent; `address` lists a group's numbers
  separated by `~`; an addr of type 137 is the sender. Only the parts of type `text/plain` are read (pictures
  are left where they are).
- `<call number duration date type contact_name>`: `type` 1 incoming, 2 outgoing, 3 missed, 4 voicemail,
  5 rejected (declined), 6 refused by the blocking list, 7 answered on another device; `duration` in seconds.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

from attrs import frozen

SENT_SMS_TYPES = frozenset({2, 4, 5, 6})  # sent, outbox, failed, queued: the person's own words
DRAFT_SMS_TYPE = 3
MMS_SENT_BOX = 2
MMS_FROM = "137"
CALL_KINDS = {1: "incoming", 2: "outgoing", 3: "missed", 4: "voicemail", 5: "declined", 6: "blocked",
              7: "answered elsewhere"}


class ExportError(ValueError):
    """One export cannot be read (malformed, hostile or past a bound): that file alone fails."""


@frozen
class Text:
    """One SMS or MMS as exported: its numbers as written, who sent it, when, its words."""

    numbers: tuple[str, ...]  # the other people of the conversation, as the export writes them
    sender: str  # "" when the person sent it
    date_ms: int
    body: str
    name: str  # contact_name, as the phone knew it (others' words)
    kind: str  # "sms" or "mms"


@frozen
class Call:
    number: str
    date_ms: int
    duration: int
    kind: str
    name: str


@frozen
class Bounds:
    max_bytes: int
    max_elements: int
    max_seconds: float


def _int(value: str | None, default: int = 0) -> int:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return default


def _clean(value: str | None) -> str:
    return "" if value is None or value == "null" else value


def _name(value: str | None) -> str:
    """A contact_name as the phone wrote it; the app writes "(Unknown)" for a number without a contact."""
    name = _clean(value).strip()
    return "" if name == "(Unknown)" else name


def _events(path: Path, bounds: Bounds) -> Iterator[object]:
    """Each element of the file once its end is read (cleared by the caller), within the bounds."""
    from xml.etree.ElementTree import ParseError

    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import iterparse

    try:
        size = path.stat().st_size
    except OSError as error:
        raise ExportError(f"{path.name} cannot be read: {error.strerror or error}") from None
    if size > bounds.max_bytes:
        raise ExportError(f"{path.name} is {size // 2**20} MiB, over the limit of {bounds.max_bytes // 2**20} MiB "
                          "(max_file_mb in [plugins.texts]); it was not read")
    started = time.monotonic()
    count = 0
    try:
        with path.open("rb") as handle:
            for _event, element in iterparse(handle, events=("end",), forbid_dtd=False, forbid_entities=True,
                                             forbid_external=True):
                count += 1
                if count > bounds.max_elements:
                    raise ExportError(f"{path.name} has more than {bounds.max_elements:,} elements "
                                      "(max_elements in [plugins.texts]); it was not read")
                if count % 1024 == 0 and time.monotonic() - started > bounds.max_seconds:
                    raise ExportError(f"{path.name} took more than {bounds.max_seconds:g} s to read "
                                      "(max_seconds in [plugins.texts]); it was not read")
                yield element
    except DefusedXmlException as error:
        raise ExportError(f"{path.name} declares XML entities or external references ({type(error).__name__}), "
                          "which an export never does; it was not read") from None
    except ParseError as error:
        raise ExportError(f"{path.name} is not well-formed XML ({error}); it was not read: export it again "
                          "from the phone") from None
    except OSError as error:
        raise ExportError(f"{path.name} cannot be read: {error.strerror or error}") from None


def read_texts(path: Path, bounds: Bounds) -> list[Text]:
    """Every text of an `sms-*.xml` export (drafts left out: nothing was sent or received)."""
    texts: list[Text] = []
    root_seen = False
    for element in _events(path, bounds):
        tag = element.tag  # type: ignore[attr-defined]
        if tag == "sms":
            kind = _int(element.get("type"))  # type: ignore[attr-defined]
            number = _clean(element.get("address")).strip()  # type: ignore[attr-defined]
            if kind != DRAFT_SMS_TYPE and number:
                texts.append(Text((number,), "" if kind in SENT_SMS_TYPES else number,
                                  _int(element.get("date")), _clean(element.get("body")),  # type: ignore[attr-defined]
                                  _name(element.get("contact_name")), "sms"))  # type: ignore[attr-defined]
            element.clear()  # type: ignore[attr-defined]
        elif tag == "mms":
            texts.extend(_mms(element))
            element.clear()  # type: ignore[attr-defined]
        elif tag == "smses":
            root_seen = True
    if not root_seen:
        raise ExportError(f"{path.name} is not an SMS Backup & Restore export of texts (no <smses> element)")
    return texts


def _mms(element: object) -> list[Text]:
    get = element.get  # type: ignore[attr-defined]
    numbers = tuple(n.strip() for n in _clean(get("address")).split("~") if n.strip())
    if not numbers:
        return []
    words = [_clean(part.get("text")) for part in element.iter("part")  # type: ignore[attr-defined]
             if _clean(part.get("ct")).lower() == "text/plain"]
    sender = ""
    if _int(get("msg_box")) != MMS_SENT_BOX:
        senders = [_clean(a.get("address")).strip() for a in element.iter("addr")  # type: ignore[attr-defined]
                   if _clean(a.get("type")) == MMS_FROM]
        sender = senders[0] if senders and senders[0] else numbers[0]
    date = _int(get("date"))
    if date and date < 10**11:  # some phones write an MMS's date in seconds
        date *= 1000
    body = "\n".join(w for w in words if w)
    return [Text(numbers, sender, date, body, _name(get("contact_name")), "mms")] if body else []


def read_calls(path: Path, bounds: Bounds) -> list[Call]:
    """Every call of a `calls-*.xml` export."""
    calls: list[Call] = []
    root_seen = False
    for element in _events(path, bounds):
        tag = element.tag  # type: ignore[attr-defined]
        if tag == "call":
            get = element.get  # type: ignore[attr-defined]
            kind = _int(get("type"))
            calls.append(Call(_clean(get("number")).strip(), _int(get("date")), max(_int(get("duration")), 0),
                              CALL_KINDS.get(kind, "other"), _name(get("contact_name"))))
            element.clear()  # type: ignore[attr-defined]
        elif tag == "calls":
            root_seen = True
    if not root_seen:
        raise ExportError(f"{path.name} is not an SMS Backup & Restore export of calls (no <calls> element)")
    return calls
