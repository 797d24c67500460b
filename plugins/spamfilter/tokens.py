"""A message's tokens, as SpamBayes and bogofilter take them: words of the text and the subject, address pieces,
content types, URL pieces; HTML made text first. Never shown to an agent (only `gateway spam why` prints them).

Headers that leak the label (X-Spam-*, the SpamAssassin corpus's own, Received and the routing around it) are
left out: they give good scores for reasons that do not hold on the person's own mail.
"""

from __future__ import annotations

import email
import email.errors
import email.header
import os
import re
import sys
from email.message import Message
from typing import Any

# The tokenizer's version: a change to what `tokens` gives a message must change it, for stores of tokens read
# before (the spam plugin's facts.sqlite) are emptied when it changes.
VERSION = 2  # 2: HTML read by lxml's parser (libxml2), was html.parser

# Headers never tokenized: what filters on the way added (they give the answer away), and routing.
LEAKING = re.compile(
    r"^(x-spam|x-bogosity|x-dspam|x-crm114|x-spambayes|x-virus|x-amavis|x-razor|x-pyzor|x-dcc|x-mailscanner"
    r"|x-barracuda|x-proofpoint|x-mimecast|x-ms-exchange-organization-scl|x-ms-exchange|x-microsoft-antispam"
    r"|x-forefront|x-keywords|x-uid|x-status|status|x-label|x-priority-spam|delivered-to|received|return-path"
    r"|x-original-to|x-envelope|x-loop|x-mailman|x-beenthere|x-accept-language|x-filter|x-sieve|x-junk)",
    re.IGNORECASE,
)
ADDRESS_HEADERS = ("from", "to", "cc", "reply-to", "sender")
# A word starts with a letter or digit and ends with one, `$` or `!`. Only words of 3 characters and more are
# kept (`words`), so the pattern matches no shorter ones: a 1- or 2-character match would have left the scan at the
# same place, so every longer word found is the same.
WORD = re.compile(r"[^\W_][\w'$.!\-]+[\w$!]", re.UNICODE)
URL = re.compile(r"(?:https?|ftp)://([^\s\"'<>/?#]+)([^\s\"'<>]*)", re.IGNORECASE)
ADDRESS = re.compile(r"([\w.+'-]+)@([\w-]+(?:\.[\w-]+)+)")
MAX_TEXT = 200_000  # characters of text read from one message: the rest says nothing more


MAX_PARTS = 1_000  # MIME parts: real mail has tens; a bomb of 100,000 one-byte parts takes Python 25 s to parse
MAX_NESTING = 50  # multiparts and message/rfc822 within each other; Python's parser recurses, and fails near 1,000
_BOUNDARY = re.compile(rb'boundary\s*=\s*(?:"([^"\r\n]{1,200})"|([^\s;"]{1,200}))', re.IGNORECASE)
_ENCLOSED = re.compile(rb"message/rfc822", re.IGNORECASE)


def _matches_at(pattern: re.Pattern, text: Any, found_in: Any, literal: Any,
                offsets: tuple[int, ...]) -> list[re.Match]:
    """`list(pattern.finditer(text))`, for a pattern every match of which holds `literal` (as found in `found_in`:
    `text` itself, or lower-cased for a pattern that ignores case) one of `offsets` characters after its start:
    the pattern is tried there alone, where the regular expression engine would try it at every position (most
    of its time, spent where no match can start). Tried in order and from where the last match ended, as
    finditer goes."""
    if literal not in found_in:
        return []
    starts = set()
    at = found_in.find(literal)
    while at >= 0:
        starts.update(at - offset for offset in offsets if at >= offset)
        at = found_in.find(literal, at + 1)
    matches: list[re.Match] = []
    end = 0
    for start in sorted(starts):
        if start >= end:
            match = pattern.match(text, start)
            if match is not None:
                matches.append(match)
                end = match.end()
    return matches


class Unreadable(ValueError):
    """A message this filter will not parse: more MIME parts or nesting than real mail has."""


