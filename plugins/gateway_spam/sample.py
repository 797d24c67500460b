"""A hand-made corpus of invented mail (reserved domains, RFC 2606) in a Maildir: for the tests and the demo.

`write_mailbox(root)` makes one account's folders: INBOX and Archive (ham), Junk (spam), Notes (neither), with
messages in time order whose words tell ham from spam, plus the special cases the tests look for (named in
`SPECIAL`): a message whose subject holds a one-time code, one from a blocked sender, one in a closed project.
"""

from __future__ import annotations

import email.utils
import itertools
import random
from email.message import EmailMessage
from pathlib import Path

HAM_WORDS = tuple(
    [
        "garden",
        "plumtree",
        "meeting",
        "tuesday",
        "harvest",
        "compost",
        "orchard",
        "ladder",
        "invoice",
        "project",
        "draft",
        "minutes",
        "agenda",
        "seedlings",
        "watering",
        "neighbour",
        "bicycle",
        "library",
        "lecture",
        "recipe",
        "rehearsal",
        "choir",
        "quartet",
        "violin",
    ]
)
SPAM_WORDS = tuple(
    [
        "lottery",
        "winner",
        "pills",
        "discount",
        "casino",
        "prize",
        "viagra",
        "unclaimed",
        "inheritance",
        "bitcoin",
        "investment",
        "miracle",
        "guaranteed",
        "cheapest",
        "pharmacy",
        "jackpot",
        "exclusive",
        "bonus",
        "refinance",
        "replica",
        "wholesale",
    ]
)
HAM_SENDERS = ("Ada Example <ada@example.org>", "Ben Example <ben@example.net>", "Choir <choir@example.com>")
SPAM_SENDERS = (
    "Prize Desk <prize@winner.example.net>",
    "Pharmacy <deals@pills.example.com>",
    "Casino <vip@casino.example.org>",
)
BLOCKED_SENDER = "Pest <pest@blocked.example.net>"
CLOSED_SUBJECT = "Vault matters quinceboxcanary"
CANARY = "quinceboxcanary"
BODY_CANARY = "zebrabodyword"  # in every text, never in a subject: an answer holding it gave a message's text
SPECIAL = {"code": "code@example.org", "blocked": "blocked@example.org", "closed": "closed@example.org"}
START = 1_780_000_000.0  # a fixed moment, so the corpus is the same in every run
_counter = itertools.count(1)


def make_folder(path: Path) -> Path:
    for sub in ("cur", "new", "tmp"):
        (path / sub).mkdir(parents=True, exist_ok=True)
    return path


def message(
    sender: str, subject: str, body: str, date: float, message_id: str, html: str | None = None
) -> bytes:
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = "Pat Example <pat@example.org>"
    mail["Subject"] = subject
    mail["Date"] = email.utils.formatdate(date)
    mail["Message-ID"] = f"<{message_id}>"
    mail.set_content(body)
    if html is not None:
        mail.add_alternative(html, subtype="html")
    return bytes(mail)


def deliver(folder: Path, raw: bytes, when: float, flags: str = "S") -> Path:
    make_folder(folder)
    path = folder / "cur" / f"{int(when)}.M{next(_counter)}P1.example:2,{flags}"
    path.write_bytes(raw)
    return path


def _text(rng: random.Random, words: tuple[str, ...] | list[str], count: int) -> str:
    return " ".join(rng.choice(words) for _ in range(count)) + f". {BODY_CANARY}."


def write_mailbox(root: Path, messages: int = 40, now: float | None = None, seed: int = 7) -> dict[str, Path]:
    """One account's Maildir under `root`; `now` (default the fixed START) dates the newest messages."""
    rng = random.Random(seed)
    newest = now if now is not None else START
    written: dict[str, Path] = {}
    for number in range(messages):
        when = newest - (messages - number) * 3600
        if number % 2:
            subject = " ".join(rng.choice(SPAM_WORDS) for _ in range(3)).title() + "!"
            html = (
                f"<html><body><p>{_text(rng, SPAM_WORDS, 25)}</p><a href='http://winner.example.net/claim'>"
                "claim</a></body></html>"
            )
            raw = message(
                rng.choice(SPAM_SENDERS),
                subject,
                _text(rng, SPAM_WORDS, 25),
                when,
                f"spam{number}@winner.example.net",
                html=html,
            )
            deliver(root / "Junk", raw, when)
        else:
            subject = " ".join(rng.choice(HAM_WORDS) for _ in range(3)).capitalize()
            raw = message(
                rng.choice(HAM_SENDERS), subject, _text(rng, HAM_WORDS, 30), when, f"ham{number}@example.org"
            )
            deliver(root / ("INBOX" if number % 4 else "Archive"), raw, when)
    make_folder(root / "Notes")
    half = newest - 1800
    # A half-and-half message: the filter is unsure of it.
    mixed = message(
        "Dana Example <dana@example.com>",
        "Lottery garden tuesday",
        " ".join(HAM_WORDS[:8] + SPAM_WORDS[:8]) + f". {BODY_CANARY}.",
        half,
        "mixed@example.com",
    )
    written["mixed"] = deliver(root / "Notes", mixed, half)
    code = message(
        "Bank <noreply@bank.example.com>",
        "Your code 482913 jackpot bonus",
        f"Your verification code is 482913. jackpot bonus casino. {BODY_CANARY}.",
        half + 60,
        SPECIAL["code"],
    )
    written["code"] = deliver(root / "Junk", code, half + 60)
    blocked = message(
        BLOCKED_SENDER, "Cheapest pharmacy pills", _text(rng, SPAM_WORDS, 20), half + 120, SPECIAL["blocked"]
    )
    written["blocked"] = deliver(root / "Junk", blocked, half + 120)
    closed = message(
        "Keeper <keeper@vault.example.com>",
        CLOSED_SUBJECT,
        _text(rng, SPAM_WORDS, 20),
        half + 180,
        SPECIAL["closed"],
    )
    written["closed"] = deliver(root / "Junk", closed, half + 180)
    return written


def config(root: Path, **spam: object) -> dict:
    """A gateway config for one account at `root`, the spam plugin on, blocking BLOCKED_SENDER's domain."""
    return {
        "gateway": {"plugins": ["mail", "spam"]},
        "plugins": {
            "mail": {
                "accounts": [{"name": "personal", "maildir": str(root), "addresses": ["pat@example.org"]}],
                "blocked": ["@blocked.example.net"],
            },
            "spam": dict(spam),
        },
    }


PROJECTS = [
    {"id": "vault", "name": "Vault", "ai": False, "subjects": ["Vault matters"]},
    {"id": "garden", "name": "Garden", "ai": True, "subjects": ["plumtree"]},
]
