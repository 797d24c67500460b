"""Factur-X invoices made by the factur-x library: their fields read back, their status by the plugin's rule, an
IBAN masked and found by no writing of its digits, one invoice in two folders given once, and hostile PDFs (cut,
corrupt, without XML, a PDF bomb, an XML bomb, a file that never ends) each failing alone, named by doctor."""

from __future__ import annotations

import os
import subprocess
from datetime import timedelta
from pathlib import Path

import gateway_time
import pytest
from gateway_time import sample

from gateway.api.context import home_environment
from gateway.testing import make_gateway
from tests.forkserver import gateway_command
from tests.plugins.time.hostile import write_hostile


@pytest.fixture
def made(gateway_home: Path) -> dict:
    return sample.everything(gateway_home, "walruscanary", real_timew=False)


def _gateway(home: Path, made: dict, **settings: object):
    made["config"]["plugins"]["time"].update(settings)
    return make_gateway([gateway_time], home=home, config=made["config"], projects=made["projects"])


def test_the_fields_of_a_factur_x_invoice_and_its_status(gateway_home: Path, made: dict) -> None:
    gateway = _gateway(gateway_home, made)
    unpaid = gateway.call("invoices")
    assert not unpaid.is_error, unpaid.text
    shown = {i["number"]: i for i in unpaid.data["invoices"]}
    assert set(shown) == {"INV-2026-0042", "L-7"}
    ada = shown["INV-2026-0042"]
    today = made["today"]
    assert (ada["seller"], ada["buyer"], ada["total"], ada["currency"]) == ("Ada Studio", "Acme Example", "1200.00",
                                                                             "EUR")
    assert (ada["issued"], ada["due"], ada["status"], ada["days_late"]) == (
        str(today - timedelta(days=30)), str(today - timedelta(days=1)), "overdue", 1)
    assert shown["L-7"]["status"] == "unpaid"
    first = unpaid.text.splitlines()[1]
    assert first.startswith(ada["address"]) and ada["address"].startswith("time:invoice/")
    assert "Ada Studio → Acme Example  1,200.00 EUR" in first and "overdue by 1 day" in first
    assert "2 unpaid invoices (1 overdue), the soonest due first:" in unpaid.text
    assert "Left to pay: 1,290.00 EUR." in unpaid.text
    assert [i["number"] for i in gateway.call("invoices", {"status": "overdue"}).data["invoices"]] == ["INV-2026-0042"]
    paid = gateway.call("invoices", {"status": "paid"}).data["invoices"]
    assert [i["number"] for i in paid] == ["L-3"]  # in the paid folder, though past its due date
    listed = gateway.call("invoices", {"status": "all", "limit": 1})
    assert len(listed.data["invoices"]) == 1 and "(2 invoices more not shown" in listed.text


def test_nothing_due_in_the_xml_is_paid_and_one_invoice_in_two_folders_is_given_once(gateway_home: Path,
                                                                                      made: dict) -> None:
    today = made["today"]
    sample.invoice_pdf(made["invoices"] / "2026" / "settled.pdf", "S-1", "Lee Sample", "Ada Studio", "60.00",
                       issued=today - timedelta(days=40), due=today - timedelta(days=10), amount_due="0.00")
    copy = made["invoices"] / "paid" / "ada-42-copy.pdf"
    copy.write_bytes((made["invoices"] / "2026" / "ada-42.pdf").read_bytes())
    gateway = _gateway(gateway_home, made)
    paid = [i["number"] for i in gateway.call("invoices", {"status": "paid"}).data["invoices"]]
    assert sorted(paid) == ["INV-2026-0042", "L-3", "S-1"]
    every = [i["number"] for i in gateway.call("invoices", {"status": "all"}).data["invoices"]]
    assert every.count("INV-2026-0042") == 1


def test_an_iban_is_masked_and_found_by_no_writing_of_its_digits(gateway_home: Path, made: dict) -> None:
    gateway = _gateway(gateway_home, made)
    answer = gateway.call("invoices", {"status": "all"})
    assert "pay to [IBAN …0189]" in answer.text
    for form in sample.IBAN_FORMS:
        assert form not in answer.text and form not in str(answer.data)
        found = gateway.call("invoices", {"status": "all", "query": form})
        assert "(no invoice)" in found.text, form
    store_file = gateway_home / ".cache" / "gateway" / "plugins" / "time" / "time.sqlite3"
    assert sample.IBAN.encode() not in store_file.read_bytes()
    assert gateway.call("invoices", {"status": "all", "query": "acme website"}).data["invoices"][0]["number"] == \
        "INV-2026-0042"


def test_hostile_pdfs_fail_alone_and_doctor_names_them(gateway_home: Path, made: dict) -> None:
    hostile = write_hostile(made["invoices"] / "inbox", made["invoices"] / "2026" / "lee-7.pdf")
    gateway = _gateway(gateway_home, made, max_seconds=1)
    answer = gateway.call("invoices", {"status": "all"})
    assert not answer.is_error
    assert {"INV-2026-0042", "L-7", "L-3"} <= {i["number"] for i in answer.data["invoices"]}
    assert f"{len(hostile)} invoice files could not be read (gateway doctor names them)." in answer.text
    assert "lol" not in answer.text and "laughs" not in answer.text  # the agent is told how many, not which
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(gateway_home)}
    doctor = subprocess.run(gateway_command("doctor"), env=env, capture_output=True, text=True,
                            timeout=120)
    said = doctor.stdout + doctor.stderr
    lines = {name: next((line for line in said.split("; ") if str(path) in line), "") for name, path in hostile.items()}
    assert "not a PDF that can be read" in lines["corrupt"]
    assert "not a PDF that can be read" in lines["cut"] or "no Factur-X" in lines["cut"]
    assert "holds no Factur-X or ZUGFeRD XML" in lines["no_xml"]
    assert "Limit reached while decompressing" in lines["pdf_bomb"] or "memory" in lines["pdf_bomb"]
    assert "could not be parsed" in lines["xml_bomb"] and "XML bomb" in lines["xml_bomb"]
    assert "took more than 1 s to read" in lines["endless"]
    # Read once: an unchanged hostile file is not read again (the next call does not wait for the endless one).
    again = gateway.call("invoices", {"status": "all"})
    assert again.text == answer.text
