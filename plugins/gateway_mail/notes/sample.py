"""Invented contacts and notes (reserved domains, RFC 2606): for the tests, the demo and the benchmark."""

from __future__ import annotations

import random
import uuid
from pathlib import Path

IBAN = "FR14 2004 1010 0505 0001 3M02 606"  # a valid IBAN (mod 97), the standard example

PROJECTS = [
    {"id": "vault", "name": "Vault", "ai": False, "senders": ["@vault.example.com"],
     "client": "keeper@vault.example.com", "paths": ["~/Notes/Vault"]},
    {"id": "client", "name": "Client", "ai": False, "senders": ["@client.example.com"]},
    {"id": "plumbing", "name": "Plumbing", "ai": True, "senders": ["@plumbing.example.com"],
     "client": "Paul Plumber", "paths": ["~/Notes/Plumbing"]},
]


def vcard(uid: str, name: str, email: str = "", tel: str = "", org: str = "", note: str = "",
          version: str = "3.0", extra: str = "") -> str:
    family, _, given = name.partition(" ")[::-1]
    lines = ["BEGIN:VCARD", f"VERSION:{version}", f"UID:{uid}", f"FN:{name}", f"N:{family};{given};;;"]
    if email:
        lines.append(f"EMAIL;TYPE=work:{email}")
    if tel:
        lines.append(f"TEL;TYPE=cell:{tel}")
    if org:
        lines.append(f"ORG:{org}")
    if note:
        lines.append(f"NOTE:{note}")
    if extra:
        lines.append(extra)
    lines.append("END:VCARD")
    return "\r\n".join(lines) + "\r\n"


def contacts(root: Path, canary: str) -> dict[str, str]:
    """A vdir of one address book: ada (no project), the vault's keeper (a closed project's client, holding the
    canary word), the plumber (an open project's client), someone with an IBAN in a note. Their UIDs by role."""
    book = root / "default"
    book.mkdir(parents=True, exist_ok=True)
    cards = {
        "ada": vcard("ada-1", "Ada Lovelace", "ada@example.org", "+33 6 11 22 33 44", "Example Org",
                     "Met at the plumtree conference"),
        "keeper": vcard("keeper-1", "Kim Keeper", "keeper@vault.example.com", "", "Vault",
                        f"plumtree; the word is {canary}"),
        "plumber": vcard("plumber-1", "Paul Plumber", "paul@plumbing.example.com", "+33 1 00 00 00 00",
                         "Plumbing SARL", "plumtree pipes", version="4.0"),
        "banker": vcard("banker-1", "Bea Banker", "bea@example.net", note=f"IBAN {IBAN}"),
    }
    for role, card in cards.items():
        (book / f"{role}-1.vcf").write_text(card, encoding="utf-8", newline="")
    return {role: f"{role}-1" for role in cards}


def notes(root: Path, canary: str) -> dict[str, str]:
    """A notes folder: a welcome note, the closed vault's note (the canary), the open plumbing project's, one with
    an IBAN. Their paths under the folder, by role."""
    written = {
        "welcome": ("Welcome.md", "# Welcome\n\nplumtree ideas for the garden.\n"),
        "vault": ("Vault/secret.md", f"# Vault plan\n\nplumtree and {canary}.\n"),
        "plumbing": ("Plumbing/quote.md", "# Quote\n\nplumtree pipes, Thursday.\n"),
        "bank": ("Bank.md", f"# Bank\n\nplumtree account {IBAN}\n"),
    }
    for relative, text in written.values():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return {role: relative for role, (relative, _text) in written.items()}


WORDS = ("plumber", "garden", "invoice", "meeting", "quote", "roof", "boiler", "pipes", "window", "paint", "school",
         "doctor", "insurance", "bank", "train", "holiday", "birthday", "dinner", "review", "draft", "contract",
         "lease", "tax", "garage", "bicycle", "piano", "recipe", "market")


def vocabulary(rng: random.Random, size: int = 3000) -> tuple[list[str], list[float]]:
    """WORDS first, then invented words; weights falling as 1/rank (Zipf), as in written text."""
    syllables = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "si", "pe", "do", "gu", "ba", "zi", "fo", "le", "ni"]
    words = list(WORDS)
    while len(words) < size:
        word = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
        if word not in words:
            words.append(word)
    return words, [1 / (rank + 1) for rank in range(len(words))]


def many(notes_root: Path, contacts_root: Path, note_count: int, contact_count: int, seed: int = 11) -> None:
    """A big world for the benchmark: notes in 100 folders, contacts in one address book (seeded)."""
    rng = random.Random(seed)
    words, weights = vocabulary(rng)
    for number in range(note_count):
        folder = notes_root / f"folder{number % 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        text = " ".join(rng.choices(words, weights, k=rng.randint(40, 400)))
        (folder / f"note{number:05d}.md").write_text(f"# Note {number} {rng.choice(WORDS)}\n\n{text}\n")
    book = contacts_root / "default"
    book.mkdir(parents=True, exist_ok=True)
    for number in range(contact_count):
        uid = str(uuid.UUID(int=rng.getrandbits(128)))
        name = f"{rng.choice(['Ada', 'Bea', 'Cy', 'Dee', 'Eve'])} {rng.choice(words).title()}{number}"
        (book / f"{uid}.vcf").write_text(vcard(uid, name, f"person{number}@example.org", org=rng.choice(words),
                                               note=" ".join(rng.choices(words, weights, k=8))))


ALL_PROJECTS = [*PROJECTS, {"id": "dupont", "name": "Dupont kitchen", "ai": True,
                            "client": "claire.dupont@example.com"}]


def everything(home: Path, canary: str) -> dict:
    """Mail, tasks, events, contacts and notes under `home`, the closed vault holding the canary word in each
    (a message and its reply, a task and a step of it, an event, a contact, a note); the config for all of them."""
    import time
    from datetime import UTC, datetime

    from gateway_mail.mail import sample
    from gateway_mail.plan import sample as sample_plan

    mail_root = home / "Mail" / "personal"
    ids = sample.world(mail_root, canary, time.time())
    plan = sample_plan.world(home, canary, datetime.now(UTC))
    notes_root = home / "Notes"
    contacts_root = home / ".local" / "share" / "vdirsyncer" / "contacts"
    paths = notes(notes_root, canary)
    uids = contacts(contacts_root, canary)
    config = sample.config(mail_root, notes=str(notes_root), contacts=str(contacts_root))
    config["plugins"]["mail"].update(sample_plan.config(home)["plugins"]["mail"])
    return {"ids": ids, "plan": plan, "notes": notes_root, "contacts": contacts_root, "paths": paths,
            "uids": uids, "config": config, "projects": ALL_PROJECTS}
