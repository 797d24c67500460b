"""The exports as files from strangers: each text once across exports, read incrementally, a malformed or hostile
export failing alone within its bounds, and numbers matched to routes however they are written."""

from __future__ import annotations

import time
from pathlib import Path

import gateway_texts
import pytest
from gateway_texts import sample
from gateway_texts.exports import Bounds, ExportError, read_texts

from gateway.testing import make_gateway

CANARY = "kelpcanary"

BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE smses [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<smses count="1"><sms address="+1 212-555-0160" date="1764579600000" type="1" body="&lol9;" /></smses>
"""

EXTERNAL = """<?xml version="1.0"?>
<!DOCTYPE smses [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<smses count="1"><sms address="+1 212-555-0161" date="1764579600000" type="1" body="&secret;" /></smses>
"""


def _gateway(home: Path, **settings):
    made = sample.everything(home, CANARY)
    made["config"]["plugins"]["texts"].update(settings)
    return made, make_gateway([gateway_texts], home=home, config=made["config"], projects=made["projects"])


def test_a_text_in_two_exports_is_given_once_and_goes_with_the_last(gateway_home: Path) -> None:
    made, gateway = _gateway(gateway_home)
    answer = gateway.call("read_conversation", {"address": sample.ADA})
    assert answer.text.count("Dinner on Friday") == 1 and "See you soon" in answer.text
    first, second = sorted(made["exports"].glob("sms-*.xml"))
    second.unlink()  # the other phone's export goes: the text both held stays, the one only it held goes
    answer = gateway.call("read_conversation", {"address": sample.ADA})
    assert answer.text.count("Dinner on Friday") == 1 and "See you soon" not in answer.text
    first.unlink()
    listed = gateway.call("list_conversations")
    assert "(no conversation)" in listed.text and "Dinner" not in gateway.call("search_texts", {"query": "dinner"}).text


def test_a_new_export_is_read_and_an_unchanged_one_is_not(gateway_home: Path) -> None:
    made, gateway = _gateway(gateway_home)
    gateway.call("list_conversations")
    store = gateway_home / ".cache" / "gateway" / "plugins" / "texts" / "texts.sqlite3"
    assert store.exists()
    now = made["now"]
    (made["exports"] / "sms-20261202090000.xml").write_text(sample.smses([
        sample.sms(sample.LEE, now, "A new phone, a new export: hello from Lee.", 1, "Lee Sample")]))
    listed = gateway.call("list_conversations")
    assert "+12125550150  Lee Sample" in listed.text
    # An unchanged store is not read again: its texts, once read, are only in the store (the export's file can
    # be replaced by one with the same size and time, as a backup tool restores it, and the store keeps its rows).
    found = gateway.call("search_texts", {"query": "hello Lee"})
    assert "A new phone" in found.text


def test_a_malformed_export_fails_only_itself(gateway_home: Path) -> None:
    made, gateway = _gateway(gateway_home)
    (made["exports"] / "sms-20261203090000.xml").write_text(
        "<?xml version='1.0' encoding='UTF-8'?>\n<smses count=\"2\"><sms address=\"+1 212-555-0163\" body=\"cut")
    (made["exports"] / "calls-20261203090000.xml").write_bytes(b"\x00\xff not xml at all")
    listed = gateway.call("list_conversations")
    assert not listed.is_error and "+12125550142  Ada Example" in listed.text
    assert "export not read: sms-20261203090000.xml: sms-20261203090000.xml is not well-formed XML" in listed.text
    assert "calls-20261203090000.xml" in listed.text and "export it again" in listed.text
    calls = gateway.call("list_calls")
    assert not calls.is_error and "declined" in calls.text


@pytest.mark.parametrize("attack", [BILLION_LAUGHS, EXTERNAL], ids=["billion-laughs", "external-entity"])
def test_an_entity_attack_fails_only_itself(gateway_home: Path, attack: str) -> None:
    made, gateway = _gateway(gateway_home)
    (made["exports"] / "sms-20261204090000.xml").write_text(attack)
    listed = gateway.call("list_conversations")
    assert not listed.is_error and "+12125550142  Ada Example" in listed.text
    assert "declares XML entities or external references" in listed.text
    assert "lol" not in listed.text and "root:" not in listed.text
    assert "root:" not in gateway.call("search_texts", {"query": "root"}).text


def test_the_bounds_hold_on_a_large_export(tmp_path: Path) -> None:
    now = sample.datetime.now(sample.UTC)
    path = tmp_path / "sms-1.xml"
    path.write_text(sample.smses([sample.sms(sample.ADA, now, f"text {n}") for n in range(3000)]))
    assert len(read_texts(path, Bounds(1 << 20, 10_000, 60))) == 3000
    with pytest.raises(ExportError, match="more than 1,000 elements"):
        read_texts(path, Bounds(1 << 20, 1000, 60))
    with pytest.raises(ExportError, match="over the limit of 0 MiB"):
        read_texts(path, Bounds(1000, 10_000, 60))
    started = time.monotonic()
    with pytest.raises(ExportError, match="took more than"):
        read_texts(path, Bounds(1 << 20, 10_000, 1e-9))
    assert time.monotonic() - started < 30  # a bound stops the read: this guards against a hang, it times nothing


def test_an_export_past_its_bounds_fails_only_itself(gateway_home: Path) -> None:
    made, gateway = _gateway(gateway_home, max_elements=1000)
    now = made["now"]
    (made["exports"] / "sms-20261205090000.xml").write_text(sample.smses(
        [sample.sms(sample.LEE, now, f"flood {n}") for n in range(1500)]))
    listed = gateway.call("list_conversations")
    assert "+12125550142  Ada Example" in listed.text and "more than 1,000 elements" in listed.text
    assert not any(line.startswith("+12125550150  ") for line in listed.text.splitlines())
    assert "(no text found)" in gateway.call("search_texts", {"query": "flood"}).text


def test_numbers_are_matched_to_routes_however_written(gateway_home: Path) -> None:
    """A route written `+1 212 555 0177` keeps a number the phone wrote `(212) 555-0177` (the region given), and a
    card's number written `06 39 98 01 23` is the export's `+33 6 39 98 01 23`: that card's address keeps it."""
    made, gateway = _gateway(gateway_home, region="US")
    now = made["now"]
    (made["exports"] / "sms-20261206090000.xml").write_text(sample.smses([
        sample.sms("(212) 555-0177", now, f"national {CANARY}", 1), sample.sms("+33639980123", now, f"e164 {CANARY}", 1)]))
    listed = gateway.call("list_conversations")
    assert "2125550177" not in listed.text and "+33639980123" not in listed.text and "left out" in listed.text
    for address in ("(212) 555-0177", "+1 212 555 0177", "+33 6 39 98 01 23"):
        assert gateway.call("read_conversation", {"address": address}).is_error
    assert CANARY not in gateway.call("search_texts", {"query": CANARY}).text


def test_things_outside_projects_closed_keep_every_conversation_and_call(gateway_home: Path) -> None:
    made = sample.everything(gateway_home, CANARY)
    made["config"]["access"] = {"outside_projects": False}
    gateway = make_gateway([gateway_texts], home=gateway_home, config=made["config"], projects=made["projects"])
    listed = gateway.call("list_conversations")
    assert "(no conversation)" in listed.text and "5 conversations left out" in listed.text
    assert "(no call" in gateway.call("list_calls").text
    assert gateway.call("read_conversation", {"address": sample.ADA}).is_error
    assert gateway.call("draft_text", {"address": sample.ADA, "body": "hello"}).is_error
    assert not (gateway_home / ".local" / "share" / "gateway" / "plugins" / "texts" / "drafts").exists()


def test_a_card_added_closes_its_conversation_from_the_next_call(gateway_home: Path) -> None:
    made = sample.everything(gateway_home, CANARY)
    card = made["contacts"] / "kim.vcf"
    text = card.read_text()
    card.unlink()
    gateway = make_gateway([gateway_texts], home=gateway_home, config=made["config"], projects=made["projects"])
    assert "+33639980123" in gateway.call("list_conversations").text  # no card: nothing ties the number to vault
    card.write_text(text)
    listed = gateway.call("list_conversations")
    assert "+33639980123" not in listed.text and "2 conversations left out" in listed.text
    assert gateway.call("read_conversation", {"address": sample.KIM}).is_error


def test_a_region_changed_reads_the_exports_again(gateway_home: Path) -> None:
    made, gateway = _gateway(gateway_home)
    now = made["now"]
    (made["exports"] / "sms-20261207090000.xml").write_text(sample.smses([
        sample.sms("(212) 555-0133", now, "Written the American way.", 1)]))
    assert "2125550133  " in gateway.call("list_conversations").text  # region FR: not a full number
    made["config"]["plugins"]["texts"]["region"] = "US"
    gateway = make_gateway([gateway_texts], home=gateway_home, config=made["config"], projects=made["projects"])
    listed = gateway.call("list_conversations").text
    assert "+12125550133  " in listed and "+12125550142  Ada Example" in listed


@pytest.fixture
def in_paris(computer_zone_is) -> None:  # noqa: ANN001
    """The computer's zone is Europe/Paris, for this test alone."""
    computer_zone_is("Europe/Paris")


def test_in_the_computers_zone_a_text_of_summer_and_one_of_winter_each_show_their_own_hour(
        gateway_home: Path, in_paris: None) -> None:
    # Noon UTC is 13:00 in Paris in winter and 14:00 in summer: whatever the season of the day the test runs, one
    # of the two has another offset than today.
    made, gateway = _gateway(gateway_home, timezone="")
    (made["exports"] / "sms-20261206090000.xml").write_text(sample.smses([
        sample.sms(sample.ADA, sample.datetime(2026, 1, 16, 12, 0, tzinfo=sample.UTC), "Winter pears", 1, "Ada Example"),
        sample.sms(sample.ADA, sample.datetime(2026, 7, 16, 12, 0, tzinfo=sample.UTC), "Summer pears", 1, "Ada Example"),
    ]))
    answer = gateway.call("read_conversation", {"address": sample.ADA, "limit": 50})
    assert not answer.is_error, answer.text
    lines = answer.text.splitlines()
    assert any(line.startswith("2026-01-16 13:00 ") and "Winter pears" in line for line in lines), answer.text
    assert any(line.startswith("2026-07-16 14:00 ") and "Summer pears" in line for line in lines), answer.text
