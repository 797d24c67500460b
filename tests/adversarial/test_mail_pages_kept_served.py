"""search_mail's pages kept per index generation, played against through a real `gateway serve` and the SDK's client:
one server asked the same search again and again while the person closes a project, blocks a sender, and mail
arrives and is read. A page read before a change is never the answer after it."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from gateway_mail.mail import sample

from gateway.testing import serve_client, write_config

WORD = "damsonkeptcanary"
CLOSED = [{"id": "orchard", "ai": False, "senders": ["@orchard.example.com"]}]


def _text(result) -> str:
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {}, ensure_ascii=False)


def test_a_page_kept_never_outlives_a_closed_project_a_blocked_sender_or_new_mail(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    sample.deliver(root / "INBOX", sample.message(sender="Ann <ann@orchard.example.com>", subject=f"Plums {WORD}",
                                                  body="the orchard's secret plums", message_id="orchard@example.org",
                                                  date=1_700_000_000))
    sample.deliver(root / "INBOX", sample.message(sender="Ada <ada@example.net>", subject=f"Pears {WORD}",
                                                  body="pears", message_id="pears@example.org", date=1_700_003_600))
    config = sample.config(root, blocked=[])
    write_config(gateway_home, config, projects=[])

    async def play():
        async with serve_client(gateway_home) as client:
            said = {}

            async def ask(step: str) -> None:
                said[step] = [await client.call_tool("search_mail", {"query": WORD}) for _ in range(3)]

            await ask("open")
            write_config(gateway_home, config, projects=CLOSED)
            await ask("closed")
            write_config(gateway_home, sample.config(root, blocked=["ada@example.net"]), projects=CLOSED)
            await ask("blocked")
            write_config(gateway_home, config, projects=CLOSED)
            sample.deliver(root / "INBOX", sample.message(sender="Bo <bo@example.net>", subject=f"Quinces {WORD}",
                                                          body="quinces", message_id="quinces@example.org",
                                                          date=1_700_007_200), flags=None)
            await ask("arrived")
            for message in (root / "INBOX" / "new").iterdir():  # read in the person's mail program
                message.rename(root / "INBOX" / "cur" / f"{message.name}:2,S")
            await ask("read")
            return said

    said = anyio.run(play)
    for step, results in said.items():
        assert all(not result.is_error for result in results), step
        assert len({_text(result) for result in results}) == 1, step  # the page kept answers as the page read
    addresses = {step: [hit["address"] for hit in results[0].structured_content["hits"]]
                 for step, results in said.items()}
    assert addresses["open"] == ["mid:pears@example.org", "mid:orchard@example.org"]
    for step in ("closed", "blocked", "arrived", "read"):
        assert "orchard" not in _text(said[step][0]) and "secret" not in _text(said[step][0]), step
        assert said[step][0].structured_content["left_out"] == 1, step
    assert addresses["closed"] == ["mid:pears@example.org"]
    assert addresses["blocked"] == [] and said["blocked"][0].structured_content["blocked"] == 1
    assert addresses["arrived"] == ["mid:quinces@example.org", "mid:pears@example.org"]
    flags = {step: [hit["flags"] for hit in said[step][0].structured_content["hits"]] for step in ("arrived", "read")}
    assert flags["arrived"][0] == "" and flags["read"][0] == "S"
