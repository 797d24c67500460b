"""One message file read with the standard `email` package: its envelope, its text (HTML made text), its verdicts.

Nothing here is given as is: `masked()` turns a parsed message into what an index may hold and an answer may show.
Verdicts: forged (from the account's own receiving server's `Authentication-Results` only), encrypted
(PGP/MIME, S/MIME: the envelope alone), a code arrived (the masks hid one), a password given (kept whole).
"""

from __future__ import annotations

import email
import email.errors
import email.header
import email.policy
import email.utils
import re
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from attrs import frozen

from gateway import mask

CODE_LABEL = "[code]"  # what gateway's masks write for a one-time code (gateway.privacy.codes.CODE)
_SPLIT = "\n\n\x1d\n\n"  # between subject and text while they are masked as one unit, then split again

PASS, FORGED, UNAUTHENTICATED = "pass", "forged", "unauthenticated"


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


@frozen
class Attachment:
    name: str
    type: str
    size: int


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


def _ids(value: Any) -> list[str]:
    return re.findall(r"<([^<>\s]+)>", str(value or "")) or [v for v in str(value or "").split() if "@" in v]


Headers = dict[str, list[str]]


def _raw_headers(message: EmailMessage) -> Headers:
    """Each header's raw values by lower-case name, read once: the policy's per-header parse (the header
    registry) costs more than all the rest of a message, so only the fields that may hold encoded words are
    decoded, by `_decoded`."""
    found: Headers = {}
    for name, value in message.raw_items():
        found.setdefault(name.lower(), []).append(text_of_raw(str(value)))
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


def html_to_text(html: str) -> str:
    """HTML as text a person reads (lxml's HTML parser): scripts and styles dropped, each piece of text, table
    cell or block on its own line, so that nothing of two cells runs together."""
    import lxml.etree
    import lxml.html

    try:
        document = lxml.html.document_fromstring(html)
    except (lxml.etree.ParserError, ValueError):
        return ""
    for element in list(document.iter("script", "style", "head", "title")):
        element.drop_tree()
    text = "\n".join(piece for piece in document.itertext() if piece.strip())
    return re.sub(r"\n\s*\n+", "\n\n", re.sub(r"[ \t\xa0]+\n", "\n", text)).strip()


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


def _attachments(message: EmailMessage) -> list[Attachment]:
    found = []
    for part in message.iter_attachments() if message.is_multipart() else []:
        payload = part.get_payload(decode=True)
        found.append(Attachment(part.get_filename() or "(no name)", part.get_content_type(),
                                len(payload) if isinstance(payload, bytes) else 0))
    return found


def encrypted(message: EmailMessage) -> bool:
    kind = message.get_content_type()
    if kind == "multipart/encrypted":
        return True
    if kind in ("application/pkcs7-mime", "application/x-pkcs7-mime"):
        return message.get_param("smime-type", "enveloped-data") != "signed-data"
    return False


def _aligned(domain: str, other: str) -> bool:
    """Relaxed alignment (RFC 7489): one domain is the other or below it (an approximation of the org domain)."""
    domain, other = domain.lower().rstrip("."), other.lower().rstrip(".")
    return bool(domain and other) and (domain == other or domain.endswith("." + other) or other.endswith("." + domain))


def authentication(headers: Headers, authserv_id: str, sender: str) -> str:
    """PASS, FORGED or UNAUTHENTICATED, read only from headers that the account's own server (`authserv_id`) added.

    Forged: its DMARC failed, or no passing SPF (smtp.mailfrom) or DKIM (header.d / header.i) aligns with the
    From domain. Any other server's Authentication-Results is the sender's word and ignored.
    """
    if not authserv_id:
        return UNAUTHENTICATED
    from_domain = sender.rpartition("@")[2]
    ours = []
    for value in headers.get("authentication-results", []):
        text = " ".join(value.split())
        server = text.split(";", 1)[0].strip().split()[0].lower() if text.strip() else ""
        if server == authserv_id:
            ours.append(text.lower())
    if not ours:
        return UNAUTHENTICATED
    results = " ; ".join(ours)
    if re.search(r"\bdmarc\s*=\s*fail", results):
        return FORGED
    if re.search(r"\bdmarc\s*=\s*pass", results) and re.search(r"header\.from\s*=\s*" + re.escape(from_domain), results):
        return PASS
    for method, property_pattern in (("spf", r"smtp\.mailfrom\s*=\s*([^\s;]+)"),
                                     ("dkim", r"header\.[di]\s*=\s*([^\s;]+)")):
        for clause in re.split(r";", results):
            if re.search(rf"\b{method}\s*=\s*pass\b", clause):
                for value in re.findall(property_pattern, clause):
                    if _aligned(value.rpartition("@")[2] or value, from_domain):
                        return PASS
    return FORGED


