"""The other invoice XMLs a PDF may carry: UBL (as XRechnung writes it, made by the factur-x library) and ZUGFeRD
1.0 (its documented CrossIndustryDocument, written here), each read to the same fields; an Order-X order is not an
invoice."""

from __future__ import annotations

import datetime
import io

import facturx
import pytest
from gateway_time import reader, sample

ZUGFERD_1 = b"""<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryDocument xmlns:rsm="urn:ferd:CrossIndustryDocument:invoice:1p0"
  xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:12"
  xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:15">
 <rsm:SpecifiedExchangedDocumentContext><ram:GuidelineSpecifiedDocumentContextParameter>
  <ram:ID>urn:ferd:CrossIndustryDocument:invoice:1p0:basic</ram:ID></ram:GuidelineSpecifiedDocumentContextParameter>
 </rsm:SpecifiedExchangedDocumentContext>
 <rsm:HeaderExchangedDocument><ram:ID>Z-1</ram:ID><ram:Name>RECHNUNG</ram:Name><ram:TypeCode>380</ram:TypeCode>
  <ram:IssueDateTime><udt:DateTimeString format="102">20261102</udt:DateTimeString></ram:IssueDateTime>
 </rsm:HeaderExchangedDocument>
 <rsm:SpecifiedSupplyChainTradeTransaction>
  <ram:ApplicableSupplyChainTradeAgreement><ram:BuyerReference>acme</ram:BuyerReference>
   <ram:SellerTradeParty><ram:Name>Lieferant Example GmbH</ram:Name></ram:SellerTradeParty>
   <ram:BuyerTradeParty><ram:Name>Kunde Example AG</ram:Name></ram:BuyerTradeParty>
  </ram:ApplicableSupplyChainTradeAgreement>
  <ram:ApplicableSupplyChainTradeSettlement><ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>
   <ram:SpecifiedTradeSettlementPaymentMeans><ram:TypeCode>58</ram:TypeCode>
    <ram:PayeePartyCreditorFinancialAccount><ram:IBANID>DE89370400440532013000</ram:IBANID>
    </ram:PayeePartyCreditorFinancialAccount></ram:SpecifiedTradeSettlementPaymentMeans>
   <ram:SpecifiedTradePaymentTerms><ram:Description>Zahlbar innerhalb 30 Tagen</ram:Description>
    <ram:DueDateDateTime><udt:DateTimeString format="102">20261202</udt:DateTimeString></ram:DueDateDateTime>
   </ram:SpecifiedTradePaymentTerms>
   <ram:SpecifiedTradeSettlementMonetarySummation>
    <ram:GrandTotalAmount currencyID="EUR">238.00</ram:GrandTotalAmount>
    <ram:DuePayableAmount currencyID="EUR">238.00</ram:DuePayableAmount>
   </ram:SpecifiedTradeSettlementMonetarySummation>
  </ram:ApplicableSupplyChainTradeSettlement>
 </rsm:SpecifiedSupplyChainTradeTransaction>
</rsm:CrossIndustryDocument>
"""


def _pdf_with(name: str, xml: bytes) -> bytes:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(595, 842)
    writer.add_attachment(name, xml)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def test_a_ubl_invoice_as_xrechnung_writes_it() -> None:
    data = {
        "BT-24": "urn:cen.eu:en16931:2017", "BT-1": "U-1", "BT-3": "380", "BT-2": datetime.date(2026, 11, 2),
        "BT-9": datetime.date(2026, 11, 30), "BT-5": "EUR", "BT-72": datetime.date(2026, 11, 2), "BT-10": "acme",
        "BT-81": "58", "BT-84": sample.IBAN,
        "BG-4": {"name": "Ada Studio", "country_code": "FR", "einvoicing_addr": "ada@example.org",
                 "einvoicing_addr_schemeid": "EM"},
        "BG-7": {"name": "Acme Example", "country_code": "FR"},
        "BT-106": "10.00", "BT-109": "10.00", "BT-110": "2.00", "BT-112": "12.00", "BT-115": "12.00",
        "BG-23": [{"BT-116": "10.00", "BT-117": "2.00", "BT-118": "S", "BT-119": "20.00"}],
        "BG-25": [{"BT-126": "1", "BT-129": "1", "BT-130": "C62", "BT-131": "10.00", "BT-146": "10.00",
                   "BT-151": "S", "BT-152": "20.00", "BT-153": "Work"}],
    }
    xml = facturx.generate_ubl_xml(data, check_xsd=True, check_schematron=False)
    found = reader.read_invoice(_pdf_with("xrechnung.xml", xml))
    assert found["flavor"] == "ubl-2.1-invoice"
    assert (found["number"], found["issued"], found["due"], found["total"], found["currency"]) == (
        "U-1", "2026-11-02", "2026-11-30", "12.00", "EUR")
    assert found["seller"] == {"name": "Ada Studio", "emails": "ada@example.org", "vat": ""}
    assert found["account"] == sample.IBAN and found["buyer_reference"] == "acme"


def test_a_zugferd_1_invoice() -> None:
    found = reader.read_invoice(_pdf_with("ZUGFeRD-invoice.xml", ZUGFERD_1))
    assert found["flavor"] == "zugferd 1.0"
    assert (found["number"], found["issued"], found["due"], found["total"], found["amount_due"]) == (
        "Z-1", "2026-11-02", "2026-12-02", "238.00", "238.00")
    assert found["seller"]["name"] == "Lieferant Example GmbH" and found["buyer"]["name"] == "Kunde Example AG"
    assert found["account"] == "DE89370400440532013000" and found["buyer_reference"] == "acme"


def test_a_dtd_in_the_embedded_xml_is_refused_even_without_entities() -> None:
    xml = ZUGFERD_1.replace(b"<rsm:CrossIndustryDocument", b"<!DOCTYPE rsm:CrossIndustryDocument>\n"
                            b"<rsm:CrossIndustryDocument", 1)
    with pytest.raises(reader.NotRead, match="declares a DTD"):
        reader.read_invoice(_pdf_with("zugferd-invoice.xml", xml))
