"""For `gateway demo`: a small invented Maildir (reserved domains) and the mail account that reads it; a task list
and a calendar as todoman and khal keep them, an address book as khard keeps it, and a notes folder.

The demo's manifest (gateway/commands/demo.py) has an open project `garden` (senders `@garden.example.org`) and a closed
one `lawsuit` (senders `@law.example.net`): one message of each, both authenticated by the account's own server
(only then does a sender place mail in a project), so the Porch and search show the first and count the second.
"""

from __future__ import annotations

import time
import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import tomli_w

from gateway import PluginHost
from gateway_mail.mail import sample
from gateway_mail.mail.store import config_folder_of

ACCOUNT = "demo"
# The closed project's word: the demo's answers show it nowhere (tests/plugins/mail/test_mail_demo.py).
CLOSED_WORD = "boundarysurvey"


def write_maildir(root: Path, now: float) -> None:
    """INBOX, Archive and Drafts in mbsync's layout, with one message of each kind the Porch speaks of."""
    inbox, archive = root / "INBOX", root / "Archive"
    sample.make_folder(root / "Drafts")
    mail = sample.message
    sample.deliver(inbox, mail(
        message_id="compost@garden.example.org", sender="Bo Gardener <bo@garden.example.org>", date=now - 1800,
        subject="Compost rota for Saturday", headers=sample.authenticated("garden.example.org"),
        body="Hi Pat,\n\nCould you turn the compost on Saturday? Ada has the sieve.\n\nBo"), flags=None)
    sample.deliver(inbox, mail(
        message_id="fence@law.example.net", sender="Lee Counsel <lee@law.example.net>", date=now - 3600,
        subject="The fence: our client's position", headers=sample.authenticated("law.example.net"),
        body=f"Dear Pat,\n\nPlease find our reading of the {CLOSED_WORD} attached.\n\nLee"), flags=None)
    sample.deliver(inbox, mail(
        message_id="code@bank.example.com", sender="Bank <noreply@bank.example.com>", date=now - 600,
        subject="Your sign-in code", headers=sample.authenticated("bank.example.com"),
        body="Your verification code is 613508. It expires in 10 minutes.\n"
             "Or sign in here: https://bank.example.com/verify?token=abcdef0123456789"), flags=None)
    sample.deliver(inbox, mail(
        message_id="tuesday@example.net", sender="Ada Example <ada@example.net>", date=now - 7200,
        subject="Tuesday?", headers=sample.authenticated("example.net"),
        body="Does Tuesday work for the seed order?"), flags="S")
    sample.deliver(inbox, mail(
        message_id="wire@garden.example.org", sender="Garden Treasurer <treasurer@garden.example.org>",
        date=now - 900, subject="Urgent: wire the seed money today",
        headers={"Authentication-Results": f"{sample.OWN_SERVER}; spf=fail smtp.mailfrom=evil.example.com; "
                                           "dmarc=fail header.from=garden.example.org"},
        body="Please wire 900 EUR today."), flags=None)
    sample.deliver(archive, mail(
        message_id="invoice@plumbing.example.com", sender="Joe Plumber <joe@plumbing.example.com>",
        date=now - 86400 * 20, subject="Invoice for the shed tap", headers=sample.authenticated("plumbing.example.com"),
        body=f"Please pay the invoice to {sample.IBAN}. Thank you."), flags="S")


def add_account(config_file: Path, root: Path) -> None:
    """The demo account in the gateway's config, unless the config already gives the mail plugin accounts."""
    config = tomllib.loads(config_file.read_text()) if config_file.exists() else {}
    table = config.setdefault("plugins", {}).setdefault("mail", {})
    if table.get("accounts"):
        return
    table["accounts"] = [{"name": ACCOUNT, "maildir": str(root), "addresses": ["pat@example.org"],
                          "authserv_id": sample.OWN_SERVER, "drafts": "Drafts"}]
    config_file.parent.mkdir(parents=True, exist_ok=True)
    config_file.write_text(tomli_w.dumps(config))