def parse(raw: bytes) -> Message:
    """The message, or Unreadable before any parsing when its structure is out of bounds (counted from the bytes:
    each declared boundary's delimiter lines, each enclosed message), so that no one message costs more than a
    fraction of a second however it was built."""
    boundaries: set[bytes] = set()
    lowered = raw.lower()  # the patterns ignore case (ASCII's, for bytes): found where their literal start is
    for match in _matches_at(_BOUNDARY, raw, lowered, b"boundary", (0,)):
        boundaries.add(match.group(1) or match.group(2))
        if len(boundaries) > MAX_NESTING:
            raise Unreadable(f"more than {MAX_NESTING} nested MIME parts")
    if lowered.count(b"message/rfc822") > MAX_NESTING:  # as many as _ENCLOSED.findall(raw) finds
        raise Unreadable(f"more than {MAX_NESTING} enclosed messages")
    parts = sum(raw.count(b"\n--" + boundary) for boundary in boundaries)
    if parts > MAX_PARTS:
        raise Unreadable(f"more than {MAX_PARTS} MIME parts")
    # compat32, the default: the policy module costs a start-up 10 ms more
    return email.message_from_bytes(raw, _class=_Parsed)


class _Parsed(Message):
    """A message (and each of its parts) as the standard library parses it, each header's parameters parsed once:
    the tokenizer asks a part for several of its Content-Type's (its charset twice, a name), and a hostile header
    of thousands of parameters cost tens of milliseconds each time. Kept by the header's value, so a header
    changed since is parsed anew; each caller is given its own list."""

    def _get_params_preserve(self, failobj: Any, header: str) -> Any:
        value = self.get(header)
        if not isinstance(value, str):  # missing (the caller's failobj), or a Header object set by a program
            return super()._get_params_preserve(failobj, header)
        kept = self.__dict__.setdefault("_parameters", {})
        key = (header.lower(), value)
        found = kept.get(key)
        if found is None:
            found = kept[key] = super()._get_params_preserve(failobj, header)
        return list(found)


# Headers every delivered message has at least one of; a file with none of them in its header block is not mail.
MAIL_HEADERS = frozenset((b"from", b"to", b"cc", b"date", b"subject", b"message-id", b"received", b"return-path",
                          b"delivered-to", b"sender", b"reply-to", b"mime-version", b"in-reply-to", b"references"))
_HEADER_LINE = re.compile(rb"^([!-9;-~]{1,76})[ \t]*:")


def is_mail(raw: bytes) -> bool:
    """Whether `raw` starts as a message does: a block of header lines (after an mbox `From ` line, if any), one of
    them a header every delivered message has. Decided on the header block's bytes alone, before any parsing."""
    head = raw[:64 * 1024].replace(b"\r\n", b"\n").partition(b"\n\n")[0]
    lines = head.split(b"\n")
    if lines and lines[0].startswith(b"From "):
        lines = lines[1:]
    if not lines or not _HEADER_LINE.match(lines[0]):
        return False
    names = set()
    for line in lines:
        if line[:1] in (b" ", b"\t"):
            continue
        match = _HEADER_LINE.match(line)
        if match is None:
            break  # neither a header nor its continuation: the parser takes the body to start here
        names.add(match.group(1).lower())
    return not names.isdisjoint(MAIL_HEADERS)


def header_text(message: Message, name: str) -> str:
    """The first `name` header's text, its encoded words decoded ("" when there is none)."""
    return _decoded(message.get(name))


def _first_headers(message: Message) -> dict[str, tuple[str, str]]:
    """Each header name (lower-cased) with its first (name, value) as parsed: one pass over the headers for the
    dozen names `tokens_of` asks for, where `Message.get` goes through all of them for each."""
    first: dict[str, tuple[str, str]] = {}
    for name, value in message.raw_items():
        first.setdefault(name.lower(), (name, value))
    return first


def _decoded(value: object) -> str:
    if value is None:
        return ""
    text = str(value)
    if "=?" not in text:  # no encoded word: decode_header gives the text back as it is, without its pattern's scan
        return text
    try:
        parts = email.header.decode_header(text)
        return "".join(
            p.decode(c or "utf-8", "replace") if isinstance(p, bytes) else p for p, c in parts
        )
    except (LookupError, ValueError, email.errors.HeaderParseError):
        return str(value)


def _payload_text(part: Message) -> str:
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    charset = part.get_content_charset() or "utf-8"
    try:
        return payload.decode(charset, "replace")
    except LookupError:
        return payload.decode("utf-8", "replace")


_MARKED_TAGS = frozenset(("img", "font", "table", "form", "iframe", "a"))
_HIDDEN_TAGS = frozenset(("script", "style"))
MAX_HTML = 2_000_000  # characters of one HTML part parsed: ten times the text read (MAX_TEXT), whatever its markup
_ETREE: Any = None


