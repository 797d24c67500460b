"""Invented mail (reserved domains, RFC 2606) written into Maildirs: for the tests, the demo and the benchmark."""

from __future__ import annotations

import email.utils
import itertools
from email.message import EmailMessage
from pathlib import Path

_counter = itertools.count(1)


def make_folder(path: Path) -> Path:
    for sub in ("cur", "new", "tmp"):
        (path / sub).mkdir(parents=True, exist_ok=True)
    return path


def message(
    *, sender: str = "Ada Example <ada@example.org>", to: str = "Pat Example <pat@example.org>",
    subject: str = "Hello", body: str = "Hello there.", message_id: str | None = None, date: float | None = None,
    in_reply_to: str | None = None, references: list[str] | None = None, html: str | None = None,
    headers: dict[str, str] | None = None, attachment: tuple[str, bytes] | None = None, cc: str | None = None,
) -> EmailMessage:
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = to
    if cc:
        mail["Cc"] = cc
    mail["Subject"] = subject
    mail["Date"] = email.utils.formatdate(date, localtime=False)
    mail["Message-ID"] = f"<{message_id or f'm{next(_counter)}@example.org'}>"
    if in_reply_to:
        mail["In-Reply-To"] = f"<{in_reply_to}>"
    if references:
        mail["References"] = " ".join(f"<{r}>" for r in references)
    for name, value in (headers or {}).items():
        mail[name] = value
    mail.set_content(body)
    if html is not None:
        mail.add_alternative(html, subtype="html")
        if not body:
            mail.get_body(("plain",)).set_content("")
    if attachment:
        mail.add_attachment(attachment[1], maintype="application", subtype="pdf", filename=attachment[0])
    return mail


def deliver(folder: Path, mail: EmailMessage | bytes, *, flags: str | None = "S", name: str | None = None) -> Path:
    """Put a message in `folder`: into cur/ with `flags`, or into new/ when flags is None."""
    make_folder(folder)
    data = mail if isinstance(mail, bytes) else bytes(mail)
    unique = name or f"1700000000.M{next(_counter)}P1.example"
    path = folder / "new" / unique if flags is None else folder / "cur" / f"{unique}:2,{flags}"
    path.write_bytes(data)
    return path


OWN_SERVER = "mx.example.org"
IBAN = "FR14 2004 1010 0505 0001 3M02 606"  # a valid IBAN (mod 97), the standard example
CARD = "4111 1111 1111 1111"  # passes Luhn's check
CODE_BODY = (
    "Hello Pat,\n\nYour verification code is 482 913.\nOr type 482-913 on the page, or 48 29 13.\n"
    "Sign in here: https://accounts.example.com/verify?token=abcdef0123456789\n"
    + "\nThis part is long.\n" * 40
    + "\nRepeated far down: 482913\n\n> On Monday you wrote:\n> your code is 482913\n"
)


def authenticated(domain: str, verdict: str = "pass") -> dict[str, str]:
    return {"Authentication-Results": f"{OWN_SERVER}; spf={verdict} smtp.mailfrom={domain}; "
                                      f"dkim={verdict} header.d={domain}; dmarc={verdict} header.from={domain}"}


