"""A Maildir with mail to a shielded press address, and stub judges: shared by the shield's tests."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from gateway_mail.mail import sample

PRESS = "press@example.org"
HOSTILE_CANARY = "wolfsbanecanary"  # only in the hostile messages, in the subject, the text and the Message-ID
HOSTILE_WORDS = "you will regret this, vile scum, we know where you live"
KIND_WORDS = "thank you for the interview, a lovely article about the orchard"

# A judge as a person might write one: reads the message on stdin, prints its verdict. Hostile when the text holds
# the canary (the word a test looks for in every answer); "ok" otherwise.
JUDGE = f"""import sys
data = sys.stdin.buffer.read()
sys.stderr.write("judging: " + data.decode("utf-8", "replace")[:2000])
print("hostile" if b"{HOSTILE_CANARY}" in data else "ok")
"""
# A judge that hangs: reads nothing, sleeps far past any timeout.
HANGING = "import time\ntime.sleep(3600)\n"


def write_judge(folder: Path, source: str = JUDGE, name: str = "judge.py") -> list[str]:
    """The judge's file and the command that runs it (no shell)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(source)
    return [sys.executable, str(path)]


def world(root: Path, now: float | None = None) -> dict[str, str]:
    """An account whose INBOX holds, by role: hostile mail to the press address (by To, by Delivered-To only: a
    blind copy), kind mail to it, and mail to the person's own address that holds the same hostile words (never
    shielded). Returns the Message-IDs by role."""
    now = time.time() if now is None else now
    inbox = root / "INBOX"
    sample.make_folder(root / "Drafts")
    ids: dict[str, str] = {}

    def put(role: str, minutes: int, **fields) -> None:
        ids[role] = fields.pop("message_id", f"{role}@example.net")
        sample.deliver(inbox, sample.message(message_id=ids[role], date=now - minutes * 60, **fields), flags="S")

    put("hostile", 50, message_id=f"{HOSTILE_CANARY}@troll.example.net", sender="Troll <troll@troll.example.net>",
        to=f"Press <{PRESS}>", subject=f"About your article {HOSTILE_CANARY}",
        body=f"{HOSTILE_WORDS}. {HOSTILE_CANARY}. plumtree")
    put("blind", 40, sender="Other Troll <other@troll.example.net>", to="Someone <someone@example.com>",
        subject=f"Blind {HOSTILE_CANARY}", body=f"{HOSTILE_WORDS} {HOSTILE_CANARY} plumtree",
        headers={"Delivered-To": PRESS})
    put("kind", 30, sender="Reader <reader@example.com>", to=f"Press <{PRESS}>", subject="Your article",
        body=f"{KIND_WORDS}. plumtree")
    put("private", 20, sender="Ada Example <ada@example.net>", to="Pat Example <pat@example.org>",
        subject="Quoting the troll", body="Someone wrote: you will regret this. plumtree")
    return ids


def config(root: Path, **mail: object) -> dict:
    mail.setdefault("shielded", [PRESS])
    return sample.config(root, **mail)
