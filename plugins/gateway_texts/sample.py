"""Invented exports in SMS Backup & Restore's documented format, for the tests, the benchmark and the demo.

The people are invented, on numbers set aside for fiction: the North American 555-0100 to 555-0199 lines
(`+1 212 555 01xx`) and the French mobile range kept for films and books (`+33 6 39 98 xx xx`); their addresses
are on reserved domains (example.com, example.org, example.net).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from xml.sax.saxutils import quoteattr

ADA = "+1 212-555-0142"  # written as a phone writes it; normalised +12125550142
LEE = "+1 212-555-0150"
KIM = "+33 6 39 98 01 23"  # the closed project's client (by her card's address)
HARBOR = "+1 (212) 555-0177"  # a closed project's number, by a senders route written as a number
SHORT = "36111"  # a short number that sends codes
CODE = "482913"


def millis(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def sms(address: str, when: datetime, body: str, kind: int = 1, name: str = "") -> str:
    return (f"  <sms protocol=\"0\" address={quoteattr(address)} date=\"{millis(when)}\" type=\"{kind}\" "
            f"subject=\"null\" body={quoteattr(body)} toa=\"null\" sc_toa=\"null\" service_center=\"null\" "
            f"read=\"1\" status=\"-1\" locked=\"0\" date_sent=\"0\" sub_id=\"1\" "
            f"readable_date={quoteattr(when.strftime('%b %d, %Y %H:%M:%S'))} contact_name={quoteattr(name or '(Unknown)')} />\n")


def mms(addresses: list[str], when: datetime, body: str, sender: str = "", name: str = "") -> str:
    box = 1 if sender else 2
    addrs = "".join(f"      <addr address={quoteattr(a)} type=\"{137 if a == sender else 151}\" charset=\"106\" />\n"
                    for a in addresses)
    return (f"  <mms date=\"{millis(when)}\" ct_t=\"application/vnd.wap.multipart.related\" msg_box=\"{box}\" "
            f"address={quoteattr('~'.join(addresses))} m_type=\"{132 if sender else 128}\" read=\"1\" "
            f"contact_name={quoteattr(name or '(Unknown)')}>\n    <parts>\n"
            f"      <part seq=\"-1\" ct=\"application/smil\" name=\"null\" chset=\"null\" cd=\"null\" fn=\"null\" "
            f"cid=\"&lt;smil&gt;\" cl=\"smil.xml\" ctt_s=\"null\" ctt_t=\"null\" text=\"&lt;smil&gt;&lt;/smil&gt;\" />\n"
            f"      <part seq=\"0\" ct=\"text/plain\" name=\"null\" chset=\"106\" cd=\"null\" fn=\"null\" cid=\"null\" "
            f"cl=\"text_0.txt\" ctt_s=\"null\" ctt_t=\"null\" text={quoteattr(body)} />\n"
            f"    </parts>\n    <addrs>\n{addrs}    </addrs>\n  </mms>\n")


def smses(items: list[str]) -> str:
    return ("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n"
            "<!--File Created By SMS Backup & Restore v10.20.002 on 01/12/2026 09:00:00-->\n"
            f"<smses count=\"{len(items)}\" backup_set=\"5f6c1f7e\" backup_date=\"1764579600000\" type=\"full\">\n"
            + "".join(items) + "</smses>\n")


def call(number: str, when: datetime, kind: int, seconds: int = 0, name: str = "") -> str:
    return (f"  <call number={quoteattr(number)} duration=\"{seconds}\" date=\"{millis(when)}\" type=\"{kind}\" "
            f"presentation=\"1\" subscription_id=\"1\" readable_date={quoteattr(when.strftime('%b %d, %Y %H:%M:%S'))} "
            f"contact_name={quoteattr(name or '(Unknown)')} />\n")


def calls(items: list[str]) -> str:
    return ("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n"
            f"<calls count=\"{len(items)}\" backup_set=\"5f6c1f7e\" backup_date=\"1764579600000\" type=\"full\">\n"
            + "".join(items) + "</calls>\n")


def card(uid: str, name: str, number: str, email: str) -> str:
    return (f"BEGIN:VCARD\r\nVERSION:3.0\r\nUID:{uid}\r\nFN:{name}\r\nN:{name.split()[-1]};{name.split()[0]};;;\r\n"
            f"TEL;TYPE=CELL:{number}\r\nEMAIL:{email}\r\nEND:VCARD\r\n")


def everything(home: Path, canary: str) -> dict:
    """Exports, cards and the config and manifest that go with them; what the tests look for, by name."""
    now = datetime.now(UTC).replace(microsecond=0)
    day = timedelta(days=1)
    exports = home / "Phone" / "SMSBackupRestore"
    exports.mkdir(parents=True)
    contacts = home / ".local" / "share" / "vdirsyncer" / "contacts" / "personal"
    contacts.mkdir(parents=True)
    (contacts / "ada.vcf").write_text(card("ada-1", "Ada Example", "+1 212 555 0142", "ada@example.org"))
    (contacts / "kim.vcf").write_text(card("keeper-1", "Kim Keeper", "06 39 98 01 23", "keeper@vault.example.net"))
    first = [
        sms(ADA, now - 3 * day, "Dinner on Friday at the plumtree?", 1, "Ada Example"),
        sms(ADA, now - 3 * day + timedelta(minutes=5), "Yes, 8 pm. Bring the salad.", 2, "Ada Example"),
        sms(SHORT, now - 2 * day, f"Your Example verification code is {CODE}. Do not share it.", 1),
        sms(KIM, now - 2 * day, f"The {canary} papers are in the strongbox.", 1, "Kim Keeper"),
        sms(KIM, now - 2 * day + timedelta(minutes=1), f"Thanks, the {canary} key too?", 2, "Kim Keeper"),
        sms(HARBOR, now - day, f"Harbor slot confirmed, {canary} berth.", 1),
        mms([ADA, LEE], now - day, "Picnic on Sunday, who brings the plumtree cake?", sender=LEE),
        mms([ADA, LEE], now - day + timedelta(minutes=2), "Me!", sender=""),
        sms(ADA, now + 2 * day, "This one is held by the phone until its time.", 6, "Ada Example"),
        sms(ADA, now - 4 * day, "A draft never sent, plumtree", 3, "Ada Example"),
    ]
    (exports / "sms-20261201090000.xml").write_text(smses(first), encoding="utf-8")
    # A second phone's export (after a restore): the same first text again, and one more.
    second = [first[0], sms(ADA, now - timedelta(minutes=30), "See you soon, plumtree fan.", 1,
                             "Ada Example")]
    (exports / "sms-20261201093000.xml").write_text(smses(second), encoding="utf-8")
    (exports / "calls-20261201090000.xml").write_text(calls([
        call(ADA, now - day, 1, 125, "Ada Example"),
        call(LEE, now - day + timedelta(hours=1), 5, 0, "Lee Sample"),
        call(KIM, now - day + timedelta(hours=2), 3, 0, f"Kim Keeper {canary}"),
        call(HARBOR, now - day + timedelta(hours=3), 2, 61, f"Harbor {canary} office"),
    ]), encoding="utf-8")
    # The tests wait for the first read of these few texts (the core's refresh) rather than answer before it.
    config = {"gateway": {"refresh_budget_ms": 60_000}, "plugins": {"texts": {"enabled": True, "exports": str(exports), "contacts": str(contacts.parent),
                                    "region": "FR", "timezone": "UTC"}}}
    projects = [
        {"id": "vault", "name": "Vault matters", "ai": False, "client": "keeper@vault.example.net"},
        {"id": "harbor", "name": "Harbor", "ai": False, "senders": ["+1 212 555 0177"]},
    ]
    return {"exports": exports, "contacts": contacts, "config": config, "projects": projects, "now": now}
