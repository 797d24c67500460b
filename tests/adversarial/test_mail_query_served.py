"""search_mail's query language through a real `gateway serve` and the SDK's client, played as an agent would try
it: every form a notmuch user types answers, a closed project's message is found by no form (To, Cc, List-Id, an
attachment's name, a date, a flag, a CJK word) and counted the same whatever the query, a masked number in a
recipient's name is found by no digit, and a query that cannot be read gets a sentence, never SQLite's words."""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio
from gateway_mail.mail import sample

from gateway.testing import serve_client, write_config

CANARY = "quillwortquerycanary"
CARD = "5555 5555 5555 4444"


def _text(result) -> str:
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {}, ensure_ascii=False)


def test_the_query_language_served(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    inbox = root / "INBOX"
    now = time.time()
    # The closed project's message: every field a query can reach holds something an agent might ask for.
    sample.deliver(inbox, sample.message(
        sender="Keeper <keeper@vault.example.com>", to="Sam Example <sam@example.org>", cc="lee@example.org",
        subject=f"定例会議の議事録 {CANARY}", body="The vault minutes.", message_id="vault@example.org",
        date=now - 3600, headers={"List-Id": "Vault board <board.vault.example.com>"},
        attachment=("minutes-2291.pdf", b"%PDF-1.4")), flags="F")
    sample.deliver(inbox, sample.message(
        sender="Ada Example <ada@example.net>", to="Sam Example <sam@example.org>", cc="lee@example.org",
        subject="定例会議の日程", body="Minutes of the open board.", message_id="open@example.org",
        date=now - 7200, headers={"List-Id": "Open board <board.lists.example.org>"},
        attachment=("minutes-2292.pdf", b"%PDF-1.4")), flags="F")
    sample.deliver(inbox, sample.message(
        sender="Bank <bank@example.com>", to=f'"Card {CARD}" <billing@example.org>', subject="Statement",
        body="Your statement.", message_id="bank@example.org", date=now - 86400 * 3))
    write_config(gateway_home, sample.config(root), projects=sample.PROJECTS)
    queries = ["to:sam@example.org", "cc:lee@example.org", "lee@example.org", "list:board", "attachment:minutes*",
               "会議", "定例会議", "議事録", "is:flagged", "date:yesterday..", "date:2w.. AND is:flagged",
               "minutes OR is:unread", "NOT from:bank@example.com", "*", f"{CANARY} OR minutes", "(minutes)",
               '"open board" AND NOT statement']

    async def play():
        async with serve_client(gateway_home) as client:
            answers = {q: await client.call_tool("search_mail", {"query": q}) for q in queries}
            digits = [await client.call_tool("search_mail", {"query": q}) for q in ("5555", "to:5555*", "4444 5555")]
            bad = [await client.call_tool("search_mail", {"query": q}) for q in ("(minutes", "date:nonsense",
                                                                                  "NEAR(minutes", "tag:inbox")]
            return answers, digits, bad

    answers, digits, bad = anyio.run(play)
    for query, result in answers.items():
        assert not result.is_error, (query, _text(result))
        text = _text(result)
        assert CANARY not in text and "vault@example.org" not in text and "議事録" not in text, query
        assert result.structured_content["left_out"] == 1, query  # the same count whatever the words
    assert "mid:open@example.org" in _text(answers["list:board"]) and "mid:open@example.org" in _text(answers["会議"])
    assert answers["議事録"].structured_content["hits"] == []
    assert [h["address"] for h in answers["to:sam@example.org"].structured_content["hits"]] == [
        "mid:open@example.org"]
    for result in digits:
        assert result.structured_content["hits"] == [], _text(result)
    for result in bad:
        text = _text(result)
        assert result.is_error and "sqlite3" not in text and "fts5: syntax error" not in text, text
    assert "a parenthesis is left open" in _text(bad[0]) and "date:nonsense is not a date" in _text(bad[1])
    assert "the query cannot be read as a search; quote words with symbols" in _text(bad[2])
    assert "tag:inbox is not searchable" in _text(bad[3])
