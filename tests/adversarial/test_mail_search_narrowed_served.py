"""search_mail's narrowing of an address or phrase by its rarest word, and a prefix asked as the OR of its words,
played against through a real `gateway serve` and the SDK's client, on one server that lives through new mail: an
agent asking for a closed project's sender by address, domain, phrase, words or prefix finds none of its mail (the
probe's bounds hold the kept messages, the statement still takes them out); and mail that comes between two calls,
newer or older than what a probe remembered, or holding a word a prefix's list lacked, is found by the next call."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from gateway_mail.mail import sample

from gateway.testing import serve_client, write_config

KEPT = "fenwortnarrowcanary"
CLOSED_SENDER = "Keeper <keeper@vault.example.com>"
OPEN_SENDER = "Ada Vault <ada@vault.example.net>"


def _text(result) -> str:
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {}, ensure_ascii=False)


def test_a_closed_senders_mail_stays_out_and_new_mail_is_found_whatever_the_probe_remembered(
        gateway_home: Path) -> None:
    inbox = gateway_home / "Mail" / "personal" / "INBOX"
    for number in range(30):  # common words in every message, the domain's words in few
        sample.deliver(inbox, sample.message(sender=f"Bo <bo{number}@mill.example.org>", subject=f"Note {number}",
                                             body="harvest apples", date=1_700_000_000 + number * 3600))
    for number in range(3):
        sample.deliver(inbox, sample.message(sender=CLOSED_SENDER, subject=f"Vault {KEPT}", body=f"harvest {KEPT}",
                                             date=1_700_050_000 + number * 60))
    sample.deliver(inbox, sample.message(sender=OPEN_SENDER, subject="Open vault", body="harvest",
                                         date=1_700_040_000, message_id="first@example.net"))
    config = sample.config(gateway_home / "Mail" / "personal", blocked=[])
    write_config(gateway_home, config, projects=[{"id": "vault", "ai": False, "senders": ["@vault.example.com"]}])
    asked = ["from:keeper@vault.example.com", "from:vault.example.com", "from:vault.example.net",
             "from:ada@vault.example.net", '"vault example"', "keeper vault", "from:example.com harvest",
             "fenwort*", "from:keep*", "vaultward*"]

    async def play():
        async with serve_client(gateway_home) as client:
            said = {"first": {q: await client.call_tool("search_mail", {"query": q}) for q in asked}}
            # New mail between two calls: one newer and one older than every match the probes found.
            sample.deliver(inbox, sample.message(sender=OPEN_SENDER, subject="Newer vault vaultwardens", body="harvest",
                                                 date=1_700_900_000, message_id="newer@example.net"))
            sample.deliver(inbox, sample.message(sender=OPEN_SENDER, subject="Older vault", body="harvest",
                                                 date=1_600_000_000, message_id="older@example.net"))
            sample.deliver(inbox, sample.message(sender=CLOSED_SENDER, subject=f"Late {KEPT}", body=KEPT,
                                                 date=1_700_950_000))
            said["after"] = {q: await client.call_tool("search_mail", {"query": q}) for q in asked}
            return said

    said = anyio.run(play)
    for when, results in said.items():
        for query, result in results.items():
            assert not result.is_error, _text(result)
            assert KEPT not in _text(result) and "keeper@" not in _text(result), (when, query)
            assert result.structured_content["left_out"] == (3 if when == "first" else 4), (when, query)
        for query in ("from:keeper@vault.example.com", "from:vault.example.com", "keeper vault", "fenwort*",
                      "from:keep*"):
            assert results[query].structured_content["hits"] == [], (when, query)
            assert results[query].structured_content["total"] == 0, (when, query)
    first = [h["address"] for h in said["first"]["from:vault.example.net"].structured_content["hits"]]
    after = [h["address"] for h in said["after"]["from:vault.example.net"].structured_content["hits"]]
    assert first == ["mid:first@example.net"]
    assert after == ["mid:newer@example.net", "mid:first@example.net", "mid:older@example.net"]
    assert said["after"]["from:ada@vault.example.net"].structured_content["total"] == 3
    assert said["after"]['"vault example"'].structured_content["total"] == 3
    # A prefix's words as the first call found them (none), and a word that came with the new mail: found.
    assert said["first"]["vaultward*"].structured_content["total"] == 0
    assert [h["address"] for h in said["after"]["vaultward*"].structured_content["hits"]] == ["mid:newer@example.net"]
