"""Invented papers for the tests, the benchmark and the demo: real PDFs made with reportlab, scans with their
sidecars, a text file, and a paperless-ngx export written as its `document_exporter` writes it.

The people and firms are invented, on reserved domains (example.com, example.org, example.net). The IBAN is the
well-known specimen (`FR14 2004 1010 0505 0001 3M02 606`) and the card number a test number (`4111 1111 1111 1111`):
both pass their checks, so the masks must take them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

IBAN = "FR14 2004 1010 0505 0001 3M02 606"
CARD = "4111 1111 1111 1111"
KEEPER = "keeper@harbor.example.net"  # the closed project "harbor"'s correspondent (a senders route)


def pdf(path: Path, pages: Sequence[str] | str, title: str = "") -> Path:
    """A real PDF with a text layer, one string per page (lines split on newlines), made with reportlab."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    path.parent.mkdir(parents=True, exist_ok=True)
    sheet = canvas.Canvas(str(path), pagesize=A4, invariant=True)
    if title:
        sheet.setTitle(title)
    for page in [pages] if isinstance(pages, str) else pages:
        y = 800
        for line in page.split("\n"):
            sheet.drawString(60, y, line)
            y -= 16
        sheet.showPage()
    sheet.save()
    return path


def image(path: Path, kind: str = "PNG") -> Path:
    """A small real image (a grey sheet), made with Pillow (reportlab brings it)."""
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("L", (60, 80), 230).save(path, kind)
    return path


HOCR = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">
 <head>
  <title></title>
  <meta name='ocr-system' content='tesseract 5.3.0' />
 </head>
 <body>
  <div class='ocr_page' id='page_1' title='image "warranty.jpg"; bbox 0 0 60 80; ppageno 0'>
   <div class='ocr_carea' id='block_1_1'>
    <p class='ocr_par' id='par_1_1' lang='eng'>
{lines}
    </p>
   </div>
  </div>
 </body>
</html>
"""


def hocr(lines: Sequence[str]) -> str:
    spans = []
    for number, line in enumerate(lines, start=1):
        words = " ".join(f"<span class='ocrx_word' id='word_1_{number}_{i}' title='x_wconf 91'>{w}</span>"
                         for i, w in enumerate(line.split(), start=1))
        spans.append(f"     <span class='ocr_line' id='line_1_{number}' title='bbox 0 0 60 8'>{words}</span>")
    return HOCR.replace("{lines}", "\n".join(spans))


def paperless_export(root: Path, canary: str) -> dict:
    """A paperless-ngx export (`document_exporter`): manifest.json as Django's serialiser writes it, metadata.json,
    and each document's original, archive and thumbnail beside them."""
    root.mkdir(parents=True, exist_ok=True)
    owner = 3
    records: list[dict] = [
        {"model": "documents.correspondent", "pk": 1, "fields": {
            "owner": owner, "name": "Northbank", "match": "", "matching_algorithm": 6, "is_insensitive": True}},
        {"model": "documents.correspondent", "pk": 2, "fields": {
            "owner": owner, "name": "Atlas Builders", "match": "", "matching_algorithm": 6, "is_insensitive": True}},
        {"model": "documents.documenttype", "pk": 1, "fields": {
            "owner": owner, "name": "Contract", "match": "", "matching_algorithm": 6, "is_insensitive": True}},
        {"model": "documents.documenttype", "pk": 2, "fields": {
            "owner": owner, "name": "Letter", "match": "", "matching_algorithm": 6, "is_insensitive": True}},
        {"model": "documents.documenttype", "pk": 3, "fields": {
            "owner": owner, "name": "Invoice", "match": "", "matching_algorithm": 6, "is_insensitive": True}},
        {"model": "documents.tag", "pk": 1, "fields": {
            "owner": owner, "name": "Inbox", "color": "#a6cee3", "match": "", "matching_algorithm": 6,
            "is_insensitive": True, "is_inbox_tag": True}},
        {"model": "documents.tag", "pk": 2, "fields": {
            "owner": owner, "name": "project:atlas", "color": "#1f78b4", "match": "", "matching_algorithm": 6,
            "is_insensitive": True, "is_inbox_tag": False}},
        {"model": "documents.tag", "pk": 3, "fields": {
            "owner": owner, "name": "garden", "color": "#b2df8a", "match": "", "matching_algorithm": 6,
            "is_insensitive": True, "is_inbox_tag": False}},
    ]
    documents = [
        (1, "Card agreement", 1, 1, [1], "2026-02-11",
         f"Northbank card agreement. Your card {CARD} is governed by these terms. Interest is charged monthly."),
        (2, "Annual statement", 1, 2, [], "2026-01-05",
         f"Dear customer, your account {IBAN} had a quiet year. Yours, Northbank."),
        (3, "Extension works", 2, 1, [2], "2026-03-20",
         f"Atlas Builders will build the {canary} extension for the agreed price."),
        (4, "Seed order", None, 3, [3], "2026-04-01", "Invoice for tulip bulbs and a plumtree sapling."),
    ]
    for pk, title, correspondent, kind, tags, created, content in documents:
        base = f"{created} {title}"
        pdf(root / f"{base}.pdf", content, title)
        pdf(root / f"{base}-archive.pdf", content, title)
        image(root / f"{base}-thumbnail.webp", "WEBP")
        records.append({
            "model": "documents.document", "pk": pk, "fields": {
                "owner": owner, "correspondent": correspondent, "storage_path": None, "title": title,
                "document_type": kind, "content": content, "mime_type": "application/pdf",
                "checksum": f"{pk:032x}", "archive_checksum": f"{pk + 100:032x}", "page_count": 1,
                "created": created, "modified": f"{created}T10:00:00.000Z", "storage_type": "unencrypted",
                "added": f"{created}T09:00:00.000Z", "filename": f"{base}.pdf", "archive_filename": f"{base}.pdf",
                "original_filename": f"{title}.pdf", "archive_serial_number": None, "deleted_at": None,
                "restored_at": None, "transaction_id": None, "tags": tags},
            "__exported_file_name__": f"{base}.pdf",
            "__exported_thumbnail_name__": f"{base}-thumbnail.webp",
            "__exported_archive_name__": f"{base}-archive.pdf",
        })
    (root / "manifest.json").write_text(json.dumps(records, indent=2, ensure_ascii=False), encoding="utf-8")
    (root / "metadata.json").write_text(json.dumps({"version": "2.14.7"}, indent=2), encoding="utf-8")
    return {"root": root, "documents": len(documents)}


