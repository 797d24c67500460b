"""search_mail's total: exact up to its bound and "more than" past it, whichever way it is counted (FTS5's own ids
when the words are the whole question, else the page's statement), and never a total remembered from an index that
has changed since."""

from __future__ import annotations

import json
import random
from pathlib import Path

import gateway_mail
import pytest
from gateway_mail.mail import answers, index, sample

from gateway.testing import folders_of, make_gateway

# By construction: how many messages bear each word, from whom. `ann@example.com` is a closed project's sender,
# `spam.example.net` is blocked by the sample config.
SENDERS = ("Ada Example <ada@example.net>", "Ann Example <ann@example.com>", "Promo <deals@spam.example.net>")


def _world(home: Path) -> dict[str, dict[str, int]]:
    """Forty messages in two folders; per word, how many were sent by each sender (by domain)."""
    made: dict[str, dict[str, int]] = {}
    picker = random.Random(7)
    for number in range(40):
        sender = SENDERS[number % 3]
        words = ["harvest"] + (["apples"] if number % 2 else ["pears"]) + (["cider"] if number % 5 == 0 else [])
        folder = "INBOX" if number % 4 else "Archive"
        sample.deliver(home / "Mail" / "personal" / folder,
                       sample.message(sender=sender, subject=f"Note {number}", body=" ".join(words),
                                      date=1_700_000_000 + number * 3600 + picker.random()))
        domain = sender.rpartition("@")[2].rstrip(">")
        for word in words:
            made.setdefault(word, {}).setdefault(domain, 0)
            made[word][domain] += 1
    return made


def _gateway(home: Path, blocked: bool):
    config = sample.config(home / "Mail" / "personal")
    if not blocked:
        config["plugins"]["mail"]["blocked"] = []
    return make_gateway([gateway_mail], home=home, config=config,
                        projects=[{"id": "closed", "ai": False, "senders": ["ann@example.com"]}])


@pytest.mark.parametrize("blocked", [False, True], ids=["matches-alone", "page-statement"])
@pytest.mark.parametrize("bound", [3, 7, 1000])
def test_the_total_is_exact_up_to_the_bound_and_more_past_it_both_ways_of_counting(
        gateway_home: Path, monkeypatch: pytest.MonkeyPatch, blocked: bool, bound: int) -> None:
    made = _world(gateway_home)
    gateway = _gateway(gateway_home, blocked)
    monkeypatch.setattr(answers, "TOTAL_BOUND", bound)
    for word, by_domain in made.items():
        shown = by_domain.get("example.net", 0) + (0 if blocked else by_domain.get("spam.example.net", 0))
        answer = gateway.call("search_mail", {"query": word, "limit": 1})
        assert not answer.is_error, answer.text
        data = answer.data
        assert (data["total"], data["more"]) == (min(shown, bound), shown > bound), (word, data)
        # What is left out and blocked is counted over the whole scope, whatever the words.
        assert data["left_out"] == made["harvest"]["example.com"]
        assert data["blocked"] == (made["harvest"]["spam.example.net"] if blocked else 0)
        said = f"more than {bound:,}" if shown > bound else f"{shown:,}"
        assert f"1 shown of {said} messages matching" in answer.text or shown <= 1


def test_counting_fts5_ids_alone_gives_the_page_statements_count_whatever_is_kept(gateway_home: Path) -> None:
    _world(gateway_home)
    gateway = _gateway(gateway_home, blocked=False)
    assert not gateway.call("search_mail", {"query": "harvest"}).is_error  # the index made
    connection = index.connect(index.index_path(folders_of(gateway_home).for_plugin("mail").cache))
    ids = [r[0] for r in connection.execute("SELECT id FROM messages")]
    picker = random.Random(11)
    for query in ("harvest", "apples", "cider OR pears", "harvest NOT cider", '"harvest apples"', "harv*", "nothing"):
        for _ in range(6):
            closed = json.dumps(picker.sample(ids, picker.randrange(len(ids))))
            shielded = json.dumps(picker.sample(ids, picker.randrange(4)))
            search = answers.statements(None, query, "1", [], None, closed, "[]", shielded)
            assert search.count_sql.startswith("SELECT count(*) FROM (SELECT rowid FROM messages_fts")
            alone = connection.execute(search.count_sql, search.count_arguments).fetchone()[0]
            joined = connection.execute(f"SELECT count(*) FROM ({search.sql})",
                                        [*search.arguments, answers.TOTAL_BOUND + 1]).fetchone()[0]
            assert alone == joined, (query, closed, shielded)
    # A scope, a condition or a blocked sender: the page's statement is counted.
    for where, query, blocked in (("m.account = ?", "harvest", "[]"), ("1", "harvest is:flagged", "[]"),
                                  ("1", "harvest", '["deals@spam.example.net"]')):
        search = answers.statements(None, query, where, ["personal"] if "?" in where else [], None, "[]", blocked)
        assert search.count_sql == f"SELECT count(*) FROM ({search.sql})"
    connection.close()


def test_a_total_counted_before_a_change_is_not_given_after_it(gateway_home: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GATEWAY_FILE_NOTIFICATIONS", raising=False)
    made = _world(gateway_home)
    gateway = _gateway(gateway_home, blocked=False)
    expected = made["cider"]["example.net"] + made["cider"]["spam.example.net"]
    for _ in range(3):
        assert gateway.call("search_mail", {"query": "cider", "limit": 1}).data["total"] == expected
    inbox = gateway_home / "Mail" / "personal" / "INBOX"
    delivered = sample.deliver(inbox, sample.message(subject="More", body="cider again"))
    assert gateway.call("search_mail", {"query": "cider", "limit": 1}).data["total"] == expected + 1
    delivered.unlink()
    assert gateway.call("search_mail", {"query": "cider", "limit": 1}).data["total"] == expected
    kept = gateway.call("search_mail", {"query": "cider", "limit": 1}).data["left_out"]
    sample.deliver(inbox, sample.message(sender=SENDERS[1], subject="Kept", body="cider"))  # the closed sender
    assert gateway.call("search_mail", {"query": "cider", "limit": 1}).data["left_out"] == kept + 1
    flagged = gateway.call("search_mail", {"query": "cider is:flagged", "limit": 1}).data["total"]
    assert flagged == 0
    first = next(p for p in (inbox / "cur").iterdir() if b"ada@example.net" in p.read_bytes())
    first.rename(first.with_name(first.name.split(":2,")[0] + ":2,FS"))
    assert gateway.call("search_mail", {"query": "harvest is:flagged", "limit": 1}).data["total"] == 1
    # The same words in a narrower scope are counted as that scope's.
    archive = gateway.call("search_mail", {"query": "cider", "folder": "Archive", "limit": 1}).data["total"]
    assert 0 < archive < expected
