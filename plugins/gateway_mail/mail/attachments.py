"""The text of a message's attachments: PDF (pypdf), Excel (openpyxl), Word and OpenDocument (their
`word/document.xml` and `content.xml` read with lxml, as python-docx reads its XML), iCalendar invitations
(icalendar), `text/*` parts and attached messages.

Everything is read in memory from the part's bytes: nothing is written to disk, no other program is run (pypdf's
call-out to `jbig2dec` for images is switched off; text extraction never decodes images anyway). An attachment
comes from anyone, so each reading is bounded (`Bounds`): bytes, unzipped bytes, pages, characters and seconds.
The clock is looked at between pages, paragraphs, rows and events, and inside a PDF page at every operator of its
content stream; pypdf's own limits bound what one stream may inflate to. Whatever goes wrong reading one
attachment (a bomb, a password, a broken file, a bug in a reader) gives a sentence for it, never an exception.

The text returned here is not masked: `parse.masked` masks it (with the message's subject) before it is shown or
indexed.
"""

from __future__ import annotations

import io
import re
import time
import zipfile
from collections.abc import Iterator
from datetime import date, datetime, tzinfo
from email.message import Message
from typing import Any

from attrs import frozen


@frozen
class Bounds:
    """How much of one attachment is read."""

    bytes: int  # of the attachment's own (decoded) bytes
    unzipped: int  # of all the members of an office document's zip, as its directory declares them
    member: int  # of the one XML member read (document.xml, a sheet, content.xml)
    pages: int  # of a PDF
    characters: int  # of text gathered (a little more is read, so that the masks see a number across the cut)
    seconds: float  # per attachment
    stream: int  # bytes one PDF stream may inflate to (pypdf's own default is 75 MB)
    tokens: int  # of one PDF content stream parsed (pypdf's parse takes some 20 us a token on a loaded machine,
    # and the clock is looked at only between operators, once the stream is parsed)
    events: int = 20  # of an invitation


# read_attachment: what a person would read in one go.
READ = Bounds(bytes=16 * 1024 * 1024, unzipped=48 * 1024 * 1024, member=16 * 1024 * 1024, pages=50,
              characters=200_000, seconds=8.0, stream=8 * 1024 * 1024, tokens=100_000)
# The index: enough to find a message by what its invoice says, cheap enough for a first index of a big store.
INDEX = Bounds(bytes=4 * 1024 * 1024, unzipped=12 * 1024 * 1024, member=4 * 1024 * 1024, pages=8,
               characters=20_000, seconds=0.5, stream=4 * 1024 * 1024, tokens=30_000)
INDEXED_PER_MESSAGE = 4  # attachments of one message whose text is indexed (the first ones)
INDEXED_CHARACTERS = 50_000  # of all of a message's attachments' text together
_MARGIN = 1000  # characters past a bound still gathered, for the masks (parse._MASK_MARGIN)
MAX_ICS_BYTES = 1024 * 1024  # as the plan reads calendars: icalendar is parsed whole only below these
MAX_ICS_LINES = 4000

PDF, WORD, EXCEL, OPENDOCUMENT, CALENDAR, TEXT, HTML, MESSAGE = (
    "PDF", "Word document", "Excel workbook", "OpenDocument", "invitation (iCalendar)", "text", "HTML", "message")

_BY_TYPE = {
    "application/pdf": PDF, "application/x-pdf": PDF,
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": WORD,
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": EXCEL,
    "application/vnd.oasis.opendocument.text": OPENDOCUMENT,
    "application/vnd.oasis.opendocument.spreadsheet": OPENDOCUMENT,
    "application/vnd.oasis.opendocument.presentation": OPENDOCUMENT,
    "text/calendar": CALENDAR, "application/ics": CALENDAR, "text/html": HTML, "message/rfc822": MESSAGE,
}
_BY_SUFFIX = {
    "pdf": PDF, "docx": WORD, "xlsx": EXCEL, "odt": OPENDOCUMENT, "ods": OPENDOCUMENT, "odp": OPENDOCUMENT,
    "ics": CALENDAR, "eml": MESSAGE, "txt": TEXT, "csv": TEXT, "md": TEXT, "htm": HTML, "html": HTML,
}