def everything(home: Path, canary: str) -> dict:
    """A documents folder of invented papers and the config and manifest that go with them."""
    folder = home / "Documents" / "Papers"
    pdf(folder / "contracts" / "Acme Lettings" / "2026-01-15 Flat lease.pdf",
        ["Lease of the flat at 12 Example Street between Acme Lettings and the tenant.",
         f"The deposit is paid to the account {IBAN}.\nThe rent is due on the first of each month."],
        "Flat lease")
    pdf(folder / "letters" / "billing@northbank.example.com" / "2026-02-01 Card renewal.pdf",
        f"Dear customer,\nyour new card {CARD} is on its way.\nNorthbank", "Card renewal")
    pdf(folder / "Research" / "2025-11-30 Soil survey.pdf",
        ["Soil survey of the plumtree orchard.", "Loam, well drained; the plumtree roots go deep."])
    permit = folder / "letters" / "City Council" / "2026-03-10 Parking permit.txt"
    permit.parent.mkdir(parents=True, exist_ok=True)
    permit.write_text("The parking permit for Example Street is renewed until March 2027.\n", encoding="utf-8")
    image(folder / "scans" / "2026-04-02 Receipt.png")
    (folder / "scans" / "2026-04-02 Receipt.txt").write_text("Receipt: one plumtree sapling, paid in cash.\n")
    image(folder / "scans" / "2026-04-03 Warranty.jpg", "JPEG")
    (folder / "scans" / "2026-04-03 Warranty.hocr").write_text(
        hocr(["Warranty for the lawn mower", "valid two years from purchase"]), encoding="utf-8")
    image(folder / "scans" / "2026-04-04 Photo of a letter.png")
    # The closed projects' papers: by path (vault), by correspondent (harbor), by tag (atlas, in the export).
    pdf(folder / "Vault" / "2026-05-01 Strongbox inventory.pdf",
        f"Inventory of the {canary} strongbox: deeds and the plumtree orchard's title.")
    pdf(folder / "letters" / KEEPER / "2026-05-02 Berth handover.pdf",
        f"The {canary} berth is handed over on Monday.")
    export = paperless_export(folder / "paperless-export", canary)
    config = {"gateway": {"plugins": ["papers"], "refresh_budget_ms": 60_000},
              "plugins": {"papers": {"folder": str(folder)}}}
    projects = [
        {"id": "vault", "name": "Vault", "ai": False, "paths": [str(folder / "Vault")]},
        {"id": "harbor", "name": "Harbor", "ai": False, "senders": [KEEPER]},
        {"id": "atlas", "name": "Atlas", "ai": False},
        {"id": "garden", "name": "Garden", "ai": True},
    ]
    return {"folder": folder, "export": export["root"], "config": config, "projects": projects}
