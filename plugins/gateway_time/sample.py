"""Invented time and invoices, for the tests, the benchmark and a person trying the plugin.

Timewarrior data is written in its documented format (`interval_line`), or by the real `timew` when a test asks
(`timew`); invoices are real Factur-X PDFs: a page made with pypdf, the CII XML made by the `factur-x` library
from an EN 16931 data dict, and the two joined by the same library (`invoice_pdf`). The people are invented, on
reserved domains (example.com, example.org, example.net); the IBAN is a documentation one (its mod 97 checks).
"""

from __future__ import annotations

import io
import os
import subprocess
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

IBAN = "FR7630006000011234567890189"
IBAN_FORMS = (IBAN, "FR76 3000 6000 0112 3456 7890 189", "30006000011234567890189", "3000 6000 0112 3456")


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def _quoted(tag: str) -> str:
    if tag and not any(c.isspace() or c in "\"'#-+*/()<>=!~^&|" for c in tag):
        return tag
    return '"' + tag.replace("\\", "\\\\").replace('"', '\\"') + '"'


def interval_line(start: datetime, end: datetime | None, tags: list[str], annotation: str = "") -> str:
    """One `inc` line as timewarrior writes it."""
    line = f"inc {stamp(start)}" + (f" - {stamp(end)}" if end else "")
    if tags or annotation:
        line += " # " + " ".join(_quoted(t) for t in tags)
    if annotation:
        line += " # " + _quoted(annotation)
    return line.rstrip() + "\n"


def timew(db: Path, *arguments: str) -> str:
    """Run the real `timew` on the database `db` (its own HOME beside it, so nothing of the caller's is read)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(db.parent), "TIMEWARRIORDB": str(db),
           "LANG": "C.UTF-8", "TZ": "UTC"}
    (db / "data").mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(["timew", ":yes", *arguments], env=env, capture_output=True, text=True, timeout=60,
                              check=True, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise RuntimeError("the real timew is needed: apt-get install timewarrior (.ci/run installs it)") from None
    return done.stdout


def blank_pdf() -> bytes:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(595, 842)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def invoice_xml(number: str, seller: str, buyer: str, total: str, *, issued: date, due: date | None = None,
                seller_email: str = "", buyer_email: str = "", reference: str = "", iban: str = "",
                amount_due: str | None = None, currency: str = "EUR", note: str = "") -> bytes:
    """A Factur-X (BASIC WL) invoice's XML, made by the factur-x library from an EN 16931 data dict."""
    import facturx

    net = f"{float(total) / 1.2:.2f}"
    vat = f"{float(total) - float(net):.2f}"

    def party(name: str, email: str) -> dict[str, Any]:
        found: dict[str, Any] = {"name": name, "country_code": "FR"}
        if email:
            found.update(einvoicing_addr=email, einvoicing_addr_schemeid="EM")
        return found

    data: dict[str, Any] = {
        "BT-24": "urn:factur-x.eu:1p0:basicwl", "BT-1": number, "BT-3": "380", "BT-2": issued, "BT-5": currency,
        "BT-72": issued, "BG-4": party(seller, seller_email), "BG-7": party(buyer, buyer_email),
        "BT-106": net, "BT-109": net, "BT-110": vat, "BT-112": total,
        "BT-115": total if amount_due is None else amount_due,
        "BG-23": [{"BT-116": net, "BT-117": vat, "BT-118": "S", "BT-119": "20.00"}],
    }
    if due:
        data["BT-9"] = due
        data["BT-20"] = f"Payable by {due.isoformat()}"
    if reference:
        data["BT-10"] = reference
    if iban:
        data["BT-81"] = "58"
        data["BT-84"] = iban
    if note:
        data["BG-1"] = [{"BT-22": note}]
    return facturx.generate_cii_xml(data, check_xsd=True, check_schematron=False)


def invoice_pdf(path: Path, number: str, seller: str, buyer: str, total: str, **fields: Any) -> Path:
    """A Factur-X PDF: a page made with pypdf, the XML embedded by the factur-x library."""
    import facturx

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(facturx.generate_from_binary(blank_pdf(), invoice_xml(number, seller, buyer, total, **fields),
                                                  check_xsd=False))
    return path