# Types whose first bytes are not looked at for a PDF's mark (what is sniffed is decoded first).
_NEVER_SNIFFED = ("image/", "audio/", "video/", "application/pgp", "application/pkcs7", "application/x-pkcs7",
                  "multipart/")


class _Stop(Exception):
    """A bound reached while reading: what was gathered is kept, the sentence says which bound."""


@frozen
class Extracted:
    """What was read of one attachment: its kind ("" for a type not read), its text (not masked) and a sentence
    saying what was not read and why ("" when it was read whole)."""

    kind: str
    text: str = ""
    note: str = ""


def kind_of(name: str, content_type: str, head: bytes = b"") -> str:
    """The reader for an attachment, by its type, else its name's suffix, else its first bytes ("" for none)."""
    content_type = content_type.lower()
    if content_type in _BY_TYPE:
        return _BY_TYPE[content_type]
    suffix = name.rpartition(".")[2].lower() if "." in name else ""
    if suffix in _BY_SUFFIX:
        return _BY_SUFFIX[suffix]
    if content_type.startswith("text/"):
        return TEXT
    if b"%PDF-" in head[:1024]:
        return PDF
    return ""


def part_bytes(part: Message) -> bytes:
    """The decoded bytes of a (non-multipart) part; b"" when it has none."""
    try:
        payload = part.get_payload(decode=True)
    except Exception:  # noqa: BLE001 - a part that cannot be decoded has no bytes to read
        return b""
    return payload if isinstance(payload, bytes) else b""


def extract(part: Message, name: str, content_type: str, bounds: Bounds, zone: tzinfo | None = None,
            deadline: Any = None) -> Extracted:
    """The text of one attachment `part`, read within `bounds` (and before `deadline`, a gateway Deadline, when
    given); never raises."""
    started = time.monotonic()
    until = started + bounds.seconds
    if deadline is not None:
        until = min(until, time.monotonic() + max(0.0, deadline.left() - 0.5))
    clock = _Clock(until, bounds)
    if content_type.lower() == "message/rfc822":
        kind, data = MESSAGE, b""
    else:
        from gateway_mail.mail.parse import _size_of

        size = _size_of(part)  # worked out from its base64 text: a part too big is never decoded
        if size > bounds.bytes:
            kind = kind_of(name, content_type)
            return Extracted(kind, note=f"not read: it is {size:,} bytes, over the {bounds.bytes:,} read of an "
                                        "attachment") if kind else Extracted("")
        kind = kind_of(name, content_type)
        if not kind and content_type.lower().startswith(_NEVER_SNIFFED):
            return Extracted("")  # an image, a signature: not decoded at all
        data = part_bytes(part)
        kind = kind or kind_of(name, content_type, data[:1024])
    if not kind:
        return Extracted("")
    reader = {PDF: _pdf, WORD: _word, EXCEL: _excel, OPENDOCUMENT: _opendocument, CALENDAR: _calendar,
              TEXT: _text, HTML: _text, MESSAGE: _message}[kind]
    try:
        text = reader(part if kind in (TEXT, HTML, MESSAGE) else data, clock, zone)
        return Extracted(kind, text, clock.note)
    except _Stop as stop:
        return Extracted(kind, clock.text(), str(stop))
    except _Refused as refused:
        return Extracted(kind, "", str(refused))
    except ImportError as missing:
        return Extracted(kind, "", f"not read: its reader ({missing.name}) is not installed; pip install "
                                   "'mcp-gateway[mail]' adds it")
    except RecursionError:
        return Extracted(kind, clock.text(), "could not be read: it is nested too deep")
    except MemoryError:
        return Extracted(kind, "", "could not be read: it needs more memory than an attachment is given")
    except Exception as error:  # noqa: BLE001 - a stranger's file fails its own reading alone
        return Extracted(kind, clock.text(), f"could not be read as {_article(kind)} ({type(error).__name__})")


class _Refused(Exception):
    """An attachment not read at all (encrypted, too big once unzipped): the sentence says why."""


def _article(kind: str) -> str:
    return ("an " if kind[0].lower() in "aeiou" else "a ") + kind


