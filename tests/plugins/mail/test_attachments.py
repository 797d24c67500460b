"""read_attachment and the attachments' text in the index, through the gateway's own call path, on attachments made
by the formats' own libraries (reportlab, pypdf, python-docx, openpyxl, icalendar)."""

from __future__ import annotations

import io
import time
from pathlib import Path

import gateway_mail
import pytest
from gateway_mail.mail import attachments, sample
from gateway_mail.mail.parse import parse

from gateway.testing import make_gateway

PDF_TYPE = "application/pdf"
DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
CARD = "4000 0566 5566 5556"  # a Luhn-valid test number


def _xlsx() -> bytes:
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Costs"
    sheet.append(["Item", "Amount"])
    sheet.append(["marmalade jars", 42])
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def _odt() -> bytes:
    import zipfile

    content = ('<?xml version="1.0" encoding="UTF-8"?><office:document-content '
               'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
               'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text>'
               '<text:h>Minutes</text:h><text:p>The <text:span>gooseberry</text:span> plan passed.</text:p>'
               '</office:text></office:body></office:document-content>')
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        archive.writestr("content.xml", content)
    return out.getvalue()


@pytest.fixture
def world(gateway_home: Path):
    root = gateway_home / "Mail" / "personal"
    ids = sample.world(root, "attachcanary", time.time())
    inbox = root / "INBOX"
    now = time.time()
    files = [
        ("invoice-77.pdf", PDF_TYPE, sample.pdf(["Invoice 77\nTotal due: 120 EUR for quinceberry pruning",
                                                  "Terms: thirty days", f"Paid by card {CARD}"])),
        ("letter.docx", DOCX_TYPE, sample.docx(["Dear Pat,", "The tamarillo harvest is in."],
                                               [["Crate", "Weight"], ["A", "12 kg"]])),
        ("costs.xlsx", XLSX_TYPE, _xlsx()),
        ("minutes.odt", "application/vnd.oasis.opendocument.text", _odt()),
        ("invite.ics", "text/calendar", sample.invitation("Budget review", "2026-12-03 14:00", "2026-12-03 15:00")),
        ("notes.txt", "text/plain", b"A plain note about persimmons.\n"),
        ("photo.jpg", "image/jpeg", b"\xff\xd8\xff\xe0 not really a photo"),
        ("locked.pdf", PDF_TYPE, sample.encrypted_pdf("the locked lychee words")),
        ("big.pdf", PDF_TYPE, sample.pdf([f"Page {n} of the long report" for n in range(1, 201)])),
    ]
    mail = sample.with_attachments(files, sender="Joe Plumber <joe@plumbing.example.com>", subject="Papers",
                                   message_id="papers@example.org", date=now - 60,
                                   headers=sample.authenticated("plumbing.example.com"))
    mail.add_attachment(sample.message(subject="Forwarded: the medlar order", body="Order 5 medlar trees."))
    sample.deliver(inbox, mail)
    config = sample.config(root)
    config["gateway"]["timezone"] = "Europe/Paris"

    def gateway():
        return make_gateway([gateway_mail], home=gateway_home, config=config, projects=sample.PROJECTS)

    return ids, gateway


def _read(served, part: int, address: str = "mid:papers@example.org"):
    return served.call("read_attachment", {"address": address, "part": part})


def test_read_message_numbers_the_attachments(world) -> None:
    _ids, gateway = world
    answer = gateway().call("read_message", {"address": "mid:papers@example.org"})
    assert [a["part"] for a in answer.data["attachments"]] == list(range(1, 11))
    assert "Attachment 1: invoice-77.pdf (application/pdf, " in answer.text
    assert "Attachment 10: (no name) (message/rfc822, " in answer.text