def write_organizer(home: Path, now: datetime) -> dict[str, str]:
    """Tasks, a calendar, contacts and notes under `home`, each with a garden thing and a lawsuit thing."""
    from gateway_mail.plan.sample import ics, put

    vdir = home / ".local" / "share" / "vdirsyncer"
    stamp = f"DTSTAMP:{now.strftime('%Y%m%dT%H%M%SZ')}"
    today = now.date()
    tasks, calendars = vdir / "tasks", vdir / "calendars"
    put(tasks / "garden", "demo-compost", ics("VTODO", "demo-compost", [
        stamp, "SUMMARY:Turn the compost", "STATUS:NEEDS-ACTION", "PRIORITY:1", "CATEGORIES:project:garden",
        f"DUE;VALUE=DATE:{(today + timedelta(days=2)).strftime('%Y%m%d')}"]))
    put(tasks / "garden", "demo-seeds", ics("VTODO", "demo-seeds", [
        stamp, "SUMMARY:Order the spring seeds", "STATUS:NEEDS-ACTION", "CATEGORIES:project:garden"]))
    put(tasks / "errands", "demo-bulbs", ics("VTODO", "demo-bulbs", [
        stamp, "SUMMARY:Buy light bulbs", "STATUS:NEEDS-ACTION"]))
    put(tasks / "errands", "demo-survey", ics("VTODO", "demo-survey", [
        stamp, f"SUMMARY:Send the {CLOSED_WORD} to Lee", "STATUS:NEEDS-ACTION", "PRIORITY:1",
        "CATEGORIES:project:lawsuit"]))
    day = (today + timedelta(days=1)).strftime("%Y%m%d")
    put(calendars / "home", "demo-workday", ics("VEVENT", "demo-workday", [
        stamp, "SUMMARY:Garden work day", f"DTSTART:{day}T090000Z", f"DTEND:{day}T120000Z",
        "LOCATION:The allotments", "CATEGORIES:project:garden"]))
    put(calendars / "home", "demo-hearing", ics("VEVENT", "demo-hearing", [
        stamp, f"SUMMARY:Hearing about the {CLOSED_WORD}", f"DTSTART:{day}T140000Z", f"DTEND:{day}T150000Z",
        "CATEGORIES:project:lawsuit"]))
    book = vdir / "contacts" / "personal"
    book.mkdir(parents=True, exist_ok=True)
    (book / "bo.vcf").write_text("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:demo-bo\r\nFN:Bo Gardener\r\n"
                                 "N:Gardener;Bo;;;\r\nEMAIL:bo@garden.example.org\r\nORG:Community garden\r\n"
                                 "NOTE:Keeps the compost rota\r\nEND:VCARD\r\n")
    (book / "lee.vcf").write_text("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:demo-lee\r\nFN:Lee Counsel\r\n"
                                  "N:Counsel;Lee;;;\r\nEMAIL:lee@law.example.net\r\n"
                                  f"NOTE:Our lawyer for the {CLOSED_WORD}\r\nEND:VCARD\r\n")
    notes = home / "Notes"
    (notes / "garden").mkdir(parents=True, exist_ok=True)
    (notes / "garden" / "Compost plan.md").write_text(
        "# Compost plan\n\nTurn the heap every Saturday; Bo keeps the rota. Seeds to order in March.\n")
    (notes / "Reading list.md").write_text("# Reading list\n\n- A book about soil\n")
    return {"tasks": str(tasks), "calendars": str(calendars), "contacts": str(vdir / "contacts"),
            "notes": str(notes), "default_list": "errands"}


def add_organizer(config_file: Path, table: dict[str, str]) -> None:
    """The organizer's folders in the gateway's config, for the keys the config does not give yet."""
    config = tomllib.loads(config_file.read_text()) if config_file.exists() else {}
    mail = config.setdefault("plugins", {}).setdefault("mail", {})
    for key, value in table.items():
        mail.setdefault(key, value)
    config_file.parent.mkdir(parents=True, exist_ok=True)
    config_file.write_text(tomli_w.dumps(config))


def make_demo(host: PluginHost) -> list[tuple[str, dict]]:
    root = Path.home() / "Mail" / ACCOUNT
    if not (root / "INBOX").is_dir():
        write_maildir(root, time.time())
    config_file = config_folder_of(host.folders.config) / "config.toml"
    add_account(config_file, root)
    if not (Path.home() / "Notes").is_dir():
        add_organizer(config_file, write_organizer(Path.home(), datetime.now(UTC)))
    return [
        ("porch", {"open": True}),
        ("search_mail", {"query": "compost OR fence OR invoice OR code"}),
        ("read_message", {"address": "mid:code@bank.example.com"}),
        ("read_message", {"address": "mid:fence@law.example.net"}),
        ("draft_reply", {"address": "mid:tuesday@example.net", "body": "Tuesday works. Pat"}),
        ("list_tasks", {}),
        ("agenda", {"days": 7}),
        ("search_contacts", {"query": "garden"}),
        ("search_notes", {"query": "compost"}),
        ("find", {"query": "compost"}),
        ("read_project", {"address": "sioul:project/garden"}),
    ]