def _etree() -> Any:
    """lxml's etree, imported on first use (tens of milliseconds a message without HTML need not pay). A process
    started without its site-packages (`python -I -S`, the delivery rule's quickest start) looks for it there
    (`_site_folders`), without running their `.pth` files as `site` would."""
    global _ETREE
    if _ETREE is None:
        try:
            from lxml import etree
        except ImportError:
            if sys.flags.no_site:
                sys.path.extend(folder for folder in _site_folders() if folder not in sys.path)
            try:
                from lxml import etree
            except ImportError as error:
                raise ImportError("the spam filter reads HTML mail with lxml, which is not installed: pip install "
                                  "'mcp-gateway[spam]'") from error
        _ETREE = etree
    return _ETREE


def _site_folders() -> list[str]:
    """The site-packages folders Python would have put on the path without -S: its virtual environment's (the
    folder holding `pyvenv.cfg` above its executable's, as `site` finds it), then the system's."""
    import site

    found = []
    environment = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
    if os.path.isfile(os.path.join(environment, "pyvenv.cfg")):
        version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
        found += [os.path.join(environment, lib, version, "site-packages") for lib in ("lib", "lib64")]
    found += site.getsitepackages()
    return [folder for folder in found if os.path.isdir(folder)]


class _HTMLText:
    """What lxml's HTML parser (libxml2's, in C) tells of an HTML part, gathered as it goes: the text between any
    two tags, comments or processing instructions as one piece, as lxml's tree would hold it (libxml2 may hand a
    run over in several calls: joined here, so a word is never cut; a declaration splits nothing), and the marks.
    Script and style contents are left out. No tree is built."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.marks: list[str] = []
        self.hidden = 0
        self.run: list[str] = []

    def _end_run(self) -> None:
        if self.run:
            if not self.hidden:
                self.pieces.append("".join(self.run))
            self.run = []

    def start(self, tag: str, attributes: Any) -> None:
        self._end_run()
        if tag in _HIDDEN_TAGS:
            self.marks.append(f"html:{tag}")
            self.hidden += 1
            return
        if tag in _MARKED_TAGS:
            self.marks.append(f"html:{tag}")
        if "src" in attributes:
            self.marks.append(f"html:{tag}:src")
        if "href" in attributes:
            self.marks.append(f"html:{tag}:href")

    def end(self, tag: str) -> None:
        self._end_run()
        if tag in _HIDDEN_TAGS and self.hidden:
            self.hidden -= 1

    def data(self, text: str) -> None:
        self.run.append(text)

    def comment(self, _text: str) -> None:
        self._end_run()

    def pi(self, _target: str, _data: str | None = None) -> None:
        self._end_run()

    def close(self) -> None:
        self._end_run()


def html_text(html: str) -> tuple[str, list[str]]:
    """The words of an HTML part (scripts and styles left out), and the tag names and attributes a filter learns
    from (images, fonts, forms, links...), by lxml's HTML parser, fed the part's first MAX_HTML characters: libxml2
    reads tag soup as browsers do and stays linear in time on hostile markup (nesting included), and no tree is
    kept. Markup it cannot take at all (a lone surrogate) is read as plain text, with no marks."""
    etree = _etree()
    found = _HTMLText()
    parser = etree.HTMLParser(target=found, no_network=True, remove_blank_text=False)
    try:
        parser.feed(html[:MAX_HTML])
        parser.close()
    except (ValueError, etree.LxmlError):
        return html[:MAX_HTML], []
    return " ".join(found.pieces), found.marks


def texts(message: Message) -> tuple[list[str], list[str]]:
    """The message's texts (HTML made text) and its structure tokens (content types, encodings, attachments)."""
    found, marks = [], []
    for part in message.walk():
        kind = part.get_content_type()
        marks.append(f"content-type:{kind}")
        charset = part.get_param("charset")
        if isinstance(charset, str):
            marks.append(f"charset:{charset.lower()[:20]}")
        encoding = str(part.get("content-transfer-encoding", "")).lower().strip()
        if encoding:
            marks.append(f"content-transfer-encoding:{encoding}")
        if part.is_multipart():
            continue
        filename = part.get_filename()
        if filename:
            marks.append(f"filename:{filename.rsplit('.', 1)[-1].lower()[:10]}")
        if kind == "text/plain":
            found.append(_payload_text(part))
        elif kind == "text/html":
            text, html_marks = html_text(_payload_text(part))
            found.append(text)
            marks.extend(html_marks)
    return found, marks


