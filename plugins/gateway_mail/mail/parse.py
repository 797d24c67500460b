"""One message file read with the standard `email` package: its envelope, its text (HTML made text), its verdicts.

Nothing here is given as is: `masked()` turns a parsed message into what an index may hold and an answer may show.
Verdicts: forged (from the account's own receiving server's `Authentication-Results` only), encrypted
(PGP/MIME, S/MIME: the envelope alone), a code arrived (the masks hid one), a password given (kept whole).

A message comes from anyone, so reading one is bounded (the MAX_ constants below) and never raises: a file longer
than MAX_BYTES or MAX_LINES is read up to there; one past another bound, or one the parser fails on in any way, is
read by its envelope alone; `Parsed.unreadable` says which and why.
"""

from __future__ import annotations

import email
import email.errors
import email.header
import email.parser
import email.policy
import email.utils
import os
import re
import time
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from attrs import field, frozen
from maildirs.authentication import FORGED, PASS, UNAUTHENTICATED, verdict  # noqa: F401 (the plugin reads them here)
from spamfilter import read_up_to

from gateway import mask

CODE_LABEL = "[code]"  # what gateway's masks write for a one-time code (gateway.privacy.codes.CODE)
_SPLIT = "\n\n\x1d\n\n"  # between subject and text while they are masked as one unit, then split again


# Bounds on reading one message file (plugins/gateway_mail/README.md, "Files from strangers").
MAX_BYTES = 16 * 1024 * 1024  # of a bigger file, only this much is read
MAX_LINES = 500_000  # lines read of a file (the parser's cost is per line): a file of more is read up to there
_CHUNK = 256 * 1024  # bytes fed to the parser between two looks at the clock
MAX_HEADER_BYTES = 256 * 1024  # what of a file its envelope is read from
MAX_PARTS = 1000  # MIME parts (nested messages included) in one message
MAX_DEPTH = 32  # multiparts and message/rfc822 nested in one another
MAX_HEADERS = 1000  # header fields of one part (a long Received chain is a few dozen)
MAX_FIELD = 2000  # characters of a subject or a name kept (masked, then cut)
MAX_HEADER_CHARS = 64 * 1024  # characters of one header's value read (a longer one is cut before it is decoded)
MAX_SECONDS = 10.0  # a parse running longer (looked at between chunks and parts) is given up for the envelope
MAX_INDEXED = 1_000_000  # characters of a message's text kept in the index (masked, then cut)
_MASK_MARGIN = 1000  # characters past a cut that are masked with the text, so that a number across the cut is seen


class _Policy(email.policy.EmailPolicy):
    """`email.policy.default`, but Content-Type and Content-Transfer-Encoding fetched as plain strings.

    The message's parts ask for their type many times (finding the body, its attachments, its charset) and the
    header registry parses it afresh each time: most of a message's cost. `Message.get_content_type()` and
    `get_param()` read a plain string the same way; Content-Disposition stays parsed (`is_attachment` needs it).
    """

    def header_fetch_parse(self, name: str, value: str) -> Any:
        if name.lower() in ("content-type", "content-transfer-encoding") and not hasattr(value, "name"):
            return "".join(value.splitlines())
        return super().header_fetch_parse(name, value)


POLICY = _Policy()


class Unreadable(Exception):
    """A message past one of the bounds: read by its envelope only; the text says which bound."""


class _Budget:
    """What one parse may still make: parts and time (the parser asks for a new message object for every part, and
    is fed a chunk at a time)."""

    def __init__(self) -> None:
        self.parts = -1  # the parser makes one object at its start to learn the factory's kind
        self.until = time.monotonic() + MAX_SECONDS

    def part(self, policy: email.policy.Policy) -> _Part:
        self.parts += 1
        if self.parts > MAX_PARTS:
            raise Unreadable(f"more than {MAX_PARTS} MIME parts")
        self.check_time()
        return _Part(policy)

    def check_time(self) -> None:
        if time.monotonic() > self.until:
            raise Unreadable(f"parsing took longer than {MAX_SECONDS:g} s")


