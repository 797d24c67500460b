"""search_mail's query language on a Maildir of invented mail: each operator, the same queries asked of the real
`notmuch search` on the same files (the same messages found), To/Cc/List-Id searchable but masked, words inside
Japanese and Chinese runs found, and a query that cannot be read answered with what to write instead."""

from __future__ import annotations

import calendar
import os
import shutil
import subprocess
import time
from datetime import datetime
from pathlib import Path

import gateway_mail
import pytest
from gateway_mail.mail import sample

from gateway.testing import make_gateway

CARD = "5555 5555 5555 4444"  # a Mastercard test number (passes Luhn's check): masked, its last four kept
IBAN = "FR14 2004 1010 0505 0001 3M02 606"


def _at(text: str) -> float:
    return float(calendar.timegm(datetime.strptime(text, "%Y-%m-%d %H:%M").timetuple()))


def _mail(root: Path) -> dict[str, str]:
    """The account's messages, by role (each role is its Message-ID's local part)."""
    inbox, lists = root / "INBOX", root / "Lists"
    now = time.time()
    made = {
        "roof": (inbox, "S", dict(sender="Ada Example <ada@example.net>", subject="Roof repair quote",
                                  body="The roof needs new tiles before winter.", date=_at("2026-01-15 10:00"))),
        "budget": (inbox, "FS", dict(sender="Bo Example <bo@example.com>", cc="Kim Example <kim@example.org>",
                                     subject="Budget for March", body="The budget spreadsheet is attached.",
                                     date=_at("2026-03-20 09:30"), attachment=("budget-2026.pdf", b"%PDF-1.4"))),
        "garden": (lists, "", dict(sender="Garden Club <club@lists.example.org>", to="garden@lists.example.org",
                                   subject="Meeting notes", body="Compost and seeds for the spring.",
                                   date=_at("2025-12-31 23:00"),
                                   headers={"List-Id": "Garden club <garden.lists.example.org>"})),
        "lunch": (inbox, "RS", dict(sender="Ada Example <ada@example.net>", subject="Tuesday lunch",
                                    body="Lunch at noon by the river.", date=_at("2025-11-02 12:00"))),
        "invoice": (inbox, "S", dict(sender="Chris Example <chris@example.com>", to="Dana Example <dana@example.net>",
                                     subject="Invoice", body="Please find it attached.", date=_at("2026-02-10 08:00"),
                                     attachment=("invoice-2291.pdf", b"%PDF-1.4"))),
        "cjk": (inbox, "S", dict(sender="Yuki Example <yuki@example.com>", subject="来週の打ち合わせについて",
                                 body="会议室在三楼。よろしくお願いします。", date=_at("2026-02-20 03:00"))),
        "masked": (inbox, "S", dict(sender="Bank Example <bank@example.com>",
                                    to=f'"Card {CARD}" <billing@example.org>',
                                    cc=f'"IBAN {IBAN}" <accounts@example.org>', subject="Statement",
                                    body="Your statement.", date=_at("2026-02-01 07:00"))),
        "recent": (inbox, "", dict(sender="Ada Example <ada@example.net>", subject="Fresh apples",
                                   body="Apples from the orchard.", date=now - 3600)),
        "fortnight": (inbox, "S", dict(sender="Ada Example <ada@example.net>", subject="Pears",
                                       body="Pears from the orchard.", date=now - 3 * 86400)),
        "old": (inbox, "S", dict(sender="Ada Example <ada@example.net>", subject="Plums",
                                 body="Plums from the orchard.", date=now - 70 * 86400)),
    }
    for role, (folder, flags, fields) in made.items():
        sample.deliver(folder, sample.message(message_id=f"{role}@example.org", **fields), flags=flags)
    return {role: f"{role}@example.org" for role in made}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    """One Maildir and one gateway for the module (no test changes either), in a home of its own."""
    from gateway.api.context import home_environment

    home = tmp_path_factory.mktemp("query") / "home"
    home.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        for key, value in home_environment(home).items():
            patch.setenv(key, value)
        patch.delenv("GATEWAY_CONFIG", raising=False)
        root = home / "Mail" / "personal"
        ids = _mail(root)
        config = sample.config(root)
        config["gateway"]["timezone"] = "UTC"
        yield root, ids, make_gateway([gateway_mail], home=home, config=config, projects=[])


def _found(gateway, query: str, **arguments) -> set[str]:
    answer = gateway.call("search_mail", {"query": query, "limit": 200, **arguments})
    assert not answer.is_error, (query, answer.text)
    return {hit["address"].removeprefix("mid:").split("@")[0] for hit in answer.data["hits"]}