def words(text: str, prefix: str = "") -> list[str]:
    """Lower-cased words of 3 to 12 characters; longer ones as `skip:` tokens (their first letter and length).

    Each distinct word once (tokens are a set): the text is lower-cased once and its repeats skipped."""
    # A match starts with a letter or digit, so only its end can hold what is stripped (after a final `!`).
    found = {match.rstrip(".!-'") for match in set(WORD.findall(text.lower()))}
    out = [prefix + word for word in found if 2 < len(word) < 13]
    out.extend(f"{prefix}skip:{word[0]} {len(word) // 10 * 10}" for word in found if len(word) > 12)
    return out


def _urls(text: str) -> list[re.Match]:
    """`list(URL.finditer(text))`: a URL's `://` comes 3 to 5 characters after its start."""
    return _matches_at(URL, text, text, "://", (3, 4, 5))


def _outside(text: str, matches: list[re.Match]) -> str:
    """The text with each of these matches (in order, apart) replaced by a space: `URL.sub(" ", text)`."""
    if not matches:
        return text
    pieces, end = [], 0
    for match in matches:
        pieces.append(text[end:match.start()])
        end = match.end()
    pieces.append(text[end:])
    return " ".join(pieces)


def url_tokens(text: str) -> list[str]:
    return _url_tokens(_urls(text))


def _url_tokens(matches: list[re.Match]) -> list[str]:
    out = []
    for match in matches:
        host, rest = match.groups()
        host = host.lower().rsplit("@", 1)[-1]
        pieces = host.split(".")
        out.append(f"url:{host}")
        out.extend(f"url-part:{'.'.join(pieces[i:])}" for i in range(1, max(1, len(pieces) - 1)))
        out.extend(f"url-path:{piece.lower()}" for piece in re.split(r"[/?=&.#_-]+", rest) if 2 < len(piece) < 20)
    return out


def address_tokens(name: str, value: str) -> list[str]:
    out = []
    for local, domain in ADDRESS.findall(value.lower()):
        out.append(f"{name}:addr:{domain}")
        out.append(f"{name}:local:{local[:12]}")
        parts = domain.split(".")
        out.extend(f"{name}:domain:{'.'.join(parts[i:])}" for i in range(1, len(parts) - 1))
    display = value.split("<", 1)[0] if "<" in value else ""
    out.extend(f"{name}:name:{w}" for w in words(display))
    if not ADDRESS.search(value):
        out.append(f"{name}:none")
    return out


def tokens(raw: bytes) -> set[str]:
    """The set of tokens of one raw message (each counted once, as both filters do for training)."""
    return tokens_of(parse(raw))


def tokens_of(message: Message) -> set[str]:
    """The set of tokens of a message already parsed (from bytes without their leaking headers: `stripped`)."""
    found: list[str] = []
    first = _first_headers(message)
    fetched = message.policy.header_fetch_parse

    def text(name: str) -> str:  # header_text(message, name), from the one pass over the headers
        header = first.get(name)
        return "" if header is None else _decoded(fetched(*header))

    subject = text("subject")
    found.extend(words(subject, "subject:"))
    found.extend(f"subject-char:{c}" for c in set(subject) if c in "!$%*?" or (c.isupper() and subject.isupper()))
    for name in ADDRESS_HEADERS:
        found.extend(address_tokens(name, text(name)))
    found.extend(f"header:{k[:30]}" for k in first if not LEAKING.match(k))
    for name in ("x-mailer", "user-agent", "content-type", "list-id", "precedence", "mime-version"):
        if name in first:
            found.extend(words(text(name), f"{name}:"))
    message_id = text("message-id")
    found.append("message-id:" + (message_id.rpartition("@")[2].strip("> ").lower()[:40] if "@" in message_id
                                  else "none"))
    bodies, marks = texts(message)
    found.extend(marks)
    text = " ".join(bodies)[:MAX_TEXT]
    links = _urls(text)
    found.extend(_url_tokens(links))
    found.extend(words(_outside(text, links)))
    return set(found)


def stripped(raw: bytes) -> bytes:
    """The message without the headers that leak its label (for evaluation and the corpus's own copies)."""
    head, sep, body = raw.partition(b"\n\n")
    if not sep:
        head, sep, body = raw.partition(b"\r\n\r\n")
    kept, skipping = [], False
    for line in head.splitlines(keepends=True):
        if line[:1] in (b" ", b"\t"):
            if not skipping:
                kept.append(line)
            continue
        name = line.split(b":", 1)[0].decode("ascii", "replace")
        skipping = bool(LEAKING.match(name))
        if not skipping:
            kept.append(line)
    return b"".join(kept) + sep + body
