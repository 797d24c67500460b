"""A fixed corpus for the training tests, made again identically in every run: invented mail on reserved domains,
ham and spam sharing most of their words (so the filter is unsure of some), some messages in HTML with links, some
sent a second apart, one delivered twice and one message no parser is allowed to read.

`training_reference.json` beside this file holds what training gave for this corpus before the online evaluation
was made incremental: each message's score and strength in the order it was evaluated, the figures, and a digest
of the model's counts. Training must still give exactly these.
"""

from __future__ import annotations

import email.utils
import random
from email.message import EmailMessage
from pathlib import Path

from gateway_spam import sample

COMMON = tuple(f"{stem}{suffix}" for stem in ("word", "note", "line", "part", "item", "time", "plan", "list")
               for suffix in ("", "s", "ed", "er", "ing", "al", "ly", "ful"))
HAMMY = sample.HAM_WORDS + tuple(f"{stem}ham" for stem in ("tea", "walk", "book", "song", "yard", "shed", "fern"))
SPAMMY = sample.SPAM_WORDS + tuple(f"{stem}deal" for stem in ("mega", "giga", "ultra", "hyper", "turbo", "super"))
HAM_PEOPLE = tuple(f"{name} Example <{name.lower()}@example.{tld}>" for name, tld in
                   (("Ada", "org"), ("Ben", "net"), ("Cleo", "com"), ("Dev", "org"), ("Eli", "net")))
SPAM_PEOPLE = tuple(f"{name} <{name.lower()}@{domain}.example.{tld}>" for name, domain, tld in
                    (("Offers", "promo", "com"), ("Winner", "prize", "net"), ("Pharmacy", "pills", "org"),
                     ("Deals", "shop", "com")))
START = 1_780_000_000.0
MESSAGES = 360


def _words(rng: random.Random, leaning: tuple[str, ...], other: tuple[str, ...], count: int) -> str:
    picked = []
    for _ in range(count):
        roll = rng.random()
        pool = COMMON if roll < 0.55 else leaning if roll < 0.9 else other
        picked.append(pool[min(int(rng.paretovariate(1.2)) - 1, len(pool) - 1)])
    return " ".join(picked)


def _message(rng: random.Random, number: int, spam: bool, when: float) -> bytes:
    leaning, other = (SPAMMY, HAMMY) if spam else (HAMMY, SPAMMY)
    mail = EmailMessage()
    mail["From"] = rng.choice(SPAM_PEOPLE if spam else HAM_PEOPLE)
    mail["To"] = "Pat Example <pat@example.org>"
    mail["Subject"] = _words(rng, leaning, other, rng.randint(2, 6)).capitalize()
    mail["Date"] = email.utils.formatdate(when)
    mail["Message-ID"] = f"<m{number}@{'promo' if spam else 'mail'}.example.{'com' if spam else 'org'}>"
    text = _words(rng, leaning, other, rng.randint(15, 120))
    mail.set_content(text)
    if rng.random() < (0.5 if spam else 0.1):
        link = "http://offers.example.com/claim" if spam else "https://docs.example.org/minutes"
        mail.add_alternative(f"<html><body><p>{text}</p><a href='{link}'>here</a></body></html>", subtype="html")
        mail.set_boundary(f"==part{number}==")  # the email package would draw one at random: a token in each run
    return bytes(mail)


def write(root: Path, messages: int = MESSAGES, seed: int = 23) -> dict[str, Path]:
    """The corpus as one account's Maildir under `root` (Junk spam, INBOX ham); the paths of the special files."""
    rng = random.Random(seed)
    when = START
    last: bytes = b""
    for number in range(messages):
        spam = rng.random() < 0.4
        # Now and then one a second after the other. (Never two at the same second: their order would be the order
        # the folder lists its files in, which differs from one file system to another.)
        when += 1 if rng.random() < 0.05 else rng.randint(60, 7200)
        raw = _message(rng, number, spam, when)
        sample.deliver(root / ("Junk" if spam else "INBOX"), raw, when)
        last = raw if not spam else last
    special = {}
    # The same message again (delivered twice): one copy is read, the other counted as a duplicate.
    special["duplicate"] = sample.deliver(root / "INBOX", last, when + 1)
    # Nested deeper than the parser is allowed to go: counted unreadable, and nothing else changes.
    nested = b"".join(b'Content-Type: multipart/mixed; boundary="b%d"\n\n--b%d\n' % (i, i) for i in range(80))
    special["broken"] = sample.deliver(root / "Junk", b"From: x@example.com\nSubject: deep\nMIME-Version: 1.0\n"
                                       + nested, when + 2)
    return special