def world(root: Path, canary: str, now: float) -> dict[str, str]:
    """An account's Maildir in mbsync's layout, with one message of each kind the rules speak of.

    Returns the Message-IDs by role. The closed project (`vault`, senders `@vault.example.com`) holds `canary`
    in a message and in a reply of its conversation from an address of no project.
    """
    inbox, archive, drafts = root / "INBOX", root / "Archive" / "2026", root / "Drafts"
    make_folder(drafts)
    ids = {}

    def put(role: str, folder: Path, flags: str | None = "S", **fields) -> None:
        ids[role] = f"{role}@example.org"
        deliver(folder, message(message_id=ids[role], **fields), flags=flags)

    put("plumber", inbox, flags=None, sender="Joe Plumber <joe@plumbing.example.com>",
        subject="Invoice from the plumber", date=now - 3600, headers=authenticated("plumbing.example.com"),
        body=f"Please pay invoice 2026-118 to {IBAN}. Card on file {CARD}. Call 01 23 45 67 89.",
        attachment=("invoice.pdf", b"%PDF-1.4 invented"))
    put("code", inbox, sender="Bank <noreply@bank.example.com>", subject="482913 is your code",
        date=now - 600, body=CODE_BODY, headers=authenticated("bank.example.com"))
    put("table", inbox, sender="Shop <hello@shop.example.com>", subject="Your one-time code", date=now - 500,
        body="", html="<p>Your one-time code:</p><table><tr><td>7</td><td>3</td><td>9</td><td>1</td><td>5</td>"
                      "<td>6</td></tr></table><p>Order 55512 ships soon.</p>",
        headers=authenticated("shop.example.com"))
    put("password", inbox, sender="Admin <admin@host.example.net>", subject="Your new account", date=now - 400,
        body="Your code is 112233.\n\nYour temporary password is Xy7!pq9Zk\n")
    put("friend", inbox, sender="Ada Example <ada@example.net>", subject="Tuesday?", date=now - 7200,
        body="Does Tuesday work for you?", headers=authenticated("example.net"))
    put("forged", inbox, sender="Client CEO <ceo@client.example.com>", subject="Urgent wire", date=now - 300,
        body="Wire the money today. plumtree",
        headers={"Authentication-Results": f"{OWN_SERVER}; spf=fail smtp.mailfrom=evil.example.net; "
                                           "dmarc=fail header.from=client.example.com"})
    put("claimed", inbox, sender="Client CEO <ceo@client.example.com>", subject="Other words", date=now - 290,
        body="A claim of a pass from elsewhere. plumtree",
        headers={"Authentication-Results": "relay.example.net; dmarc=pass header.from=client.example.com"})
    put("vault", inbox, sender="Keeper <keeper@vault.example.com>", subject="Vault matters", date=now - 200,
        body=f"The word is {canary}. plumtree", headers=authenticated("vault.example.com"))
    put("vault_reply", inbox, sender="Someone <someone@example.net>", subject="Re: Vault matters",
        date=now - 100, body=f"Answering about {canary}. plumtree", in_reply_to=ids["vault"],
        references=[ids["vault"]])
    put("blocked", inbox, sender="Spam <win@spam.example.net>", subject="You won", date=now - 50,
        body="plumtree prizes")
    encrypted = (
        b"From: Secret <secret@example.org>\r\nTo: pat@example.org\r\nSubject: Sealed\r\n"
        b"Message-ID: <encrypted@example.org>\r\nDate: Mon, 30 Nov 2026 09:00:00 +0000\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: multipart/encrypted; protocol="application/pgp-encrypted"; boundary="b"\r\n\r\n'
        b"--b\r\nContent-Type: application/pgp-encrypted\r\n\r\nVersion: 1\r\n--b\r\n"
        b"Content-Type: application/octet-stream\r\n\r\n-----BEGIN PGP MESSAGE-----\r\nplumtree\r\n"
        b"-----END PGP MESSAGE-----\r\n--b--\r\n"
    )
    deliver(inbox, encrypted, flags="S")
    ids["encrypted"] = "encrypted@example.org"
    put("old", archive, sender="Ada Example <ada@example.net>", subject="Last year", date=now - 86400 * 40,
        body="An old plumtree letter.", headers=authenticated("example.net"))
    return ids


PROJECTS = [
    {"id": "vault", "name": "Vault", "ai": False, "senders": ["@vault.example.com"]},
    {"id": "client", "name": "Client", "ai": False, "senders": ["@client.example.com"]},
    {"id": "plumbing", "name": "Plumbing", "ai": True, "senders": ["@plumbing.example.com"]},
]


def config(root: Path, **mail: object) -> dict:
    account = {"name": "personal", "maildir": str(root), "addresses": ["pat@example.org"],
               "authserv_id": OWN_SERVER, "drafts": "Drafts"}
    return {"gateway": {"plugins": ["mail"]},
            "plugins": {"mail": {"accounts": [account], "blocked": ["@spam.example.net"], **mail}}}


# -- attachments (made with the formats' own libraries: reportlab, pypdf, python-docx, test dependencies) ---------


def pdf(pages: list[str]) -> bytes:
    """A real PDF (reportlab), one page per text, each line of a text a line of the page."""
    import io

    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    drawing = canvas.Canvas(out, invariant=1)
    for text in pages:
        y = 800
        for line in text.splitlines():
            drawing.drawString(60, y, line)
            y -= 16
        drawing.showPage()
    drawing.save()
    return out.getvalue()