class _Clock:
    """The text gathered so far and the bounds it is gathered under: `add` keeps a piece and stops the reading
    (with `_Stop`) past the characters or the time."""

    def __init__(self, until: float, bounds: Bounds) -> None:
        self.until, self.bounds = until, bounds
        self.pieces: list[str] = []
        self.size = 0
        self.note = ""

    def tick(self, *_: Any) -> None:
        if time.monotonic() > self.until:
            raise _Stop(f"cut: the time to read it ran out ({self.bounds.seconds:g} s an attachment, or what was "
                        "left of the call's); what was read by then is given")

    def add(self, piece: str) -> None:
        self.pieces.append(piece)
        self.size += len(piece)
        if self.size > self.bounds.characters + _MARGIN:
            raise _Stop(f"cut: only its first {self.bounds.characters:,} characters are given")
        self.tick()

    def text(self) -> str:
        return "\n".join(self.pieces)


# -- PDF -------------------------------------------------------------------------------------------------------


def _pdf(data: bytes, clock: _Clock, _zone: Any) -> str:
    import pypdf
    from pypdf.errors import DependencyError, FileNotDecryptedError, LimitReachedError

    limits = {name: clock.bounds.stream for name in (
        "zlib_maximum_output_length", "lzw_maximum_output_length", "run_length_maximum_output_length",
        "array_based_stream_maximum_output_length", "jbig2_maximum_output_length", "brotli_maximum_output_length",
        "image_maximum_buffer_size", "flate_maximum_buffer_size") if hasattr(pypdf.Configuration, name)}
    skipped: list[int] = []
    with pypdf.apply_configuration(jbig2dec_binary=None, stream_parsing_work_maximum_count=clock.bounds.tokens,
                                   **limits):
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:  # an empty user password only restricts printing or copying: its text is there to read
                opened = reader.decrypt("")
            except DependencyError:
                raise _Refused("not read: this PDF is encrypted with AES, which needs the cryptography package "
                               "(pip install cryptography)") from None
            except (FileNotDecryptedError, NotImplementedError):
                opened = 0
            if not opened:
                raise _Refused("not read: this PDF is encrypted with a password (only its name, type and size are "
                               "given; the person opens it in their own reader)")
        total = len(reader.pages)
        try:
            for number in range(min(total, clock.bounds.pages)):
                clock.tick()
                try:
                    text = reader.pages[number].extract_text(visitor_operand_before=clock.tick)
                except LimitReachedError:
                    skipped.append(number + 1)
                    continue
                clock.add(f"[page {number + 1} of {total}]\n{text.strip()}")
        finally:
            notes = [f"cut: only its first {clock.bounds.pages} pages of {total} are given"] \
                if total > clock.bounds.pages else []
            if skipped:
                notes.append(f"page{'s' if len(skipped) > 1 else ''} {', '.join(map(str, skipped[:20]))} not read: "
                             f"past what one page may inflate to or hold ({clock.bounds.stream // (1024 * 1024)} MB, "
                             f"{clock.bounds.tokens:,} tokens; a decompression bomb, or a drawing rather than text)")
            clock.note = "; ".join(notes)
    return clock.text()


# -- office documents ------------------------------------------------------------------------------------------


