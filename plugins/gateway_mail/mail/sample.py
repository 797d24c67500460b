"""Invented mail (reserved domains, RFC 2606) written into Maildirs: for the tests, the demo and the benchmark."""

from __future__ import annotations

import email.utils
import itertools
from email.message import EmailMessage
from pathlib import Path

_counter = itertools.count(1)


def make_folder(path: Path) -> Path:
    for sub in ("cur", "new", "tmp"):
        (path / sub).mkdir(parents=True, exist_ok=True)
    return path


def message(
    *, sender: str = "Ada Example <ada@example.org>", to: str = "Pat Example <pat@example.org>",
    subject: str = "Hello", body: str = "Hello there.", message_id: str | None = None, date: float | None = None,
    in_reply_to: str | None = None, references: list[str] | None = None, html: str | None = None,
    headers: dict[str, str] | None = None, attachment: tuple[str, bytes] | None = None, cc: str | None = None,
) -> EmailMessage:
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = to
    if cc:
        mail["Cc"] = cc
    mail["Subject"] = subject
    mail["Date"] = email.utils.formatdate(date, localtime=False)
    mail["Message-ID"] = f"<{message_id or f'm{next(_counter)}@example.org'}>"
    if in_reply_to:
        mail["In-Reply-To"] = f"<{in_reply_to}>"
    if references:
        mail["References"] = " ".join(f"<{r}>" for r in references)
    for name, value in (headers or {}).items():
        mail[name] = value
    mail.set_content(body)
    if html is not None:
        mail.add_alternative(html, subtype="html")
        if not body:
            mail.get_body(("plain",)).set_content("")
    if attachment:
        mail.add_attachment(attachment[1], maintype="application", subtype="pdf", filename=attachment[0])
    return mail


def deliver(folder: Path, mail: EmailMessage | bytes, *, flags: str | None = "S", name: str | None = None) -> Path:
    """Put a message in `folder`: into cur/ with `flags`, or into new/ when flags is None."""
    make_folder(folder)
    data = mail if isinstance(mail, bytes) else bytes(mail)
    unique = name or f"1700000000.M{next(_counter)}P1.example"
    path = folder / "new" / unique if flags is None else folder / "cur" / f"{unique}:2,{flags}"
    path.write_bytes(data)
    return path


OWN_SERVER = "mx.example.org"
IBAN = "FR14 2004 1010 0505 0001 3M02 606"  # a valid IBAN (mod 97), the standard example
CARD = "4111 1111 1111 1111"  # passes Luhn's check
CODE_BODY = (
    "Hello Pat,\n\nYour verification code is 482 913.\nOr type 482-913 on the page, or 48 29 13.\n"
    "Sign in here: https://accounts.example.com/verify?token=abcdef0123456789\n"
    + "\nThis part is long.\n" * 40
    + "\nRepeated far down: 482913\n\n> On Monday you wrote:\n> your code is 482913\n"
)


def authenticated(domain: str, verdict: str = "pass") -> dict[str, str]:
    return {"Authentication-Results": f"{OWN_SERVER}; spf={verdict} smtp.mailfrom={domain}; "
                                      f"dkim={verdict} header.d={domain}; dmarc={verdict} header.from={domain}"}


