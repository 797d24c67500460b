"""Reading one Factur-X / ZUGFeRD invoice PDF, in a process of its own (`python -m gateway_time.reader`).

A PDF comes from a stranger, and so does the XML inside it: this process reads them with the `factur-x` library
(`get_xml_from_pdf`, on pypdf, then `parse_ubl_cii_xml`, on lxml) under an address-space limit, and the plugin
kills it when one file takes longer than its bound (`gateway_time.invoices`). A PDF bomb, an XML bomb or a file
built to make a parser loop thus costs at most the bounds and fails that file alone. The XML is parsed again here
by a parser that resolves no entity, loads no DTD and reaches no network, and one that declares a DTD is refused
(an invoice never does); the library is then given the parsed tree, never the bytes.

The protocol, one JSON object a line: the parent writes a PDF's path, this process answers
`{"path", "ok": true, "invoice": {...}}` or `{"path", "ok": false, "error": "a sentence"}`.
"""

from __future__ import annotations

import io
import json
import logging
import sys
from datetime import date
from typing import Any

MAX_FIELD = 4_000
NAMES = ("factur-x.xml", "zugferd-invoice.xml", "xrechnung.xml")
# ZUGFeRD 1.0 (urn:ferd:CrossIndustryDocument:invoice:1p0), which the library does not parse: its few fields read
# by their local names.
_ZUGFERD_1 = {
    "number": "HeaderExchangedDocument/ID",
    "type": "HeaderExchangedDocument/TypeCode",
    "issued": "HeaderExchangedDocument/IssueDateTime/DateTimeString",
    "seller": "ApplicableSupplyChainTradeAgreement/SellerTradeParty/Name",
    "buyer": "ApplicableSupplyChainTradeAgreement/BuyerTradeParty/Name",
    "buyer_reference": "ApplicableSupplyChainTradeAgreement/BuyerReference",
    "currency": "ApplicableSupplyChainTradeSettlement/InvoiceCurrencyCode",
    "total": "SpecifiedTradeSettlementMonetarySummation/GrandTotalAmount",
    "amount_due": "SpecifiedTradeSettlementMonetarySummation/DuePayableAmount",
    "due": "SpecifiedTradePaymentTerms/DueDateDateTime/DateTimeString",
    "account": "PayeePartyCreditorFinancialAccount/IBANID",
    "terms": "SpecifiedTradePaymentTerms/Description",
}


class NotRead(Exception):
    """This file is not an invoice that can be read: the message says why, for the person."""


def _text(value: Any) -> str:
    if value is None or value is False:
        return ""
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return "; ".join(t for t in (_text(v) for v in value) if t)[:MAX_FIELD]
    if isinstance(value, dict):
        return "; ".join(t for t in (_text(v) for v in value.values()) if t)[:MAX_FIELD]
    return " ".join(str(value).split())[:MAX_FIELD]


def _party(value: Any) -> dict[str, str]:
    party = value if isinstance(value, dict) else {}
    emails = [party.get("einvoicing_addr")] if party.get("einvoicing_addr_schemeid") == "EM" else []
    for contact in party.get("contacts") or ():
        if isinstance(contact, dict):
            emails += [v for k, v in contact.items() if "email" in str(k).lower()]
    return {"name": _text(party.get("name") or party.get("biz_name")),
            "emails": _text([e for e in emails if isinstance(e, str) and "@" in e]),
            "vat": _text(party.get("vat_identifier"))}


def _safe_tree(xml: bytes) -> Any:
    from lxml import etree

    head = xml[:4096].lstrip()
    if b"<!DOCTYPE" in head or b"<!ENTITY" in xml:
        raise NotRead("its embedded XML declares a DTD or entities, which an invoice never does (an 'XML bomb' "
                      "may); it was not read")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                             remove_comments=True, remove_pis=True)
    try:
        return etree.fromstring(xml, parser)
    except etree.XMLSyntaxError as error:
        raise NotRead(f"its embedded XML is not well-formed ({_text(error)[:160]})") from None


def _zugferd_1(root: Any) -> dict[str, Any]:
    def first(path: str) -> str:
        steps = "/".join(f"*[local-name()='{step}']" for step in path.split("/"))
        return _text(root.xpath(f"string((//{steps})[1])"))

    found = {key: first(path) for key, path in _ZUGFERD_1.items()}
    for key in ("issued", "due"):
        raw = found[key]
        found[key] = f"{raw[:4]}-{raw[4:6]}-{raw[6:8]}" if len(raw) == 8 and raw.isdigit() else ""
    found["seller"] = {"name": found["seller"], "emails": "", "vat": ""}
    found["buyer"] = {"name": found["buyer"], "emails": "", "vat": ""}
    found["flavor"] = "zugferd 1.0"
    return found