def _checked_zip(data: bytes, clock: _Clock) -> zipfile.ZipFile:
    """The document's zip, every member inflated once here a chunk at a time (never more than it declares:
    zipfile stops there, and a member that inflates past it fails its CRC), refused past the bounds: the readers
    then read members whose size is known. A bomb costs the bytes it declares, never what it would inflate to."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    members = archive.infolist()
    if len(members) > 10_000:
        raise _Refused(f"not read: its zip holds {len(members):,} files (a document holds a few dozen)")
    declared = sum(m.file_size for m in members)
    if declared > clock.bounds.unzipped:
        raise _Refused(f"not read: it unzips to {declared:,} bytes, over the {clock.bounds.unzipped:,} an "
                       f"attachment may unzip to (a decompression bomb, or a document too big to read here)")
    for member in members:
        try:
            with archive.open(member) as inflating:
                while inflating.read(1024 * 1024):
                    clock.tick()
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError) as error:
            raise _Refused(f"not read: its zip is damaged or lies about its sizes ({member.filename}: "
                           f"{type(error).__name__}; a decompression bomb does that)") from None
    return archive


def _member(archive: zipfile.ZipFile, name: str, clock: _Clock) -> bytes:
    info = archive.getinfo(name)
    if info.file_size > clock.bounds.member:
        raise _Refused(f"not read: its {name} unzips to {info.file_size:,} bytes, over the {clock.bounds.member:,} "
                       "read of one part")
    return archive.read(info)


_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_W_TEXT = {f"{{{_W}}}t": None, f"{{{_W}}}tab": "\t", f"{{{_W}}}br": "\n", f"{{{_W}}}cr": "\n",
           f"{{{_W}}}noBreakHyphen": "-"}


def _hardened() -> Any:
    """lxml's parser as python-docx sets it up for the same files: no entities resolved, no DTD, no network, no
    huge trees."""
    import lxml.etree

    return lxml.etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


def _word(data: bytes, clock: _Clock, _zone: Any) -> str:
    """`word/document.xml` read as python-docx reads a paragraph's text (its runs' `w:t`, tabs and breaks; deleted
    text and field codes are not text), each paragraph a line and a table row's cells on one line. python-docx
    itself loads every part of the package (styles, numbering, themes) first: some 50 ms a document here, ten
    times the text's own reading, which the index pays for every one."""
    import lxml.etree

    archive = _checked_zip(data, clock)
    if "word/document.xml" not in archive.namelist():
        raise _Refused("could not be read as a Word document: it has no word/document.xml")
    root = lxml.etree.fromstring(_member(archive, "word/document.xml", clock), _hardened())
    paragraphs: list[list[str]] = []  # the paragraphs being read, innermost last (a text box's are nested)
    rows: list[list[str]] = []
    for event, element in lxml.etree.iterwalk(root, events=("start", "end")):
        tag = element.tag
        if tag == f"{{{_W}}}p":
            if event == "start":
                paragraphs.append([])
                continue
            line = "".join(paragraphs.pop())
            if rows:
                rows[-1].append(line.strip())
            elif line.strip():
                clock.add(line.rstrip())
        elif tag == f"{{{_W}}}tr":
            if event == "start":
                rows.append([])
            else:
                cells = [c for c in rows.pop() if c]
                if cells:
                    clock.add(" ".join(cells))
        elif event == "end" and tag in _W_TEXT and paragraphs:
            paragraphs[-1].append(element.text or "" if _W_TEXT[tag] is None else _W_TEXT[tag])
    return clock.text()


def _excel(data: bytes, clock: _Clock, _zone: Any) -> str:
    import openpyxl

    archive = _checked_zip(data, clock)
    for name in archive.namelist():
        if name.startswith("xl/") and name.endswith(".xml"):
            _member(archive, name, clock)
    workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    try:
        for sheet in workbook.worksheets:
            clock.add(f"[sheet {sheet.title}]")
            if hasattr(sheet, "reset_dimensions"):  # a declared A1:XFD1048576 would pad every row to 16,384 cells
                sheet.reset_dimensions()
            for row in sheet.iter_rows(values_only=True):
                clock.tick()
                cells = [_cell(value) for value in row if value is not None]
                if cells:
                    clock.add(" ".join(cells))
    finally:
        workbook.close()
    return clock.text()


def _cell(value: Any) -> str:
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M") if (value.hour, value.minute) != (0, 0) else value.strftime("%Y-%m-%d")
    return " ".join(str(value).split())


_ODF_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_ODF_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_LINES = {f"{{{_ODF_TEXT}}}p", f"{{{_ODF_TEXT}}}h"}


def _opendocument(data: bytes, clock: _Clock, _zone: Any) -> str:
    """Text of `content.xml`: each paragraph and heading a line, a table row's cells on one line (odfpy, the
    OpenDocument library, has had no release since 2020 and builds a whole DOM of its own first)."""
    import lxml.etree

    archive = _checked_zip(data, clock)
    if "content.xml" not in archive.namelist():
        raise _Refused("could not be read as an OpenDocument: it has no content.xml")
    root = lxml.etree.fromstring(_member(archive, "content.xml", clock), _hardened())
    row: list[str] | None = None
    for event, element in lxml.etree.iterwalk(root, events=("start", "end")):
        if event == "start" and element.tag == f"{{{_ODF_TABLE}}}table-row":
            row = []
        elif event == "end" and element.tag in _LINES:
            line = " ".join("".join(element.itertext()).split())
            if row is not None:
                row.append(line)
            elif line:
                clock.add(line)
        elif event == "end" and element.tag == f"{{{_ODF_TABLE}}}table-row":
            if row and any(row):
                clock.add(" ".join(c for c in row if c))
            row = None
    return clock.text()