def test_each_kind_is_read_framed_and_masked(world) -> None:
    _ids, gateway = world
    served = gateway()
    pdf = _read(served, 1)
    assert pdf.data["kind"] == "PDF" and "<<<data" in pdf.text
    assert "quinceberry pruning" in pdf.text and "[page 3 of 3]" in pdf.text
    assert CARD not in pdf.text and "0566" not in pdf.text and "[card …5556]" in pdf.text
    docx = _read(served, 2)
    assert "tamarillo harvest" in docx.text and "A 12 kg" in docx.text
    assert "marmalade jars 42" in _read(served, 3).text
    odt = _read(served, 4)
    assert "Minutes" in odt.text and "The gooseberry plan passed." in odt.text
    ics = _read(served, 5)
    assert "Event: Budget review" in ics.text and "Organizer: Ada Example <ada@example.org>" in ics.text
    # 14:00 in London is 15:00 in Paris, the person's zone; the organizer's own time is given beside it.
    assert "Starts: 2026-12-03 15:00 CET (written as 2026-12-03 14:00 Europe/London)" in ics.text
    assert "persimmons" in _read(served, 6).text
    attached = _read(served, 10)
    assert "Subject: Forwarded: the medlar order" in attached.text and "Order 5 medlar trees." in attached.text


def test_other_types_locked_and_long_files_are_said(world) -> None:
    _ids, gateway = world
    served = gateway()
    photo = _read(served, 7)
    assert not photo.is_error and photo.data["read"] is False and "not read" in photo.text
    assert "<<<data" not in photo.text and "photo.jpg" in photo.text
    locked = _read(served, 8)
    assert not locked.is_error and "encrypted with a password" in locked.text and "lychee" not in locked.text
    big = _read(served, 9)
    assert "only its first 50 pages of 200" in big.text and "Page 50 of the long report" in big.text
    assert "Page 51 of" not in big.text
    assert "from 1 to 10" in _read(served, 11).text and _read(served, 11).is_error


def test_the_gate_refuses_a_closed_or_unknown_message_alike(world, gateway_home: Path) -> None:
    ids, gateway = world
    served = gateway()
    closed = _read(served, 1, f"mid:{ids['vault']}")
    unknown = _read(served, 1, "mid:nobody-ever@example.org")
    assert closed.is_error and unknown.is_error
    assert closed.text.replace(ids["vault"], "X") == unknown.text.replace("nobody-ever@example.org", "X")
    outside = _read(served, 1, "/etc/passwd")
    assert outside.is_error and outside.text.startswith("read_attachment opens message files inside the accounts'")
    relative = served.call("read_message", {"address": "mid:papers@example.org"}).data["file"]  # to the account root
    by_file = _read(served, 1, str(gateway_home / "Mail" / "personal" / relative))
    assert not by_file.is_error and by_file.data["address"] == "mid:papers@example.org"


def test_search_finds_a_message_by_its_attachments_words_never_by_a_masked_number(world) -> None:
    _ids, gateway = world
    served = gateway()
    for word in ("quinceberry", "tamarillo", "marmalade", "gooseberry"):
        hits = served.call("search_mail", {"query": word}).data["hits"]
        assert [h["address"] for h in hits] == ["mid:papers@example.org"], word
    # Only the first attachments of a message are indexed (attachments.INDEXED_PER_MESSAGE); the rest are read on
    # demand. A locked PDF's words are in no index.
    assert attachments.INDEXED_PER_MESSAGE == 4
    for digits in ("0566", '"4000 0566"', "4000056655665556", "lychee", "persimmons", "medlar"):
        assert served.call("search_mail", {"query": digits}).data["hits"] == [], digits


def test_bombs_are_answered_with_a_sentence_within_bounds() -> None:
    bombs = [("bomb.pdf", PDF_TYPE, sample.pdf_bomb()), ("bomb.docx", DOCX_TYPE, sample.zip_bomb()),
             ("liar.docx", DOCX_TYPE, sample.zip_bomb(declared_honestly=False))]
    parsed = parse(bytes(sample.with_attachments(bombs)))
    said = []
    for attachment in parsed.attachments:
        for bounds in (attachments.READ, attachments.INDEX):
            found = attachments.extract(attachment.part, attachment.name, attachment.type, bounds)
            said.append(found.note)
            assert "bomb words" not in found.text
    assert "page 1 not read" in said[0] and "decompression bomb" in said[0]
    assert "unzips to 104,8" in said[2] and "lies about its sizes" in said[4]
    assert attachments.indexed(parsed) == ""


def test_an_encrypted_message_has_no_attachment_to_read(world, gateway_home: Path) -> None:
    ids, gateway = world
    answer = gateway().call("read_attachment", {"address": f"mid:{ids['encrypted']}", "part": 1})
    assert answer.is_error and "encrypted" in answer.text


