"""read_thread: a conversation as the gate groups it (Message-ID, In-Reply-To and every References id), one line per
message, and with whole: true each message framed as read_message frames it; what the gate keeps refused or left
out and counted, a blocked sender's only counted."""

from __future__ import annotations

import time
from pathlib import Path

import gateway_mail
import pytest
from gateway_mail.mail import sample

from gateway.testing import make_gateway

CANARY = "sealthreadcanary"


@pytest.fixture
def world(gateway_home: Path):
    root = gateway_home / "Mail" / "personal"
    now = time.time()
    ids = sample.world(root, CANARY, now)
    inbox, archive = root / "INBOX", root / "Archive" / "2026"
    garden = [
        ("garden-1", dict(sender="Ada Example <ada@example.net>", subject="The garden", body="Shall we plant?",
                          date=now - 5000)),
        # In-Reply-To only.
        ("garden-2", dict(sender="Pat Example <pat@example.org>", subject="Re: The garden", body="Yes, quinces.",
                          date=now - 4000, in_reply_to="garden-1@example.org")),
        # References without its first entry: joined through the id it does name.
        ("garden-3", dict(sender="Ada Example <ada@example.net>", subject="Re: Re: The garden",
                          body=f"Pay the nursery: {sample.IBAN}", date=now - 3000,
                          references=["garden-2@example.org"])),
        ("garden-spam", dict(sender="Spam <win@spam.example.net>", subject="Re: The garden", body="Buy seeds",
                             date=now - 2500, in_reply_to="garden-1@example.org")),
    ]
    for role, fields in garden:
        ids[role] = f"{role}@example.org"
        sample.deliver(inbox, sample.message(message_id=ids[role], **fields))
    # A copy of the first in the archive (given once) and another conversation of the same subject (not joined).
    sample.deliver(archive, sample.message(message_id=ids["garden-1"], sender="Ada Example <ada@example.net>",
                                           subject="The garden", body="Shall we plant?", date=now - 5000))
    sample.deliver(inbox, sample.message(message_id="other@example.org", sender="Ada Example <ada@example.net>",
                                         subject="The garden", body="Another garden.", date=now - 1000))

    def gateway():
        return make_gateway([gateway_mail], home=gateway_home, config=sample.config(root),
                            projects=sample.PROJECTS)

    return ids, gateway


def test_a_conversation_is_every_message_joined_by_its_ids_once_each_oldest_first(world) -> None:
    ids, gateway = world
    answer = gateway().call("read_thread", {"address": f"mid:{ids['garden-3']}"})
    assert not answer.is_error, answer.text
    assert [m["address"] for m in answer.data["messages"]] == [f"mid:{ids[r]}" for r in
                                                              ("garden-1", "garden-2", "garden-3")]
    assert answer.data["blocked"] == 1 and answer.data["left_out"] == 0
    assert "1 message from blocked senders, only counted." in answer.text and "Buy seeds" not in answer.text
    first = answer.data["messages"][0]
    assert first["from"] == "Ada Example <ada@example.net>" and first["subject"] == "The garden"
    assert first["size"] > 0 and first["projects"] == []
    assert f"1. {first['date']} · Ada Example <ada@example.net> · The garden · {first['size']:,} bytes" in answer.text
    assert "Another garden" not in answer.text and "other@example.org" not in answer.text
    assert "<<<data" not in answer.text  # the overview gives no text
    # From any message of it, the same conversation.
    again = gateway().call("read_thread", {"address": f"mid:{ids['garden-1']}"})
    assert again.data["messages"] == answer.data["messages"]


def test_whole_gives_every_message_framed_and_masked_as_read_message_does(world) -> None:
    ids, gateway = world
    answer = gateway().call("read_thread", {"address": f"mid:{ids['garden-2']}", "whole": True})
    assert not answer.is_error, answer.text
    assert answer.text.count("--- Message ") == 3 and "Yes, quinces." in answer.text
    assert "3M02 606" not in answer.text and "[IBAN" in answer.text  # masked, as read_message masks it
    marks = {part.split()[0] for part in answer.text.split("<<<data ")[1:]}
    assert len(answer.text.split("<<<data ")) == 4 and len(marks) == 1  # three frames, this answer's one mark
    assert [m["address"] for m in answer.data["whole"]] == [m["address"] for m in answer.data["messages"]]
    cut = gateway().call("read_thread", {"address": f"mid:{ids['garden-2']}", "whole": True, "limit": 1})
    assert cut.text.count("--- Message ") == 1 and "2 more messages not given whole (limit 1)" in cut.text
    assert marks.isdisjoint(part.split()[0] for part in cut.text.split("<<<data ")[1:])  # a new mark each answer


def test_a_closed_projects_conversation_is_refused_from_any_of_its_messages(world) -> None:
    ids, gateway = world
    served = gateway()
    for role in ("vault", "vault_reply"):
        answer = served.call("read_thread", {"address": f"mid:{ids[role]}", "whole": True})
        assert answer.is_error and "only the person can open it" in answer.text and CANARY not in answer.text
    unknown = served.call("read_thread", {"address": "mid:nothing-here@example.org"})
    kept = served.call("read_thread", {"address": f"mid:{ids['vault']}"}).text
    assert unknown.is_error and unknown.text == kept.replace(ids["vault"], "nothing-here@example.org")
    blocked = served.call("read_thread", {"address": f"mid:{ids['garden-spam']}"})
    assert blocked.is_error and "blocked" in blocked.text
    outside = served.call("read_thread", {"address": "/etc/passwd"})
    assert outside.is_error and "read_thread opens message files inside the accounts' mail folders only" in outside.text
