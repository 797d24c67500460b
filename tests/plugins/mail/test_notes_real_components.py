"""Contacts against the real khard (PyPI, in the test extra): the same vdir read by both.

khard lists the fixture vCards (3.0 and 4.0) as we wrote them; a contact khard itself writes (`khard new` from a
YAML template) is found by search_contacts, masked where it must be, and its UID is the one khard gave it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import gateway_mail
from gateway_mail.notes import sample as sample_notes

from gateway.testing import make_gateway

KHARD = Path(sys.executable).with_name("khard")


def _khard(home: Path, *arguments: str) -> str:
    environment = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    done = subprocess.run([str(KHARD), *arguments], env=environment, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_khard_and_search_contacts_read_the_same_address_book(gateway_home: Path, tmp_path: Path) -> None:
    contacts = gateway_home / ".local" / "share" / "vdirsyncer" / "contacts"
    sample_notes.contacts(contacts, "nocanaryhere")
    (gateway_home / ".config" / "khard").mkdir(parents=True)
    (gateway_home / ".config" / "khard" / "khard.conf").write_text(
        f"[addressbooks]\n[[default]]\npath = {contacts / 'default'}\n\n"
        "[general]\neditor = /bin/true\nmerge_editor = /bin/true\ndefault_action = list\n")
    listed = _khard(gateway_home, "list", "--parsable")
    for name in ("Ada Lovelace", "Kim Keeper", "Paul Plumber", "Bea Banker"):
        assert name in listed, listed
    template = tmp_path / "new.yaml"
    template.write_text("First name: Zed\nLast name: Zimmer\nOrganisation: Zimmer Works\n"
                        "Email:\n    work: zed@example.net\nPhone:\n    cell: \"+33 6 99 88 77 66\"\n"
                        f"Note: the zimmerroof project, IBAN {sample_notes.IBAN}\n")
    _khard(gateway_home, "new", "-a", "default", "-i", str(template))
    written = [p for p in (contacts / "default").glob("*.vcf") if "Zimmer" in p.read_text()]
    assert len(written) == 1
    uid = next(line[4:] for line in written[0].read_text().splitlines() if line.startswith("UID:"))
    config = {"gateway": {"plugins": ["mail"]}, "plugins": {"mail": {"contacts": str(contacts)}}}
    served = make_gateway([gateway_mail], home=gateway_home, config=config)
    found = served.call("search_contacts", {"query": "zimmerroof"})
    assert not found.is_error, found.text
    [zed] = found.data["contacts"]
    assert zed["address"] == f"sioul:contact/{uid}" and zed["name"] == "Zed Zimmer"
    assert zed["emails"] == ["zed@example.net"] and zed["org"] == "Zimmer Works"
    assert "2004 1010" not in found.text and "606" in zed["note"]
    four = served.call("search_contacts", {"query": "Plumber"}).data["contacts"]
    assert [c["address"] for c in four] == ["sioul:contact/plumber-1"]
    assert "Zed Zimmer" in _khard(gateway_home, "list", "--parsable")