# -- invitations -----------------------------------------------------------------------------------------------


def _calendar(data: bytes, clock: _Clock, zone: tzinfo | None) -> str:
    import icalendar

    if len(data) > MAX_ICS_BYTES or data.count(b"\n") > MAX_ICS_LINES:
        raise _Refused(f"not read: an invitation of more than {MAX_ICS_BYTES // 1024} KiB or {MAX_ICS_LINES:,} "
                       "lines (a calendar's export, not an invitation)")
    calendar = icalendar.Calendar.from_ical(data)
    method = str(calendar.get("METHOD", "")).upper()
    if method:
        clock.add(f"Method: {_METHODS.get(method, method)}")
    events = [c for c in calendar.walk() if c.name in ("VEVENT", "VTODO")]
    for component in events[:clock.bounds.events]:
        clock.add("")
        clock.add(f"{'Task' if component.name == 'VTODO' else 'Event'}: {_one(component.get('SUMMARY'))}")
        organizer = component.get("ORGANIZER")
        if organizer is not None:
            clock.add(f"Organizer: {_person(organizer)}")
        for label, key in (("Starts", "DTSTART"), ("Ends", "DTEND"), ("Due", "DUE")):
            if component.get(key) is not None:
                clock.add(f"{label}: {_when(component.decoded(key), zone)}")
        if component.get("RRULE") is not None:
            clock.add(f"Repeats: {component['RRULE'].to_ical().decode('utf-8', 'replace')}")
        for label, key in (("Location", "LOCATION"), ("Status", "STATUS")):
            if component.get(key):
                clock.add(f"{label}: {_one(component.get(key))}")
        attendees = component.get("ATTENDEE")
        if attendees is not None:
            people = attendees if isinstance(attendees, list) else [attendees]
            clock.add(f"Attendees: {', '.join(_person(p) for p in people[:50])}"
                      + (f" and {len(people) - 50} more" if len(people) > 50 else ""))
        if component.get("DESCRIPTION"):
            clock.add(f"Description:\n{component.get('DESCRIPTION')}")
    if len(events) > clock.bounds.events:
        clock.note = f"cut: only its first {clock.bounds.events} events of {len(events)} are given"
    return clock.text().strip("\n")


_METHODS = {"REQUEST": "an invitation (REQUEST)", "CANCEL": "a cancellation (CANCEL)", "REPLY": "a reply (REPLY)",
            "PUBLISH": "published (PUBLISH)", "COUNTER": "a counter-proposal (COUNTER)"}


def _one(value: Any) -> str:
    return " ".join(str(value or "").split())


def _person(value: Any) -> str:
    address = re.sub(r"^mailto:", "", str(value), flags=re.IGNORECASE)
    name = value.params.get("CN") if hasattr(value, "params") else None
    return f"{_one(name)} <{address}>" if name else address


def _when(value: Any, zone: tzinfo | None) -> str:
    """A time in the person's zone, then as the organizer wrote it when that differs; a date as it is."""
    if isinstance(value, datetime):
        written = value.strftime("%Y-%m-%d %H:%M") + (f" {_zone_name(value)}" if value.tzinfo else " (floating)")
        if value.tzinfo is None or zone is None:
            return written
        mine = value.astimezone(zone)
        shown = mine.strftime("%Y-%m-%d %H:%M ") + (mine.tzname() or "")
        return shown if mine.utcoffset() == value.utcoffset() else f"{shown} (written as {written})"
    if isinstance(value, date):
        return value.isoformat() + " (all day)"
    return _one(value)


def _zone_name(value: datetime) -> str:
    key = getattr(value.tzinfo, "key", None) or getattr(value.tzinfo, "zone", None)
    return str(key) if key else (value.tzname() or "")