def read_invoice(pdf: bytes) -> dict[str, Any]:
    """The invoice's fields from a PDF's bytes; NotRead saying why when it has none that can be read."""
    import facturx

    try:
        name, xml = facturx.get_xml_from_pdf(pdf, check_xsd=False)
    except Exception as error:  # noqa: BLE001 (pypdf raises many kinds on a broken or hostile PDF)
        raise NotRead(f"not a PDF that can be read ({type(error).__name__}: {_text(error)[:160]})") from None
    if not xml:
        raise NotRead(_why_no_xml(pdf))
    root = _safe_tree(xml)
    try:
        flavor = facturx.get_flavor(root)
    except Exception:  # noqa: BLE001
        raise NotRead(f"its embedded {_text(name)[:60]} is not a Factur-X, ZUGFeRD or XRechnung invoice") from None
    if flavor == "order-x":
        raise NotRead("it holds an Order-X order, not an invoice")
    if flavor == "zugferd":
        return _zugferd_1(root)
    try:
        data = facturx.parse_ubl_cii_xml(root, check_xsd=False)
    except Exception as error:  # noqa: BLE001 (the library's own errors are bare Exceptions)
        raise NotRead(f"its embedded XML could not be read as an invoice ({_text(error)[:160]})") from None
    return {
        "flavor": flavor,
        "number": _text(data.get("BT-1")),
        "type": _text(data.get("BT-3")),
        "issued": _text(data.get("BT-2")),
        "due": _text(data.get("BT-9")),
        "currency": _text(data.get("BT-5")),
        "total": _text(data.get("BT-112")),
        "amount_due": _text(data.get("BT-115")),
        "paid_amount": _text(data.get("BT-113")),
        "seller": _party(data.get("BG-4")),
        "buyer": _party(data.get("BG-7")),
        "buyer_reference": _text(data.get("BT-10")),
        "project_reference": _text(data.get("BT-11")),
        "project_name": _text(data.get("BT-11-0")),
        "contract": _text(data.get("BT-12")),
        "order": _text(data.get("BT-13")),
        "terms": _text(data.get("BT-20")),
        "account": _text(data.get("BT-84")),
        "remittance": _text(data.get("BT-83")),
        "notes": _text(data.get("BG-1")),
    }


def _why_no_xml(pdf: bytes) -> str:
    """Why the library found no invoice XML: none attached, or one attached that could not be parsed."""
    from pypdf import PdfReader

    try:
        attached = [a.name for a in PdfReader(io.BytesIO(pdf)).attachment_list]
    except Exception:  # noqa: BLE001
        attached = []
    xml = [n for n in attached if str(n).lower() in NAMES or str(n).lower().endswith(".xml")]
    if not xml:
        return "it holds no Factur-X or ZUGFeRD XML: not an electronic invoice"
    return (f"its embedded {_text(xml[0])[:60]} could not be parsed (not well-formed, or it declares entities, as an "
            "'XML bomb' does); it was not read")


def _limit_memory(megabytes: int) -> None:
    try:
        import resource

        limit = megabytes << 20
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    except (ImportError, ValueError, OSError):
        pass  # not on this system: the time bound still holds


def main() -> None:
    bounds = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    _limit_memory(int(bounds.get("max_memory_mb", 1024)))
    max_bytes = int(bounds.get("max_file_mb", 20)) << 20
    logging.disable(logging.CRITICAL)  # the libraries' warnings would only be noise on a closed stderr
    for line in sys.stdin:
        path = line.rstrip("\n")
        answer: dict[str, Any] = {"path": path}
        try:
            with open(path, "rb") as handle:
                pdf = handle.read(max_bytes + 1)
            if len(pdf) > max_bytes:
                raise NotRead(f"over the limit of {max_bytes >> 20} MiB (max_file_mb); it was not read")
            answer.update(ok=True, invoice=read_invoice(pdf))
        except NotRead as why:
            answer.update(ok=False, error=str(why))
        except MemoryError:
            answer.update(ok=False, error="reading it needed more memory than allowed (max_memory_mb): a PDF or "
                                          "XML bomb, or a very large file; it was not read")
        except OSError as error:
            answer.update(ok=False, error=f"cannot be read: {error.strerror or error}")
        except RecursionError:
            answer.update(ok=False, error="nested too deeply to read; it was not read")
        except Exception as error:  # noqa: BLE001 (a file from a stranger fails alone, whatever it raises)
            answer.update(ok=False, error=f"could not be read ({type(error).__name__})")
        sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