def test_a_reading_stops_at_the_calls_deadline_and_says_so() -> None:
    from gateway.api.deadline import Deadline

    long = sample.pdf([f"Page {n} of the long report" for n in range(1, 201)])
    attachment = parse(bytes(sample.with_attachments([("long.pdf", PDF_TYPE, long)]))).attachments[0]
    found = attachments.extract(attachment.part, attachment.name, attachment.type, attachments.READ,
                                deadline=Deadline.after(0.4))
    assert found.kind == "PDF" and "the time to read it ran out" in found.note
    assert "Page 50 of" not in found.text


def test_a_word_documents_deleted_text_and_field_codes_are_not_its_text() -> None:
    import docx as python_docx
    from docx.oxml import parse_xml

    document = python_docx.Document()
    paragraph = document.add_paragraph("Kept words")
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    paragraph._p.append(parse_xml(f'<w:del {w} w:id="1" w:author="Ada"><w:r><w:delText>struck words</w:delText>'
                                  '</w:r></w:del>'))
    paragraph._p.append(parse_xml(f'<w:r {w}><w:instrText>HYPERLINK "https://example.com"</w:instrText></w:r>'))
    paragraph._p.append(parse_xml(f'<w:r {w}><w:tab/><w:t>after a tab</w:t></w:r>'))
    out = io.BytesIO()
    document.save(out)
    attachment = parse(bytes(sample.with_attachments([("d.docx", DOCX_TYPE, out.getvalue())]))).attachments[0]
    found = attachments.extract(attachment.part, attachment.name, attachment.type, attachments.READ)
    assert found.text == "Kept words\tafter a tab" and found.note == ""


def test_an_eml_sent_as_bytes_and_an_html_file_are_read_as_a_message_and_a_text() -> None:
    forwarded = bytes(sample.message(sender="Lou <lou@example.net>", subject="The sloe gin recipe",
                                     body="Pick sloes after the first frost."))
    html = b"<html><body><p>Order <b>4471</b> of <i>damson</i> jam</p><script>bad()</script></body></html>"
    parsed = parse(bytes(sample.with_attachments([("forward.eml", "application/octet-stream", forwarded),
                                                  ("order.html", "text/html", html)])))
    read = [attachments.extract(a.part, a.name, a.type, attachments.READ) for a in parsed.attachments]
    assert read[0].kind == "message" and "Subject: The sloe gin recipe" in read[0].text
    assert "From: Lou <lou@example.net>" in read[0].text and "Pick sloes after the first frost." in read[0].text
    assert read[1].kind == "HTML" and read[1].text.strip() == "Order 4471 of damson jam"


def test_access_why_names_the_subject_route_met_only_in_an_attachment(world, gateway_home: Path) -> None:
    from gateway_mail.projects import described

    from gateway import Gate, PluginHost, Project
    from gateway.gate.access import Manifest
    from gateway.testing import folders_of

    _ids, gateway = world
    gateway().call("search_mail", {"query": "papers"})  # the index made
    gate = Gate(Manifest((Project(id="quince", name="Quince", ai=False, subjects=("quinceberry pruning",)),)))
    host = PluginHost("mail", folders_of(gateway_home).for_plugin("mail"), sample.config(
        gateway_home / "Mail" / "personal")["plugins"]["mail"])
    traits = described.traits_of(host, "mid:papers@example.org", gate)
    assert traits is not None and gate.owners(traits) == frozenset({"quince"})
    assert any(r.took and r.kind == "subjects" and r.project == "quince" for r in gate.explain(traits))


def test_an_index_made_before_the_attachments_text_is_made_again(world, gateway_home: Path) -> None:
    import sqlite3

    from gateway_mail.mail import index

    from gateway.testing import folders_of

    _ids, gateway = world
    served = gateway()
    assert served.call("search_mail", {"query": "tamarillo"}).data["hits"]
    path = index.index_path(folders_of(gateway_home).for_plugin("mail").cache)
    with sqlite3.connect(path) as old:  # as an index of before: no attachment_text, the texts without them
        old.execute("DELETE FROM meta WHERE key = 'attachment_text'")
    connection = index.connect(path)
    assert connection.execute("SELECT count(*) FROM messages").fetchone()[0] == 0
    connection.close()
    assert served.call("search_mail", {"query": "tamarillo"}).data["hits"]
