"""search_mail's shortcuts for a search that finds few messages or none each give what the long way gives: the
conditions on an empty kept, blocked or shielded list left out of its statements, and a page's hits made from its
plain rows with one look for line ends."""

from __future__ import annotations

import json
import random
import shutil
from datetime import UTC
from pathlib import Path
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import gateway_mail
from gateway_mail.mail import answers, index, parse, sample
from gateway_mail.mail.accounts import Account
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway import Context
from gateway.testing import folders_of, make_gateway

CTX = SimpleNamespace(one_line=Context.one_line)
# Every kind of character one_line looks at, and the character page_hits joins the fields with.
AWKWARD = "ab| \t\n\r\x0b\x0c\x1c\x1f\x7f\x85\xa0\u1680\u2000\u2028\u2029\u3000é漢"
ZONES = [UTC, ZoneInfo("Europe/Paris"), ZoneInfo("Asia/Kathmandu"), ZoneInfo("Australia/Lord_Howe")]
FIELD = st.one_of(st.text(alphabet=AWKWARD, max_size=12), st.text(max_size=12),
                  st.text(alphabet="ab ", min_size=195, max_size=205), st.sampled_from(["INBOX", "Ada", "x@example.org"]))
ROW = st.tuples(
    st.integers(1, 1 << 60), st.sampled_from(["personal", "work"]), FIELD, st.sampled_from(["cur", "new"]),
    st.sampled_from(["1733.M1P2.host:2,S", "1733.M2P3.host"]), st.sampled_from(["", "S", "FRS"]),
    st.sampled_from(["", "a1@example.org", "odd id@example.net"]),
    st.floats(min_value=-2_000_000_000, max_value=4_000_000_000, allow_nan=False),
    FIELD, FIELD, FIELD, st.sampled_from([parse.FORGED, parse.PASS, ""]), st.sampled_from([0, 1]))


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(ROW, max_size=6), zone=st.sampled_from(ZONES))
def test_a_pages_hits_are_what_hit_makes_of_each_row(rows: list[tuple], zone) -> None:
    long_way = [answers._hit(CTX, dict(zip(answers.HIT_NAMES, row, strict=True)), zone) for row in rows]
    assert answers.page_hits(CTX, rows, zone) == long_way


def test_the_page_reads_the_columns_page_hits_unpacks() -> None:
    assert answers.HIT_NAMES == ("id", "account", "folder", "sub", "filename", "flags", "message_id", "date", "sender",
                                 "sender_name", "subject", "auth", "encrypted")


def _deliver(home: Path, count: int, start: int = 0, message_ids: bool = False) -> None:
    """`count` invented messages from `start` on, over three folders and senders (each with its own Message-ID
    when `message_ids`)."""
    words = ["harvest", "apples", "pears", "cider", "plums"]
    picker = random.Random(start)
    for number in range(start, start + count):
        sender = ("Ada Example <ada@example.net>", "Ann Example <ann@example.com>",
                  "Deals <deals@spam.example.net>")[number % 3]
        folder = ("INBOX", "Archive", "Lists/Orchard")[number % 3 if number % 7 else 2]
        sample.deliver(home / "Mail" / "personal" / folder,
                       sample.message(sender=sender, subject=f"Note {number} {picker.choice(words)}",
                                      body=" ".join(picker.sample(words, 3)) + (" quince" if number % 11 == 0 else ""),
                                      date=1_700_000_000 + number * 3600,
                                      **({"message_id": f"note{number}@example.org"} if message_ids else {})),
                       flags=("S", None, "FS", "RS")[number % 4])


# Words common and rare, none, a phrase, a prefix, NOT, a flag, a field, a date, a query FTS5 has no part in.
QUERIES = ["harvest", "quince", "zqxjvbnonexistent", '"note 3"', "note*", "cider -pears", "is:flagged",
           "is:unread quince", "subject:plums", "from:ann@example.com", "harvest date:2023-11-15..2023-11-16",
           "NOT harvest", "apples OR quince"]
SCOPES = [("1", [], None), ("m.account = ?", ["personal"], None), ("(m.folder = ? OR m.folder LIKE ?)",
                                                                   ["Lists", "Lists/%"], None), ("1", [], 36500)]