def encrypted_pdf(text: str, password: str = "s3cret-Example") -> bytes:
    """A PDF whose text is locked by a user password (pypdf's writer, AES-256)."""
    import io

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf([text]))))
    writer.encrypt(user_password=password, owner_password=password, algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def pdf_bomb(inflated: int = 64 * 1024 * 1024) -> bytes:
    """A one-page PDF (reportlab's, with its font) whose content stream is `inflated` bytes of text operators
    deflated to a few hundred KB: a real FlateDecode stream put in by pypdf's writer."""
    import io
    import zlib

    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import EncodedStreamObject, NameObject

    compressor = zlib.compressobj(9)
    block = b"BT /F1 12 Tf 60 800 Td (bomb words) Tj ET\n" * 16384
    packed = b"".join(compressor.compress(block) for _ in range(inflated // len(block))) + compressor.flush()
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf(["cover"]))))
    stream = EncodedStreamObject()
    stream._data = packed
    stream[NameObject("/Filter")] = NameObject("/FlateDecode")
    writer.pages[0][NameObject("/Contents")] = writer._add_object(stream)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx(paragraphs: list[str], table: list[list[str]] | None = None) -> bytes:
    """A real Word document (python-docx)."""
    import io

    import docx as python_docx

    document = python_docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def zip_bomb(declared_honestly: bool = True, inflated: int = 100 * 1024 * 1024) -> bytes:
    """A .docx-shaped zip whose word/document.xml inflates to `inflated` bytes of spaces. When not
    `declared_honestly`, its headers claim 1,000 bytes (the lie a bomb tells a reader that trusts them)."""
    import io
    import struct
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats'
                                                '.org/package/2006/content-types"/>')
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            block = b" " * (1024 * 1024)
            for _ in range(inflated // len(block)):
                member.write(block)
    data = bytearray(out.getvalue())
    if not declared_honestly:
        name = b"word/document.xml"
        for signature, size_at in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
            at = data.find(signature + b"")
            while at != -1:
                name_length = struct.unpack_from("<H", data, at + (26 if signature == b"PK\x03\x04" else 28))[0]
                start = at + (30 if signature == b"PK\x03\x04" else 46)
                if bytes(data[start:start + name_length]) == name:
                    struct.pack_into("<I", data, at + size_at, 1000)
                at = data.find(signature, at + 4)
    return bytes(data)


def invitation(summary: str, start: str, end: str, zone: str = "Europe/London",
               organizer: str = "mailto:ada@example.org") -> bytes:
    """An iCalendar invitation (METHOD:REQUEST) written by icalendar, times in `zone` (`YYYY-MM-DD HH:MM`)."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    import icalendar

    calendar = icalendar.Calendar()
    calendar.add("prodid", "-//Example//Invitations//EN")
    calendar.add("version", "2.0")
    calendar.add("method", "REQUEST")
    event = icalendar.Event()
    event.add("uid", f"{summary.replace(' ', '-')}@example.org")
    event.add("summary", summary)
    event.add("dtstart", datetime.strptime(start, "%Y-%m-%d %H:%M").replace(tzinfo=ZoneInfo(zone)))
    event.add("dtend", datetime.strptime(end, "%Y-%m-%d %H:%M").replace(tzinfo=ZoneInfo(zone)))
    event.add("dtstamp", datetime(2026, 11, 30, 9, 0, tzinfo=ZoneInfo("UTC")))
    organizer_value = icalendar.vCalAddress(organizer)
    organizer_value.params["cn"] = icalendar.vText("Ada Example")
    event.add("organizer", organizer_value)
    event.add("attendee", icalendar.vCalAddress("mailto:pat@example.org"))
    event.add("location", "Room 4, Example House")
    calendar.add_component(event)
    return calendar.to_ical()


def with_attachments(attached: list[tuple[str, str, bytes]], **fields: object) -> EmailMessage:
    """A message (as `message`) carrying each (name, MIME type, bytes) as an attachment."""
    mail = message(**fields)  # type: ignore[arg-type]
    for name, kind, data in attached:
        maintype, _, subtype = kind.partition("/")
        if maintype == "text":
            mail.add_attachment(data.decode("utf-8"), subtype=subtype, filename=name)
        else:
            mail.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return mail