# -- text and attached messages ----------------------------------------------------------------------------------


def _text(part: Message, clock: _Clock, _zone: Any) -> str:
    from gateway_mail.mail.parse import _content, html_to_text

    data = part_bytes(part)
    if len(data) > clock.bounds.characters * 4 + _MARGIN:  # a text is read up to what could be given
        part = _truncated(part, data[:clock.bounds.characters * 4 + _MARGIN])
    content = _content(part)
    content = content if isinstance(content, str) else ""
    if part.get_content_type() == "text/html" or kind_of(part.get_filename() or "", "") == HTML:
        content = html_to_text(content)
    clock.add(content[:clock.bounds.characters + _MARGIN])
    return clock.text()


def _truncated(part: Message, data: bytes) -> Message:
    from email.message import EmailMessage

    from gateway_mail.mail.parse import POLICY

    copy = EmailMessage(policy=POLICY)
    copy["Content-Type"] = part.get("content-type", "text/plain")
    copy.set_payload(data)
    return copy


def _message(part: Message, clock: _Clock, _zone: Any) -> str:
    """An attached message: its envelope one field per line, its attachments by name, then its text."""
    from gateway_mail.mail.parse import _decoded, _text_of

    payload = part.get_payload()
    inner = payload[0] if isinstance(payload, list) and payload else None
    if inner is None:  # an .eml sent as application/octet-stream: parsed as a message of its own
        from gateway_mail.mail.parse import parse

        parsed = parse(part_bytes(part)[:clock.bounds.bytes])
        sender = f"{parsed.sender_name} <{parsed.sender}>" if parsed.sender_name else parsed.sender
        for label, value in (("From", sender), ("To", ", ".join(parsed.to)), ("Subject", parsed.subject)):
            if value:
                clock.add(f"{label}: {value}")
        for attached in parsed.attachments:
            clock.add(f"Attachment: {attached.name}")
        clock.add("")
        clock.add(parsed.text[:clock.bounds.characters + _MARGIN])
        return clock.text()
    for label in ("From", "To", "Date", "Subject"):
        value = inner.get(label)
        if value:
            clock.add(f"{label}: {_decoded(str(value))}")
    for name in _names(inner):
        clock.add(f"Attachment: {name}")
    clock.add("")
    clock.add(_text_of(inner)[:clock.bounds.characters + _MARGIN])
    return clock.text()


def _names(message: Message) -> Iterator[str]:
    if message.is_multipart() and hasattr(message, "iter_attachments"):
        for attached in message.iter_attachments():
            yield attached.get_filename() or "(no name)"


# -- what the index holds ----------------------------------------------------------------------------------------

INDEX_SECONDS_PER_MESSAGE = 1.5  # all of one message's attachments together, on top of each one's own bound


def masked_text(parsed: Any, text: str, limit: int) -> tuple[str, bool]:
    """An attachment's text masked as a message's text is (with the message's subject, as one unit: a code named
    in the subject is hidden in the attachment too), then cut at `limit`; and whether it was cut."""
    import attrs

    from gateway_mail.mail.parse import masked

    shown = masked(attrs.evolve(parsed, text=text), limit)
    return shown.text, shown.cut


def indexed(parsed: Any) -> str:
    """The masked text of a message's first attachments (INDEXED_PER_MESSAGE), each read within `INDEX`, all of
    them within INDEXED_CHARACTERS and INDEX_SECONDS_PER_MESSAGE: what the index holds after the message's text,
    so that a search or a subject route finds a message by what its invoice says. "" for an encrypted message."""
    if parsed.encrypted or not parsed.attachments:
        return ""
    until = time.monotonic() + INDEX_SECONDS_PER_MESSAGE
    pieces: list[str] = []
    left = INDEXED_CHARACTERS
    for attachment in parsed.attachments[:INDEXED_PER_MESSAGE]:
        if attachment.part is None or time.monotonic() > until or left <= 0:
            break
        found = extract(attachment.part, attachment.name, attachment.type, INDEX)
        if found.text.strip():
            text, _cut = masked_text(parsed, found.text, min(left, INDEX.characters))
            pieces.append(text)
            left -= len(text)
    return "\n\n".join(pieces)
