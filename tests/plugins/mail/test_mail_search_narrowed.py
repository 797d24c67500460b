"""search_mail's shortcuts for a phrase or several words (an address, a file name): narrowed by a probe, a word of it
that few messages hold, to the ids between that word's first and last match, and walked oldest first there; and for
a prefix of few words, asked as their OR. Each page, total and count is what the long way (the page's statement
newest first with the prefix as written, then the total counted) gives, with closed projects, blocked senders and
shielded mail, and with new mail between two calls."""

from __future__ import annotations

import json
import random
from pathlib import Path

import gateway_mail
import pytest
from gateway_mail.mail import answers, index, query, sample, shield

from gateway.testing import folders_of, make_gateway
from tests.plugins.mail import shield_world

SENDERS = ("Ann Example <ann@orchard.example.com>", "Bo Example <bo@mill.example.net>", "Ada <ada@example.net>",
           "Deals <deals@spam.example.net>", "Cy <cy@orchard.example.org>")
WORDS = ["harvest", "apples", "pears", "cider", "plums"]

# Addresses and domains (some in few messages, some in none, one a word in every message's sender), phrases, words
# side by side and with AND, each alone and with what narrows it further (a flag, a date, NOT, a folder's word).
QUERIES = ["from:orchard.example.com", "from:ann@orchard.example.com", "from:example.com", "from:example.net",
           "from:nobody@nowhere.example.org", "from:cy@orchard.example.org", "to:pat@example.org",
           '"quince harvest"', '"harvest quince"', "quince AND cider", "quince cider", "subject:\"note 3\"",
           "from:orchard.example.com quince", "from:mill.example.net -quince", "from:orchard.example.com is:unread",
           "from:mill.example.net is:flagged", "from:orchard.example.com date:2023-11-15..2023-11-20",
           "attachment:ledger.csv", "from:ORCHARD.Example.COM", "from:troll.example.net", "plumtree harvest",
           "from:example.com OR quince", "medlar harvest",
           # Prefixes: of few words, of none, of more than FEW_WORDS (every `note 1...` number), in a field, negated,
           # in an OR, beside a phrase, in capitals, beside a flag (then not in FTS5's walk: left as it is).
           "har*", "quin*", "zzz*", "1*", "subject:no*", "to:pat* quince", "harvest -quin*", "med* OR cid*",
           "from:orchard.example.com pea*", "HAR*", "medl*", "apples AND Pea* AND NOT plu*", "quin* is:flagged", "n*"]


def _deliver(root: Path, count: int, start: int = 0) -> None:
    picker = random.Random(start)
    for number in range(start, start + count):
        sender = SENDERS[number % 5 if number % 9 else 0]
        folder = ("INBOX", "Archive", "Lists/Orchard")[number % 3]
        body = " ".join(picker.sample(WORDS, 3)) + (" quince harvest" if number % 11 == 0 else "") + (
            " cider" if number % 13 == 0 else "") + (" medlar" if number in (3, 95) else "") + (
            " harvested pearmain" if number % 7 == 0 else "") + (" medlarß" if number % 10 == 0 else "")
        sample.deliver(root / folder,
                       sample.message(sender=sender, subject=f"Note {number} {picker.choice(WORDS)}", body=body,
                                      date=1_700_000_000 + number * 3600,
                                      attachment=("ledger.csv", b"a,b\n") if number % 17 == 0 else None),
                       flags=("S", None, "FS", "RS")[number % 4])


def _long_way(connection, search: answers.Search, limit: int) -> tuple[list, int]:
    """The page and total as search_mail gives them without the shortcut."""
    rows = connection.execute(search.page_sql, [*search.arguments, limit]).fetchall()
    total = len(rows)
    if len(rows) >= limit:
        total = min(connection.execute(search.count_sql, search.count_arguments).fetchone()[0], answers.TOTAL_BOUND)
    return [tuple(r) for r in rows], total