class _Part(EmailMessage):
    """A message or part that knows how deep it sits and how many header fields it holds: attaching one deeper
    than MAX_DEPTH, or a field past MAX_HEADERS, stops the parse (each later look at a header would read them
    all)."""

    depth = 0
    fields = 0

    def set_raw(self, name: str, value: Any) -> None:
        self.fields += 1
        if self.fields > MAX_HEADERS:
            raise Unreadable(f"more than {MAX_HEADERS} header fields in one part")
        super().set_raw(name, value)

    def attach(self, payload: Any) -> None:
        if isinstance(payload, _Part):
            payload.depth = self.depth + 1
            if payload.depth > MAX_DEPTH:
                raise Unreadable(f"MIME parts nested more than {MAX_DEPTH} deep")
        super().attach(payload)


@frozen
class Attachment:
    name: str
    type: str
    size: int
    # The MIME part itself, for reading its text (`attachments.extract`); not compared, not shown.
    part: Any = field(default=None, eq=False, repr=False)


@frozen
class Parsed:
    message_id: str
    date: float  # seconds since the epoch (the file's time when the Date header cannot be read)
    sender: str  # the From address, lower case
    sender_name: str  # the From display name, as written
    to: tuple[str, ...]
    cc: tuple[str, ...]
    reply_to: str
    subject: str
    in_reply_to: str
    references: tuple[str, ...]
    text: str
    attachments: tuple[Attachment, ...]
    auth: str
    encrypted: bool
    bulk: bool  # a list, an automatic or a no-reply sender: not a "real person"
    unreadable: str = ""  # why the message was read in part ("" when it was read whole)
    # The To and Cc headers as written ("Name <address>, ...", names decoded) and List-Id: searched, never shown.
    to_text: str = ""
    cc_text: str = ""
    list_id: str = ""


def _ids(value: Any) -> list[str]:
    return re.findall(r"<([^<>\s]+)>", str(value or "")) or [v for v in str(value or "").split() if "@" in v]


Headers = dict[str, list[str]]


def _raw_headers(message: EmailMessage) -> Headers:
    """Each header's raw values by lower-case name, read once: the policy's per-header parse (the header
    registry) costs more than all the rest of a message, so only the fields that may hold encoded words are
    decoded, by `_decoded`."""
    found: Headers = {}
    for name, value in message.raw_items():
        found.setdefault(name.lower(), []).append(text_of_raw(str(value)[:MAX_HEADER_CHARS]))
    return found


def text_of_raw(value: str) -> str:
    """A value holding raw 8-bit bytes (the parser keeps them as surrogates) as text: read as UTF-8, the bytes
    that are not replaced (SQLite, JSON and the answers take no surrogates)."""
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _decoded(value: str) -> str:
    """A raw header value with its encoded words (RFC 2047) decoded and its folding undone."""
    if "=?" not in value:
        return " ".join(value.split())
    try:
        return " ".join(str(email.header.make_header(email.header.decode_header(value))).split())
    except (LookupError, UnicodeError, ValueError, email.errors.HeaderParseError):
        return " ".join(value.split())


def _first(headers: Headers, name: str) -> str:
    return headers.get(name, [""])[0]


def _addresses(headers: Headers, name: str) -> list[tuple[str, str]]:
    values = [" ".join(v.split()) for v in headers.get(name, [])]
    return [(_decoded(n), a.lower()) for n, a in email.utils.getaddresses(values) if "@" in a]


def _written(addresses: list[tuple[str, str]]) -> str:
    """An address header's names and addresses, one after another (for the index to search)."""
    return ", ".join(f"{n} <{a}>" if n else a for n, a in addresses)


# HTML elements that start and end a line of their own; table cells are joined on their row's line by a space.
_BLOCK_NAMES = ("address article aside blockquote body caption center dd details div dl dt fieldset figcaption figure "
                "footer form h1 h2 h3 h4 h5 h6 header hr html legend li main nav ol p pre section summary table tbody "
                "tfoot thead tr ul")
_BLOCKS = frozenset(_BLOCK_NAMES.split())
_CELLS = frozenset(("td", "th"))
_DROPPED = frozenset(("script", "style", "head", "title", "template", "noscript"))


