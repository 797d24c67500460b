"""Hostile files for the time plugin's tests: broken and malicious PDFs, and timewarrior lines that are not lines."""

from __future__ import annotations

import io
import os
import zlib
from pathlib import Path

from gateway_time import sample

LAUGHS = ('<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
          + "".join(f' <!ENTITY lol{n + 1} "{("&lol" + (str(n) if n else "") + ";") * 10}">\n' for n in range(9))
          + ']>\n<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100">'
          "&lol9;</rsm:CrossIndustryInvoice>\n").encode()

MALFORMED = [
    "inc garbage\n",
    "exc 20261102T090000Z - 20261102T100000Z # not an interval\n",
    "inc 20261102T090000Z - 20261102T080000Z # ends before it starts\n",
    'inc 20261102T090000Z - 20261102T100000Z # "never closed\n',
    "inc 20261102T090000Z - 20261102T100000Z tags without their mark\n",
    "\x00\xff binary\n",
]


def _with_attachment(data: bytes) -> tuple[object, object]:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(595, 842)
    writer.add_attachment("factur-x.xml", data)
    names = writer._root_object["/Names"]["/EmbeddedFiles"]["/Names"]  # noqa: SLF001 (pypdf's writer tree)
    return writer, names[1].get_object()["/EF"]["/F"].get_object()


def _written(writer: object) -> bytes:
    buffer = io.BytesIO()
    writer.write(buffer)  # type: ignore[attr-defined]
    return buffer.getvalue()


def xml_bomb_pdf() -> bytes:
    """A PDF whose factur-x.xml is a billion laughs."""
    writer, _stream = _with_attachment(LAUGHS)
    return _written(writer)


def pdf_bomb(megabytes: int = 100) -> bytes:
    """A PDF whose factur-x.xml stream inflates to `megabytes` MiB from a few hundred KiB."""
    from pypdf.generic import NameObject

    writer, stream = _with_attachment(b"x")
    packer = zlib.compressobj(1)
    chunk = b" " * (1 << 20)
    stream._data = b"".join(packer.compress(chunk) for _ in range(megabytes)) + packer.flush()  # noqa: SLF001
    stream[NameObject("/Filter")] = NameObject("/FlateDecode")
    return _written(writer)


def write_hostile(folder: Path, good: Path) -> dict[str, Path]:
    """Beside a good invoice: a corrupt PDF, a cut one, one without XML, a PDF bomb, an XML bomb, a file that
    never ends (a named pipe nobody writes to); each named by what it is."""
    folder.mkdir(parents=True, exist_ok=True)
    made = {
        "corrupt": folder / "corrupt.pdf",
        "cut": folder / "cut.pdf",
        "no_xml": folder / "plain.pdf",
        "pdf_bomb": folder / "bomb.pdf",
        "xml_bomb": folder / "laughs.pdf",
    }
    made["corrupt"].write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40)
    whole = good.read_bytes()
    made["cut"].write_bytes(whole[: len(whole) // 3])
    made["no_xml"].write_bytes(sample.blank_pdf())
    made["pdf_bomb"].write_bytes(pdf_bomb())
    made["xml_bomb"].write_bytes(xml_bomb_pdf())
    endless = folder / "zz" / "endless.pdf"
    endless.parent.mkdir(exist_ok=True)
    os.mkfifo(endless)
    made["endless"] = endless
    return made