def everything(home: Path, canary: str, *, real_timew: bool = True) -> dict[str, Any]:
    """Time and invoices of an open project (`acme`), of two closed ones (`vault` by its tag and its reference,
    `harbor` by a senders route and a paths route) and of no project; the config and manifest that go with them."""
    now = datetime.now(UTC)
    today = now.date()
    day = timedelta(days=1)
    # The hours are placed around `anchor`: today, or yesterday before 02:00 UTC, so the interval running since
    # half an hour ago never overlaps the one that ends at 01:00 (timew refuses an overlap). Invoices go by today.
    anchor = (now - timedelta(hours=2)).date()

    def at(days_ago: int, hour: int, minute: int = 0) -> datetime:
        moment = anchor - days_ago * day
        return datetime(moment.year, moment.month, moment.day, hour, minute, tzinfo=UTC)

    def iso(moment: datetime) -> str:
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")

    db = home / ".local" / "share" / "timewarrior"
    if real_timew:
        timew(db, "track", iso(at(2, 9)), "-", iso(at(2, 11, 30)), "acme", "deep work")
        timew(db, "track", iso(at(2, 13)), "-", iso(at(2, 14)), "writing")
        timew(db, "track", iso(at(1, 9)), "-", iso(at(1, 12)), "project:vault", f"{canary} design")
        timew(db, "track", iso(at(1, 22)), "-", iso(at(0, 1)), "acme", 'say "hi"')
        timew(db, "start", iso(now - timedelta(minutes=30)), "acme")
    else:
        data = db / "data"
        data.mkdir(parents=True, exist_ok=True)
        lines = [interval_line(at(2, 9), at(2, 11, 30), ["acme", "deep work"]),
                 interval_line(at(2, 13), at(2, 14), ["writing"]),
                 interval_line(at(1, 9), at(1, 12), ["project:vault", f"{canary} design"]),
                 interval_line(at(1, 22), at(0, 1), ["acme", 'say "hi"'])]
        (data / f"{anchor:%Y-%m}.data").write_text("".join(lines))
    # A closed project's hours by a tag of words its subjects route takes, written by hand beside timew's.
    month = db / "data" / f"{(anchor - 3 * day):%Y-%m}.data"
    with month.open("a") as handle:
        handle.write(interval_line(at(3, 10), at(3, 11), ["harbor berth"], f"the {canary} crane"))
    folder = home / "Invoices"
    invoice_pdf(folder / "2026" / "ada-42.pdf", "INV-2026-0042", "Ada Studio", "Acme Example", "1200.00",
                issued=today - 30 * day, due=today - day, seller_email="ada@example.org",
                buyer_email="billing@acme.example.com", reference="acme website", iban=IBAN)
    invoice_pdf(folder / "2026" / "lee-7.pdf", "L-7", "Lee Sample", "Ada Studio", "90.00",
                issued=today - 3 * day, due=today + 27 * day, seller_email="lee@example.net")
    invoice_pdf(folder / "paid" / "lee-3.pdf", "L-3", "Lee Sample", "Ada Studio", "45.00",
                issued=today - 60 * day, due=today - 30 * day, seller_email="lee@example.net")
    invoice_pdf(folder / "2026" / "vault-9.pdf", "V-9", "Ada Studio", f"Vault {canary} Trust", "5000.00",
                issued=today - 10 * day, due=today + 20 * day, reference="project:vault",
                note=f"{canary} strongroom")
    invoice_pdf(folder / "2026" / "harbor-1.pdf", "H-1", "Ada Studio", f"Harbor {canary} Ltd", "700.00",
                issued=today - 5 * day, due=today - 2 * day, buyer_email="billing@harbor.example.net")
    invoice_pdf(folder / "harbor" / "h-2.pdf", "H-2", "Ada Studio", "Quay Office", f"{310}.00",
                issued=today - 4 * day, due=today + 10 * day, note=f"{canary} quay")
    config = {"gateway": {"plugins": ["time"], "refresh_budget_ms": 60_000},
              "plugins": {"time": {"timewarrior": str(db), "invoices": str(folder), "timezone": "UTC"}}}
    projects = [
        {"id": "acme", "name": "Acme website", "ai": True},
        {"id": "vault", "name": "Vault matters", "ai": False},
        {"id": "harbor", "name": "Harbor", "ai": False, "senders": ["harbor.example.net"],
         "subjects": ["harbor berth"], "paths": [str(folder / "harbor")]},
    ]
    return {"db": db, "invoices": folder, "config": config, "projects": projects, "today": today, "day": anchor}