def html_to_text(html: str) -> str:
    """HTML as text a person reads (lxml's HTML parser), laid out as a browser would, so that the masks see a
    number whole: whitespace in the source (a line end within a number) is one space, a table's cells are one
    line joined by spaces, `<br>` and every block (paragraph, row, list item...) end a line. Scripts, styles and
    the head are dropped. The tree is walked without recursion, however deep the HTML nests."""
    import lxml.etree
    import lxml.html

    try:
        document = lxml.html.document_fromstring(html)
    except (lxml.etree.ParserError, ValueError):
        return ""
    pieces: list[str] = []
    preformatted = 0
    breaks = 0  # line ends owed before the next text: 1 after a <br>, a row or a block, 2 after a paragraph

    def add(text: str | None) -> None:
        nonlocal breaks
        if not text:
            return
        if not preformatted:
            text = re.sub(r"[ \t\r\n\f\v]+", " ", text)
            if not text.strip() and (breaks or not pieces or pieces[-1].endswith((" ", "\n"))):
                return
        if breaks:
            pieces.append("\n" * breaks)
            breaks = 0
        pieces.append(text)

    def end_line(count: int = 1) -> None:
        nonlocal breaks
        if pieces:
            breaks = max(breaks, count)

    for event, element in lxml.etree.iterwalk(document, events=("start", "end")):
        tag = element.tag.lower() if isinstance(element.tag, str) else ""
        if event == "start":
            if tag in _DROPPED or not tag:  # a comment or a processing instruction: its text is not shown
                continue
            if tag in _BLOCKS:
                end_line(2 if tag == "p" else 1)
            elif tag in _CELLS:
                add(" ")
            elif tag == "br":
                if breaks == 0 and pieces:
                    pieces.append("\n")
                else:
                    breaks += 1
            if tag == "pre":
                preformatted += 1
            add(element.text)
            continue
        if tag and tag not in _DROPPED:
            if tag == "pre":
                preformatted -= 1
            if tag in _BLOCKS:
                end_line(2 if tag == "p" else 1)
            elif tag in _CELLS:
                add(" ")
        if element.getparent() is not None:
            add(element.tail)
    lines = (" ".join(line.replace("\xa0", " ").split()) for line in "".join(pieces).split("\n"))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _content(part: Any) -> str:
    try:
        return part.get_content()
    except (LookupError, UnicodeError, AssertionError, ValueError):
        payload = part.get_payload(decode=True) or b""
        return payload.decode("latin-1") if isinstance(payload, bytes) else str(payload)


def _text_of(message: EmailMessage) -> str:
    """The plain text part, or the HTML one made text when there is no plain text (or an empty one)."""
    if not message.is_multipart():  # most mail: one part, its type read once
        kind = message.get_content_type()
        if kind not in ("text/plain", "text/html"):
            return ""
        content = _content(message)
        return (html_to_text(content) if kind == "text/html" else content) if isinstance(content, str) else ""
    for kind in ("plain", "html"):
        body = message.get_body(preferencelist=(kind,))
        content = _content(body) if body is not None else None
        if isinstance(content, str) and content.strip():
            return html_to_text(content) if kind == "html" else content
    return ""