def _bulk(headers: Headers, sender: str) -> bool:
    local = sender.partition("@")[0]
    if re.search(r"no-?reply|do-?not-?reply|mailer-daemon|notifications?|postmaster|bounce", local):
        return True
    auto = _first(headers, "auto-submitted").strip().lower() or "no"
    return bool(headers.get("list-id") or headers.get("list-unsubscribe") or auto != "no"
                or _first(headers, "precedence").strip().lower() in ("bulk", "list", "junk"))


def parse(data: bytes, *, authserv_id: str = "", file_time: float = 0.0) -> Parsed:
    message = email.message_from_bytes(data, policy=POLICY)
    headers = _raw_headers(message)
    senders = _addresses(headers, "from")
    sender_name, sender = senders[0] if senders else ("", "")
    try:
        when = email.utils.parsedate_to_datetime(" ".join(_first(headers, "date").split()))
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        date = when.timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        date = file_time
    sealed = encrypted(message)
    reply_to = _addresses(headers, "reply-to")
    return Parsed(
        message_id=(_ids(_first(headers, "message-id")) or [""])[0],
        date=date,
        sender=sender,
        sender_name=sender_name,
        to=tuple(a for _n, a in _addresses(headers, "to")),
        cc=tuple(a for _n, a in _addresses(headers, "cc")),
        reply_to=reply_to[0][1] if reply_to else "",
        subject=_decoded(_first(headers, "subject")),
        in_reply_to=(_ids(_first(headers, "in-reply-to")) or [""])[0],
        references=tuple(_ids(" ".join(headers.get("references", [])))),
        text="" if sealed else _text_of(message),
        attachments=() if sealed else tuple(_attachments(message)),
        auth=authentication(headers, authserv_id, sender),
        encrypted=sealed,
        bulk=_bulk(headers, sender),
    )


def parse_file(path: Path, authserv_id: str = "") -> Parsed:
    return parse(path.read_bytes(), authserv_id=authserv_id, file_time=path.stat().st_mtime)


@frozen
class Masked:
    """What of a message may be indexed and shown: its fields and its text masked, and what the masks found."""

    subject: str
    sender_name: str
    text: str
    code: bool
    password: bool


def masked(parsed: Parsed) -> Masked:
    """Subject and text masked as one unit (a code named in the subject is hidden in the text and back)."""
    from gateway import one_line

    subject = one_line(parsed.subject)
    unit = mask(subject + _SPLIT + parsed.text)
    masked_subject, split, masked_text = unit.partition(_SPLIT)
    if not split:  # the whole was replaced (a message giving a password) or the split was masked away
        masked_subject, masked_text = mask(subject), unit
    password = masked_text != parsed.text and mask("Password: Xy7!abcd") in masked_text
    code = CODE_LABEL in unit and CODE_LABEL not in subject + parsed.text
    return Masked(one_line(masked_subject), one_line(mask(parsed.sender_name)), masked_text, code, password)


def timestamp(date: float, zone: Any = None) -> str:
    """A message's time for a person: in their zone when given (its abbreviation after), else in UTC."""
    moment = datetime.fromtimestamp(date, tz=zone or UTC)
    return moment.strftime("%Y-%m-%d %H:%M ") + (moment.tzname() or "UTC")