@pytest.mark.parametrize(("query", "expected"), [
    ("from:ada@example.net", {"roof", "lunch", "recent", "fortnight", "old"}),
    ("to:pat@example.org", {"roof", "budget", "lunch", "cjk", "recent", "fortnight", "old"}),
    ("to:kim@example.org", {"budget"}),  # to: is any recipient (To or Cc), as notmuch's
    ("cc:kim@example.org", {"budget"}),
    ("cc:pat@example.org", set()),
    ("dana@example.net", {"invoice"}),  # a bare address only in To is found
    ("kim", {"budget"}),
    ("list:garden.lists.example.org", {"garden"}),
    ("list:garden", {"garden"}),
    ("attachment:invoice-2291.pdf", {"invoice"}),
    ("attachment:pdf", {"budget", "invoice"}),
    ("budget-2026.pdf", {"budget"}),
    ("is:unread", {"garden", "recent"}),
    ("is:flagged", {"budget"}),
    ("is:answered", {"lunch"}),
    ("is:replied", {"lunch"}),
    ("tag:flagged", {"budget"}),
    ("date:2026-01..2026-03", {"roof", "budget", "invoice", "cjk", "masked"}),
    ("date:2026-02", {"invoice", "cjk", "masked"}),
    ("date:2026-02-10", {"invoice"}),
    ("date:..2025-12-31", {"garden", "lunch"}),
    ("date:2025", {"garden", "lunch"}),
    ("date:@1767225600..@1768521600", {"roof"}),  # 2026-01-01 to 2026-01-16 as timestamps
    ("date:yesterday..", {"recent"}),
    ("date:2w..", {"recent", "fortnight"}),
    ("date:10d..", {"recent", "fortnight"}),
    ("orchard date:..2w", {"old"}),
    ("orchard AND date:1M..", {"recent", "fortnight"}),
    ("from:ada@example.net subject:roof", {"roof"}),
    ("subject:roof subject:lunch", {"roof", "lunch"}),  # one prefix side by side: either, as notmuch reads it
    ("subject:roof AND subject:lunch", set()),
    ("roof OR lunch", {"roof", "lunch"}),
    ("(roof OR lunch) AND NOT tiles", {"lunch"}),
    ("orchard -plums", {"recent", "fortnight"}),
    ("orchard and not pears", {"recent", "old"}),
    ("NOT from:ada@example.net AND is:unread", {"garden"}),
    ("is:unread OR is:flagged", {"garden", "recent", "budget"}),
    ("lunch XOR from:ada@example.net", {"roof", "recent", "fortnight", "old"}),
    ("id:budget@example.org", {"budget"}),
    ("subject:budget is:flagged date:2026", {"budget"}),
    ('subject:"repair quote"', {"roof"}),
    ("tile*", {"roof"}),
    ('"the roof" AND tiles', {"roof"}),  # FTS5's own syntax still works
    ("NEAR(roof tiles, 3)", {"roof"}),
    ("{subject} : statement", {"masked"}),
    ("*", {"roof", "budget", "garden", "lunch", "invoice", "cjk", "masked", "recent", "fortnight", "old"}),
])
def test_each_operator(world, query: str, expected: set[str]) -> None:
    _root, _ids, gateway = world
    assert _found(gateway, query) == expected


def test_words_inside_japanese_and_chinese_runs_are_found(world) -> None:
    _root, _ids, gateway = world
    for query in ("打ち合わせ", "来週", "の", "三楼", "会议室", "よろしく", "subject:打ち合わせ", "body:お願い",
                  "打ち合わせ from:yuki@example.com", "打ち合わせ OR lunch"):
        assert "cjk" in _found(gateway, query), query
    assert _found(gateway, "subject:三楼") == set()  # in the text, not the subject
    assert _found(gateway, "打ち合わせ AND NOT from:yuki@example.com") == set()
    assert _found(gateway, "会議室") == set()  # the Japanese form of the word; the text has the Chinese one


def test_a_masked_number_in_to_or_cc_is_found_by_no_digit(world) -> None:
    _root, _ids, gateway = world
    assert _found(gateway, "billing@example.org") == {"masked"} == _found(gateway, "cc:accounts@example.org")
    for digits in ("5555", "5555555555554444", '"5555 5555"', "to:5555*", "2004", "FR1420041010050500013M02606",
                   "cc:1010"):
        assert _found(gateway, digits) == set(), digits
    answer = gateway.call("search_mail", {"query": "billing@example.org"})
    assert "5555 5555" not in answer.text and "2004 1010" not in answer.text


