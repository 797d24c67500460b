"""For `gateway demo`: a small invented Maildir (reserved domains) and the mail account that reads it.

The demo's manifest (gateway/demo.py) has an open project `garden` (senders `@garden.example.org`) and a closed
one `lawsuit` (senders `@law.example.net`): one message of each, both authenticated by the account's own server
(only then does a sender place mail in a project), so the Porch and search show the first and count the second.
"""

from __future__ import annotations

import time
import tomllib
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


def make_demo(host: PluginHost) -> list[tuple[str, dict]]:
    root = Path.home() / "Mail" / ACCOUNT
    if not (root / "INBOX").is_dir():
        write_maildir(root, time.time())
    add_account(config_folder_of(host.folders.config) / "config.toml", root)
    return [
        ("porch", {"open": True}),
        ("search_mail", {"query": "compost OR fence OR invoice OR code"}),
        ("read_message", {"address": "mid:code@bank.example.com"}),
        ("read_message", {"address": "mid:fence@law.example.net"}),
        ("draft_reply", {"address": "mid:tuesday@example.net", "body": "Tuesday works. Pat"}),
    ]