def _compared(connection, ids: list[int], picker: random.Random, few: int) -> tuple[int, int]:
    """Every query and scope, with the kept, blocked and shielded lists empty or not: the shortcut's rows (when it is
    taken) are the long way's, in its order; returns how many times it was taken and how many it was not."""
    taken = passed = 0
    expansions = {True: 0, False: 0}
    generation = ("test", picker.randrange(1 << 30))  # probes remembered per generation: each round its own
    for words in QUERIES:
        for where, values, days in (("1", [], None), ("m.account = ?", ["personal"], None),
                                    ("(m.folder = ? OR m.folder LIKE ?)", ["Lists", "Lists/%"], None),
                                    ("1", [], 36500)):
            for lists in (("[]", "[]", "[]"), (None, "[]", "[]"), ("[]", '["bo@mill.example.net"]', "[]"),
                          ("[]", "[]", None), (None, '["ann@orchard.example.com"]', None)):
                kept, blocked, shielded = [json.dumps(picker.sample(ids, picker.randrange(1, len(ids) // 3)))
                                           if value is None else value for value in lists]
                search = answers.statements(None, words, where, values, days, kept, blocked, shielded)
                if search.prefixes:  # the prefixes written as the OR of their words: the same pages and totals
                    long_search, search = search, answers.expanded(connection, generation, search)
                    for limit in (1, 3, 20, 1000):
                        assert _long_way(connection, search, limit) == _long_way(connection, long_search, limit), words
                    expansions[search is not long_search] += 1
                every = answers.narrowed(connection, generation, search) if search.probes else None
                if every is None:
                    passed += 1
                    continue
                taken += 1
                assert len(every) <= few
                for limit in (1, 3, 20):
                    rows, total = _long_way(connection, search, limit)
                    assert ([tuple(r) for r in every[:limit]], len(every)) == (rows, total), (words, where, lists)
    assert expansions[True] and expansions[False], expansions  # both ways met: few words, and none or too many
    return taken, passed


@pytest.mark.parametrize("few", [2, 5, 64])
def test_the_narrowed_page_is_the_long_ways_page_as_mail_comes_moves_and_goes(
        gateway_home: Path, monkeypatch: pytest.MonkeyPatch, few: int) -> None:
    monkeypatch.setattr(answers, "FEW_PROBED", few)
    monkeypatch.setattr(answers, "_probed", {})
    root = gateway_home / "Mail" / "personal"
    _deliver(root, 60)
    path = index.index_path(folders_of(gateway_home).for_plugin("mail").cache)
    picker = random.Random(few)
    from gateway_mail.mail.accounts import Account

    account = [Account("personal", root)]
    counts = []

    def compared() -> None:
        connection = index.connect(path)
        try:
            index.refresh(connection, account)
            ids = [r[0] for r in connection.execute("SELECT id FROM messages")]
            counts.append(_compared(connection, ids, picker, few))
        finally:
            connection.close()

    compared()
    _deliver(root, 40, start=60)  # new mail between two calls, some of it older than what was there
    _deliver(root, 5, start=-30)
    compared()
    for message in (root / "INBOX" / "new").iterdir():  # mail read and moved, as a mail program does
        message.rename(root / "INBOX" / "cur" / f"{message.name}:2,S")
    compared()
    for message in sorted((root / "Archive" / "cur").iterdir())[::2]:  # mail removed
        message.unlink()
    compared()
    # Both ways are met: a probe few enough narrows, and a query with none (or none rare) takes the long way.
    assert all(taken > 0 and passed > 0 for taken, passed in counts), counts


def test_probes_are_whole_tokens_each_matching_whatever_the_whole_match_does(gateway_home: Path) -> None:
    """Every probe of every query matches every message its whole match does (the narrowing never loses one), and a
    piece FTS5 might read as no token, or as part of one, is no probe."""
    root = gateway_home / "Mail" / "personal"
    _deliver(root, 50)
    sample.deliver(root / "INBOX", sample.message(sender="Zoë <zoe@café.example.org>", subject="crème brûlée — recipe",
                                                  body="money — talks, a_b c-d"))
    connection = index.connect(index.index_path(folders_of(gateway_home).for_plugin("mail").cache))
    try:
        from gateway_mail.mail.accounts import Account

        index.refresh(connection, [Account("personal", root)])
        for words in [*QUERIES, "from:zoe@café.example.org", '"money — talks"', "a_b", "c-d", "crème brûlée",
                      "subject:\"brûlée — recipe\""]:
            planned = query.plan(words)
            if planned.match is None:
                continue
            matched = {r[0] for r in connection.execute(
                "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?", (planned.match,))}
            for probe in planned.probes:
                assert query._ONE_TOKEN.match(probe.rpartition(" : ")[2].strip('"')), probe
                probed = {r[0] for r in connection.execute(
                    "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?", (probe,))}
                assert matched <= probed, (words, probe)
    finally:
        connection.close()
    assert query.plan("café crème").probes == ()  # not ASCII: not probes
    assert query.plan('"money — talks"').probes == ('"money"', '"talks"')
    assert query.plan("from:zoe@café.example.org").probes == tuple(
        f'{{sender}} : "{w}"' for w in ("zoe", "example", "org"))
    assert query.plan("spamass*").probes == () and query.plan("money").probes == ()


def _answers(gateway, narrowing: bool, monkeypatch: pytest.MonkeyPatch) -> list:
    monkeypatch.setattr(answers, "NARROWING", narrowing)
    monkeypatch.setattr(answers, "EXPANDING", narrowing)
    found = []
    for words in QUERIES:
        for limit in (1, 4, 20):
            answer = gateway.call("search_mail", {"query": words, "limit": limit})
            assert not answer.is_error, (words, answer.text)
            found.append((words, limit, answer.text, json.dumps(answer.data, sort_keys=True)))
    return found


def _same_both_ways(gateway, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(answers, "_probed", {})
    monkeypatch.setattr(answers, "_words", {})
    taken, narrowed = [], answers.narrowed
    monkeypatch.setattr(answers, "narrowed", lambda *args: taken.append(found := narrowed(*args)) or found)
    short = _answers(gateway, True, monkeypatch)
    assert any(found is not None for found in taken), "the shortcut was never taken"
    assert any(words is not None for words in answers._words.values()), "no prefix was expanded"
    long = _answers(gateway, False, monkeypatch)
    for one, other in zip(short, long, strict=True):
        assert one == other, one[:2]


@pytest.mark.parametrize("world", ["plain", "closed", "blocked"])
def test_search_mail_answers_byte_for_byte_as_the_long_way(gateway_home: Path, monkeypatch: pytest.MonkeyPatch,
                                                           world: str) -> None:
    root = gateway_home / "Mail" / "personal"
    _deliver(root, 70)
    config = sample.config(root, **({} if world == "blocked" else {"blocked": []}))
    if world == "blocked":
        config["plugins"]["mail"]["blocked"] = ["@mill.example.net", "@spam.example.net"]
    projects = [{"id": "orchard", "ai": False, "senders": ["@orchard.example.com"]}] if world == "closed" else None
    gateway = make_gateway([gateway_mail], home=gateway_home, config=config, projects=projects)
    _same_both_ways(gateway, monkeypatch)
    _deliver(root, 30, start=70)  # new mail between two calls
    _same_both_ways(gateway, monkeypatch)
    if world == "closed":  # what is kept is never shown, narrowed or not
        shown = gateway.call("search_mail", {"query": "from:orchard.example.com"})
        assert shown.data["hits"] == [] and shown.data["left_out"] > 0


def test_search_mail_answers_as_the_long_way_with_shielded_mail(gateway_home: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    root = gateway_home / "Mail" / "personal"
    shield_world.world(root)
    _deliver(root, 40)
    command = shield_world.write_judge(gateway_home / "bin")
    gateway = make_gateway([gateway_mail], home=gateway_home,
                           config=shield_world.config(root, shield_command=command, blocked=[]))
    settled = index.index_path(folders_of(gateway_home).for_plugin("mail").cache)
    gateway.call("search_mail", {"query": "plumtree"})  # the judge starts on what waits
    assert shield.settle(settled, 30)
    _same_both_ways(gateway, monkeypatch)
    _deliver(root, 20, start=40)  # new mail, and hostile mail to the shielded address, between two calls
    sample.deliver(root / "INBOX", sample.message(
        sender="Troll <troll@troll.example.net>", to=f"Press <{shield_world.PRESS}>", date=1_700_000_000,
        subject=f"Again {shield_world.HOSTILE_CANARY}", body=shield_world.HOSTILE_WORDS))
    gateway.call("search_mail", {"query": "plumtree"})
    assert shield.settle(settled, 30)
    _same_both_ways(gateway, monkeypatch)
    monkeypatch.setattr(answers, "NARROWING", True)
    troll = gateway.call("search_mail", {"query": "from:troll.example.net"})
    assert troll.data["shielded"] >= 1 and shield_world.HOSTILE_CANARY not in troll.text