def _same_rows_with_and_without_the_empty_lists(connection, ids: list[int], picker: random.Random) -> int:
    """Every query and scope, with each of the three lists empty or not: what the statements give with an empty
    list's condition left out is what they give with it in (`[ ]` is empty too, but not `NOTHING`, so its condition
    stays: the long way)."""
    compared = 0
    for words in QUERIES:
        for where, values, days in SCOPES:
            for kept, blocked, shielded in (("[]", "[]", "[]"), (None, "[]", "[]"), ("[]", '["ann@example.com"]', "[]"),
                                            ("[]", "[]", None), (None, '["deals@spam.example.net"]', None)):
                lists = [json.dumps(picker.sample(ids, picker.randrange(1, len(ids)))) if value is None else value
                         for value in (kept, blocked, shielded)]
                short = answers.statements(UTC, words, where, values, days, *lists)
                long = answers.statements(UTC, words, where, values, days,
                                          *[" [ ]" if value == "[]" else value for value in lists])
                for limit in (1, 1000):
                    assert (connection.execute(short.page_sql, [*short.arguments, limit]).fetchall()
                            == connection.execute(long.page_sql, [*long.arguments, limit]).fetchall()), (words, where)
                    assert ([r[0] for r in connection.execute(short.sql, [*short.arguments, limit])]
                            == [r[0] for r in connection.execute(long.sql, [*long.arguments, limit])])
                assert (connection.execute(short.count_sql, short.count_arguments).fetchone()
                        == connection.execute(long.count_sql, long.count_arguments).fetchone()), (words, where, lists)
                # The rows alike, and the shortcut taken: no look into an empty list, all three the long way.
                assert short.page_sql.count("json_each") == sum(value != "[]" for value in lists)
                assert long.page_sql.count("json_each") == 3
                compared += 1
    return compared