def _size_of(part: Any) -> int:
    """An attachment's size in bytes, worked out from its base64 text rather than decoded (a copy of each)."""
    payload = part.get_payload()
    if not isinstance(payload, str):
        return 0
    if str(part.get("content-transfer-encoding", "")).strip().lower() == "base64":
        letters = len(payload) - sum(payload.count(c) for c in " \t\r\n")
        return max(0, letters * 3 // 4 - (payload.rstrip().endswith("==") + payload.rstrip().endswith("=")))
    decoded = part.get_payload(decode=True)
    return len(decoded) if isinstance(decoded, bytes) else 0


def _attachments(message: EmailMessage) -> list[Attachment]:
    return [Attachment(part.get_filename() or "(no name)", part.get_content_type(), _size_of(part), part)
            for part in (message.iter_attachments() if message.is_multipart() else [])]


def encrypted(message: EmailMessage) -> bool:
    kind = message.get_content_type()
    if kind == "multipart/encrypted":
        return True
    if kind in ("application/pkcs7-mime", "application/x-pkcs7-mime"):
        return message.get_param("smime-type", "enveloped-data") != "signed-data"
    return False


def authentication(headers: Headers, authserv_id: str, sender: str) -> str:
    """PASS, FORGED or UNAUTHENTICATED, read only from headers that the account's own server (`authserv_id`) added
    (`maildirs.authentication`, the rule the spam plugin reads senders by too)."""
    return verdict(headers.get("authentication-results", []), authserv_id, sender)


def _bulk(headers: Headers, sender: str) -> bool:
    local = sender.partition("@")[0]
    if re.search(r"no-?reply|do-?not-?reply|mailer-daemon|notifications?|postmaster|bounce", local):
        return True
    auto = _first(headers, "auto-submitted").strip().lower() or "no"
    return bool(headers.get("list-id") or headers.get("list-unsubscribe") or auto != "no"
                or _first(headers, "precedence").strip().lower() in ("bulk", "list", "junk"))


def _why(error: BaseException) -> str:
    if isinstance(error, Unreadable):
        return str(error)
    if isinstance(error, RecursionError):
        return "MIME parts nested too deep"
    return f"the mail parser failed on it ({type(error).__name__})"


def parse(data: bytes, *, authserv_id: str = "", file_time: float = 0.0) -> Parsed:
    """The message in `data`, never raising: past MAX_BYTES read up to there; by its envelope alone when it is past
    another bound or the parser fails on it.

    A file the parser fails on is one file: its headers are read again alone (the first MAX_HEADER_BYTES), and
    each field that still fails is left empty, so the message keeps what of its envelope can be read.
    """
    kept, cut = _within_bounds(data)
    budget = _Budget()
    try:
        parser = email.parser.BytesFeedParser(_factory=budget.part, policy=POLICY)
        for start in range(0, len(kept), _CHUNK):  # what message_from_bytes does, with a look at the clock
            parser.feed(kept[start:start + _CHUNK])
            budget.check_time()
        message = parser.close()
    except Exception as error:  # noqa: BLE001 - whatever a stranger's file does, it fails that file alone
        return _envelope(data, authserv_id, file_time, f"only its envelope was read: {_why(error)}")
    return _read(message, authserv_id, file_time, cut, whole=True)


def _within_bounds(data: bytes) -> tuple[bytes, str]:
    """The part of `data` that is parsed (at most MAX_BYTES, at most MAX_LINES lines), and what was left ("")."""
    if len(data) > MAX_BYTES:
        data, cut = data[:MAX_BYTES], f"only its first {MAX_BYTES // (1024 * 1024)} MB were read"
    else:
        cut = ""
    if data.count(b"\n") > MAX_LINES:
        end = -1
        for _line in range(MAX_LINES):
            end = data.find(b"\n", end + 1)
        data, cut = data[:end + 1], f"only its first {MAX_LINES:,} lines were read"
    return data, cut


def _envelope(data: bytes, authserv_id: str, file_time: float, reason: str) -> Parsed:
    try:
        message = email.parser.BytesHeaderParser(policy=POLICY).parsebytes(data[:MAX_HEADER_BYTES])
    except Exception:  # noqa: BLE001 - then not even the headers: an empty envelope, the file's time
        message = EmailMessage(policy=POLICY)
    return _read(message, authserv_id, file_time, reason, whole=False)


def _read(message: EmailMessage, authserv_id: str, file_time: float, reason: str, whole: bool) -> Parsed:
    failed: list[str] = []

    def safely(what: str, read: Any, default: Any) -> Any:
        try:
            return read()
        except Exception:  # noqa: BLE001 - one field that cannot be read is left empty, and said
            failed.append(what)
            return default

    headers: Headers = safely("headers", lambda: _raw_headers(message), {})
    senders = safely("From", lambda: _addresses(headers, "from"), [])
    sender_name, sender = senders[0] if senders else ("", "")
    try:
        when = email.utils.parsedate_to_datetime(" ".join(_first(headers, "date").split()))
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        date = when.timestamp()
    except Exception:  # noqa: BLE001 - a date that cannot be read is the file's time (the README's choice)
        date = file_time
    sealed = safely("Content-Type", lambda: encrypted(message), False)
    reply_to = safely("Reply-To", lambda: _addresses(headers, "reply-to"), [])
    whole = whole and not sealed
    recipients = {name: safely(name.capitalize(), lambda n=name: _addresses(headers, n), []) for name in ("to", "cc")}
    fields = {
        "message_id": safely("Message-ID", lambda: (_ids(_first(headers, "message-id")) or [""])[0], ""),
        "to": tuple(a for _n, a in recipients["to"]),
        "cc": tuple(a for _n, a in recipients["cc"]),
        "subject": safely("Subject", lambda: _decoded(_first(headers, "subject")), ""),
        "to_text": _written(recipients["to"]),
        "cc_text": _written(recipients["cc"]),
        "list_id": safely("List-Id", lambda: _decoded(_first(headers, "list-id"))[:MAX_HEADER_CHARS], ""),
        "in_reply_to": safely("In-Reply-To", lambda: (_ids(_first(headers, "in-reply-to")) or [""])[0], ""),
        "references": safely("References", lambda: tuple(_ids(" ".join(headers.get("references", [])))), ()),
        "auth": safely("Authentication-Results", lambda: authentication(headers, authserv_id, sender),
                       UNAUTHENTICATED),
        "bulk": safely("List-Id", lambda: _bulk(headers, sender), False),
        "text": safely("text", lambda: _text_of(message), "") if whole else "",
        "attachments": safely("attachments", lambda: tuple(_attachments(message)), ()) if whole else (),
    }
    if failed:
        reason = "; ".join(r for r in (reason, f"its {', '.join(failed)} could not be read") if r)
    return Parsed(date=date, sender=sender, sender_name=sender_name, reply_to=reply_to[0][1] if reply_to else "",
                  encrypted=sealed, unreadable=reason, **fields)


def parse_file(path: Path, authserv_id: str = "") -> Parsed:
    """A message file, read up to MAX_BYTES (and one byte more, to know there is more); OSError when it cannot be
    opened."""
    with open(path, "rb", buffering=0) as file:
        data = read_up_to(file, MAX_BYTES + 1)
        file_time = os.fstat(file.fileno()).st_mtime
    return parse(data, authserv_id=authserv_id, file_time=file_time)


@frozen
class Masked:
    """What of a message may be indexed and shown: its fields and its text masked, and what the masks found."""

    subject: str
    sender_name: str
    text: str
    code: bool
    password: bool
    cut: bool = False  # the text was longer than the limit asked for: only its beginning is here


def masked(parsed: Parsed, limit: int = MAX_INDEXED) -> Masked:
    """Subject and text masked as one unit (a code named in the subject is hidden in the text and back); the text
    cut at `limit` characters once masked (a little more than the limit is masked, so a number across the cut is
    seen whole and hidden)."""
    from gateway import one_line

    subject = one_line(parsed.subject[:MAX_FIELD + _MASK_MARGIN])
    text = parsed.text[:limit + _MASK_MARGIN]
    unit = mask(subject + _SPLIT + text)
    masked_subject, split, masked_text = unit.partition(_SPLIT)
    if not split:  # the whole was replaced (a message giving a password) or the split was masked away
        masked_subject, masked_text = mask(subject), unit
    password = masked_text != text and mask("Password: Xy7!abcd") in masked_text
    code = CODE_LABEL in unit and CODE_LABEL not in subject + text
    cut = len(parsed.text) > limit
    name = one_line(mask(one_line(parsed.sender_name[:MAX_FIELD + _MASK_MARGIN])))
    return Masked(one_line(masked_subject)[:MAX_FIELD], name[:MAX_FIELD], masked_text[:limit] if cut else masked_text,
                  code, password, cut)


def attachment_name(name: str) -> str:
    """An attachment's name as it may be indexed and shown: on one line, masked, then cut."""
    from gateway import clip, one_line

    return clip(one_line(mask(one_line(name))), 120)


def timestamp(date: float, zone: Any = None) -> str:
    """A message's time for a person: in their zone when given (its abbreviation after), else in UTC."""
    moment = datetime.fromtimestamp(date, tz=zone or UTC)
    if moment.year < 1000:  # strftime's %Y pads such a year or not, as the C library does
        return moment.strftime("%Y-%m-%d %H:%M ") + (moment.tzname() or "UTC")
    # strftime's own words for every other year, written out: it cost half of a search hit's making.
    return (f"{moment.year}-{moment.month:02d}-{moment.day:02d} {moment.hour:02d}:{moment.minute:02d} "
            f"{moment.tzname() or 'UTC'}")