def world(root: Path, canary: str, now: float) -> dict[str, str]:
    """An account's Maildir in mbsync's layout, with one message of each kind the rules speak of.

    Returns the Message-IDs by role. The closed project (`vault`, senders `@vault.example.com`) holds `canary`
    in a message and in a reply of its conversation from an address of no project.
    """
    inbox, archive, drafts = root / "INBOX", root / "Archive" / "2026", root / "Drafts"
    make_folder(drafts)
    ids = {}

    def put(role: str, folder: Path, flags: str | None = "S", **fields) -> None:
        ids[role] = f"{role}@example.org"
        deliver(folder, message(message_id=ids[role], **fields), flags=flags)

    put("plumber", inbox, flags=None, sender="Joe Plumber <joe@plumbing.example.com>",
        subject="Invoice from the plumber", date=now - 3600, headers=authenticated("plumbing.example.com"),
        body=f"Please pay invoice 2026-118 to {IBAN}. Card on file {CARD}. Call 01 23 45 67 89.",
        attachment=("invoice.pdf", b"%PDF-1.4 invented"))
    put("code", inbox, sender="Bank <noreply@bank.example.com>", subject="482913 is your code",
        date=now - 600, body=CODE_BODY, headers=authenticated("bank.example.com"))
    put("table", inbox, sender="Shop <hello@shop.example.com>", subject="Your one-time code", date=now - 500,
        body="", html="<p>Your one-time code:</p><table><tr><td>7</td><td>3</td><td>9</td><td>1</td><td>5</td>"
                      "<td>6</td></tr></table><p>Order 55512 ships soon.</p>",
        headers=authenticated("shop.example.com"))
    put("password", inbox, sender="Admin <admin@host.example.net>", subject="Your new account", date=now - 400,
        body="Your code is 112233.\n\nYour temporary password is Xy7!pq9Zk\n")
    put("friend", inbox, sender="Ada Example <ada@example.net>", subject="Tuesday?", date=now - 7200,
        body="Does Tuesday work for you?", headers=authenticated("example.net"))
    put("forged", inbox, sender="Client CEO <ceo@client.example.com>", subject="Urgent wire", date=now - 300,
        body="Wire the money today. plumtree",
        headers={"Authentication-Results": f"{OWN_SERVER}; spf=fail smtp.mailfrom=evil.example.net; "
                                           "dmarc=fail header.from=client.example.com"})
    put("claimed", inbox, sender="Client CEO <ceo@client.example.com>", subject="Other words", date=now - 290,
        body="A claim of a pass from elsewhere. plumtree",
        headers={"Authentication-Results": "relay.example.net; dmarc=pass header.from=client.example.com"})
    put("vault", inbox, sender="Keeper <keeper@vault.example.com>", subject="Vault matters", date=now - 200,
        body=f"The word is {canary}. plumtree", headers=authenticated("vault.example.com"))
    put("vault_reply", inbox, sender="Someone <someone@example.net>", subject="Re: Vault matters",
        date=now - 100, body=f"Answering about {canary}. plumtree", in_reply_to=ids["vault"],
        references=[ids["vault"]])
    put("blocked", inbox, sender="Spam <win@spam.example.net>", subject="You won", date=now - 50,
        body="plumtree prizes")
    encrypted = (
        b"From: Secret <secret@example.org>\r\nTo: pat@example.org\r\nSubject: Sealed\r\n"
        b"Message-ID: <encrypted@example.org>\r\nDate: Mon, 30 Nov 2026 09:00:00 +0000\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: multipart/encrypted; protocol="application/pgp-encrypted"; boundary="b"\r\n\r\n'
        b"--b\r\nContent-Type: application/pgp-encrypted\r\n\r\nVersion: 1\r\n--b\r\n"
        b"Content-Type: application/octet-stream\r\n\r\n-----BEGIN PGP MESSAGE-----\r\nplumtree\r\n"
        b"-----END PGP MESSAGE-----\r\n--b--\r\n"
    )
    deliver(inbox, encrypted, flags="S")
    ids["encrypted"] = "encrypted@example.org"
    put("old", archive, sender="Ada Example <ada@example.net>", subject="Last year", date=now - 86400 * 40,
        body="An old plumtree letter.", headers=authenticated("example.net"))
    return ids


PROJECTS = [
    {"id": "vault", "name": "Vault", "ai": False, "senders": ["@vault.example.com"]},
    {"id": "client", "name": "Client", "ai": False, "senders": ["@client.example.com"]},
    {"id": "plumbing", "name": "Plumbing", "ai": True, "senders": ["@plumbing.example.com"]},
]


def config(root: Path, **mail: object) -> dict:
    account = {"name": "personal", "maildir": str(root), "addresses": ["pat@example.org"],
               "authserv_id": OWN_SERVER, "drafts": "Drafts"}
    return {"gateway": {"plugins": ["mail"]},
            "plugins": {"mail": {"accounts": [account], "blocked": ["@spam.example.net"], **mail}}}