def test_an_empty_lists_condition_left_out_gives_the_same_pages_and_totals(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    _deliver(gateway_home, 60)
    path = index.index_path(folders_of(gateway_home).for_plugin("mail").cache)
    picker = random.Random(5)
    account = [Account("personal", root)]

    def compared() -> int:
        connection = index.connect(path)
        try:
            index.refresh(connection, account)
            ids = [r[0] for r in connection.execute("SELECT id FROM messages")]
            return _same_rows_with_and_without_the_empty_lists(connection, ids, picker)
        finally:
            connection.close()

    assert compared() == len(QUERIES) * len(SCOPES) * 5
    _deliver(gateway_home, 25, start=60)  # new mail between two calls
    compared()
    shutil.rmtree(root / "Archive")  # a folder removed
    compared()
    for message in (root / "INBOX" / "new").iterdir():  # mail read and moved, as a mail program does
        message.rename(root / "INBOX" / "cur" / f"{message.name}:2,S")
    compared()


def test_search_mail_answers_alike_with_a_closed_project_blocked_senders_and_none(gateway_home: Path) -> None:
    """Through the tool: the kept and blocked lists empty or not, every query's answer is what the long way's rows
    make of it (the same ids, in the same order, with the same totals and counts)."""
    root = gateway_home / "Mail" / "personal"
    _deliver(gateway_home, 45)
    worlds = [  # the settings, the projects, the blocked senders found in the index
        ({"blocked": []}, None, " [ ]"),
        ({}, None, '["deals@spam.example.net"]'),  # the sample's config blocks @spam.example.net
        ({"blocked": []}, [{"id": "orchard", "ai": False, "senders": ["@example.com"]}], " [ ]"),
    ]
    for extra, projects, blocked in worlds:
        gateway = make_gateway([gateway_mail], home=gateway_home, config=sample.config(root, **extra),
                               projects=projects)
        connection = index.connect(index.index_path(folders_of(gateway_home).for_plugin("mail").cache))
        try:
            for words in QUERIES:
                answer = gateway.call("search_mail", {"query": words, "limit": 7})
                assert not answer.is_error, answer.text
                closed = json.dumps([r[0] for r in connection.execute(
                    "SELECT id FROM messages WHERE sender LIKE '%@example.com'")]) if projects else " [ ]"
                long = answers.statements(answer_zone(gateway_home), words, "1", [], None, closed, blocked, " [ ]")
                rows = connection.execute(long.page_sql, [*long.arguments, 7]).fetchall()
                assert [h["address"] for h in answer.data["hits"]] == [f"mid:{r['message_id']}" for r in rows], words
                total = connection.execute(long.count_sql, long.count_arguments).fetchone()[0]
                assert answer.data["total"] == (total if len(rows) >= 7 else len(rows)), words
                assert answer.data["left_out"] == (len(json.loads(closed)) if projects else 0)
        finally:
            connection.close()


def answer_zone(home: Path):
    from gateway import computer_zone

    return computer_zone()


def test_statements_kept_are_the_statements_made_again(monkeypatch) -> None:
    """The statements kept by what they are made from are those made anew, for every query, scope, list and zone;
    a search whose values follow the clock (days, a date) is made anew each time, never kept."""
    monkeypatch.setattr(answers, "_statements", {})
    monkeypatch.setattr(answers, "_STATEMENTS_KEPT", 10_000)
    lists = ["[]", "[3, 5]", '["ann@example.com"]']
    for _round in range(2):
        for words in QUERIES:
            for where, values, days in SCOPES:
                for zone in ZONES:
                    for kept, blocked, shielded in ((lists[0],) * 3, (lists[1], lists[2], lists[1])):
                        made = answers.statements(zone, words, where, values, days, kept, blocked, shielded)
                        again = answers._statements_of(zone, words, where, values, days, kept, blocked, shielded)
                        if days is None and "date:" not in words:
                            assert made == again, (words, where)
                        else:  # the clock moved between the two: only the statements' text is the same
                            assert (made.sql, made.page_sql, made.count_sql) == (again.sql, again.page_sql,
                                                                                 again.count_sql)
    undated = [words for words in QUERIES if "date:" not in words]
    assert len(answers._statements) == len(undated) * (len(SCOPES) - 1) * len(ZONES) * 2  # days and dates: none
    assert all(isinstance(search, answers.Search) for search in answers._statements.values())
    # The total's bound is in what they are made from: another bound, other statements.
    before = answers.statements(UTC, "harvest", "1", [], None, "[]", "[]", "[]")
    monkeypatch.setattr(answers, "TOTAL_BOUND", 7)
    assert answers.statements(UTC, "harvest", "1", [], None, "[]", "[]", "[]").count_arguments[-1] == 8
    assert before.count_arguments[-1] != 8


def test_the_lists_of_blocked_senders_and_shielded_messages_are_written_as_json_writes_them() -> None:
    from gateway_mail.mail import shield, store

    for blocked in (frozenset(), frozenset({"b@example.org", "a@example.net"})):
        for hidden in (shield.NONE, shield.Hidden(frozenset({9, 3})), shield.Hidden(unjudged=frozenset({4})),
                       shield.Hidden(frozenset({2}), frozenset({1}))):
            mail = store.Mail(None, [], None, None, blocked, shielded=hidden)
            assert mail.blocked_json == json.dumps(sorted(blocked))
            assert mail.shield_json == shield.hidden_json(hidden)
            assert json.loads(mail.shield_json) == sorted(hidden.ids)


def _one_line_the_long_way(fields: list) -> bool:
    return (all(type(text) is str and text and len(text) <= answers.FIELD_LIMIT and not text[0].isspace()
                and not text[-1].isspace() for text in fields)
            and answers._NOT_ONE_LINE.search(answers._BETWEEN_FIELDS.join(fields)) is None)


@settings(max_examples=2000, deadline=None)
@given(fields=st.lists(st.one_of(FIELD, st.text(alphabet="a| ", max_size=6), st.none(), st.integers(0, 9)),
                       max_size=9))
def test_the_pages_one_look_for_line_ends_gives_the_field_by_field_verdict(fields: list) -> None:
    assert answers._each_on_one_line(fields) == _one_line_the_long_way(fields)


def test_the_pages_one_look_for_line_ends_on_each_kind_of_space_and_control_character() -> None:
    for character in [*AWKWARD, *map(chr, range(0x20)), "\x7f", "\x85", "\u200b", "\ufeff", "\ud800", "\U000e0001"]:
        for fields in (["a", character], [character + "a", "b"], ["a" + character, "b"], ["a", character + "a"],
                       ["a" + character + "b"], [f"a{character} b"], [f"a {character}b"], [f"a {character}"]):
            assert answers._each_on_one_line(fields) == _one_line_the_long_way(fields), (character, fields)