@pytest.mark.parametrize(("query", "says"), [
    ("(roof OR lunch", "a parenthesis is left open"),
    ("roof)", "a parenthesis closes what was not opened"),
    ("roof AND", "an operator has nothing after it"),
    ("OR roof", "OR stands where a word was expected"),
    ('"roof', 'a quote (") is left open'),
    ("date:someday", "date:someday is not a date search_mail reads"),
    ("date:2026-13", "names no day of the calendar"),
    ("date:..", "date: needs a date on at least one side"),
    ("tag:inbox", "tag:inbox is not searchable: the mail index has no tags but those the Maildir flags keep"),
    ("folder:INBOX", "folder: is not searchable (the folder argument narrows to a folder)"),
    ("NEAR(roof", "the query cannot be read as a search; quote words with symbols"),
    ("(" * 30 + "roof" + ")" * 30, "parentheses are nested more than 20 deep"),
    ("-" * 40 + "roof", "it holds more than 20 NOT"),
])
def test_a_query_that_cannot_be_read_says_what_to_write(world, query: str, says: str) -> None:
    _root, _ids, gateway = world
    answer = gateway.call("search_mail", {"query": query})
    assert answer.is_error and says in answer.text, answer.text
    assert "sqlite" not in answer.text.lower() or "SQLite FTS5's own syntax" in answer.text
    assert "fts5: syntax error" not in answer.text and "no such column" not in answer.text


def test_the_total_stays_exact_up_to_its_bound(world, monkeypatch: pytest.MonkeyPatch) -> None:
    from gateway_mail.mail import answers

    _root, _ids, gateway = world
    answer = gateway.call("search_mail", {"query": "from:ada@example.net", "limit": 2})
    assert (answer.data["total"], answer.data["more"], len(answer.data["hits"])) == (5, False, 2)
    assert "2 shown of 5 messages matching" in answer.text
    scanned = gateway.call("search_mail", {"query": "NOT is:flagged", "limit": 2})  # no FTS5 part: a walk by id
    assert (scanned.data["total"], scanned.data["more"]) == (9, False)
    monkeypatch.setattr(answers, "TOTAL_BOUND", 3)
    bounded = gateway.call("search_mail", {"query": "NOT is:flagged", "limit": 2})
    assert (bounded.data["total"], bounded.data["more"]) == (3, True)
    assert "2 shown of more than 3 messages matching" in bounded.text
    # Newest first in both plans.
    assert [h["address"] for h in gateway.call("search_mail", {"query": "orchard"}).data["hits"]] == [
        "mid:recent@example.org", "mid:fortnight@example.org", "mid:old@example.org"]


# The queries asked of both, on the same files: every one a notmuch user could type as it is.
NOTMUCH_QUERIES = [
    "from:ada@example.net", "to:pat@example.org", "to:kim@example.org", "dana@example.net", "kim@example.org",
    "subject:budget", "roof", "roof OR lunch", "(roof OR lunch) AND NOT from:chris@example.com", "orchard -plums",
    "orchard and not pears", "is:unread", "is:flagged", "is:replied", "tag:flagged", "not is:unread",
    "is:unread OR is:flagged", "from:ada@example.net subject:lunch", "subject:roof subject:lunch",
    "date:2026-01..2026-03", "date:..2025-12-31", "date:2026-02-10", "date:2026-02", "date:yesterday..", "date:2w..",
    "date:10d..", "orchard date:..2w", "orchard date:1M..", "date:@1767225600..@1768521600",
    "attachment:invoice-2291.pdf", '"roof needs"', 'subject:"repair quote"', "id:budget@example.org", "*",
    "lunch XOR from:ada@example.net",
]


@pytest.mark.skipif(shutil.which("notmuch") is None, reason="Debian's notmuch is installed by .ci/run")
def test_the_same_messages_as_notmuch_search(world, tmp_path: Path) -> None:
    root, _ids, gateway = world
    config, database = tmp_path / "notmuch-config", tmp_path / "database"
    database.mkdir()
    environment = {**os.environ, "TZ": "UTC", "NOTMUCH_CONFIG": str(config)}
    config.write_text(f"[database]\npath={database}\nmail_root={root}\n[new]\ntags=inbox;\n[search]\n"
                      "exclude_tags=\n[maildir]\nsynchronize_flags=true\n")
    subprocess.run(["notmuch", "new", "--quiet"], env=environment, check=True, capture_output=True, timeout=120,
                   stdin=subprocess.DEVNULL)
    for query in NOTMUCH_QUERIES:
        theirs = subprocess.run(["notmuch", "search", "--output=messages", query], env=environment, check=True,
                                capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL).stdout.split()
        assert _found(gateway, query) == {t.removeprefix("id:").split("@")[0] for t in theirs}, query
