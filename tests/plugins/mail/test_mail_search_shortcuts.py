"""search_mail's shortcuts each give what the long way gives: a field already on one line given as it is, a message's
time written out without strftime, a query's plan kept by its text, the page read in the walk that finds it, the
accounts read once per configuration, and the search tables merged into one segment after bulk work."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import gateway_mail
import pytest
from gateway_mail.mail import answers, index, parse, query, sample, store
from gateway_mail.mail.accounts import Account
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway import Context
from gateway.testing import folders_of, make_gateway

CTX = SimpleNamespace(one_line=Context.one_line)
# Every kind of character one_line looks at: line ends of every reader, other controls, spaces of every width.
AWKWARD = "ab \t\n\r\x0b\x0c\x1c\x1f\x7f\x85\xa0\u1680\u2000\u2009\u2028\u2029\u202f\u3000é漢"


@settings(max_examples=600, deadline=None)
@given(text=st.one_of(st.text(alphabet=AWKWARD, max_size=40), st.text(max_size=40)),
       limit=st.integers(min_value=1, max_value=45))
def test_a_field_is_given_as_one_line_makes_it(text: str, limit: int) -> None:
    assert answers.on_one_line(CTX, text, limit) == Context.one_line(text, limit)


def test_what_is_not_a_string_goes_through_one_line() -> None:
    for value in (None, "", 12):
        assert answers.on_one_line(CTX, value, 10) == Context.one_line(value, 10)


ZONES = [None, UTC, ZoneInfo("Europe/Paris"), ZoneInfo("America/St_Johns"), ZoneInfo("Asia/Kathmandu"),
         ZoneInfo("Australia/Lord_Howe")]


@settings(max_examples=400, deadline=None)
@given(moment=st.floats(min_value=-62_000_000_000, max_value=253_000_000_000, allow_nan=False),
       zone=st.sampled_from(ZONES))
def test_a_messages_time_is_written_as_strftime_writes_it(moment: float, zone) -> None:
    shown = datetime.fromtimestamp(moment, tz=zone or UTC)
    assert parse.timestamp(moment, zone) == shown.strftime("%Y-%m-%d %H:%M ") + (shown.tzname() or "UTC")


def test_a_plan_is_kept_by_its_text_only_when_it_holds_no_date(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(query, "_plans", {})
    paris, kathmandu = ZoneInfo("Europe/Paris"), ZoneInfo("Asia/Kathmandu")
    monday, friday = datetime(2026, 3, 2, 9, tzinfo=paris), datetime(2026, 3, 6, 23, tzinfo=paris)
    # A date is read with the zone and the clock: each call reads it again, so the same words mean another day.
    for dated in ("date:today", "money DATE:yesterday..", "is:unread date:3d.."):
        assert query.plan(dated, paris, monday) != query.plan(dated, paris, friday)
        assert query.plan(dated, paris, monday) != query.plan(dated, kathmandu, monday.astimezone(kathmandu))
    assert query._plans == {}
    # Anything else means the same whatever the zone and the clock: read once.
    for undated in ("money", '"click here"', "spamass*", "(linux OR python) -razor", "subject:free is:flagged",
                    "from:ada@example.net", "会議", "NEAR(a b)", "id:<x@example.org>", "*"):
        first = query.plan(undated, paris, monday)
        assert query._plan(undated, kathmandu, friday) == first
        assert query.plan(undated, kathmandu, friday) is first
    with pytest.raises(Exception, match="cannot be read"):  # a query that cannot be read is said again each time
        query.plan("(money", paris, monday)
    assert "(money" not in query._plans


def _messages(home: Path, count: int, start: int = 0) -> None:
    words = ["harvest", "apples", "pears", "cider", "plums"]
    picker = random.Random(start)
    for number in range(start, start + count):
        sender = ("Ada Example <ada@example.net>", "Ann Example <ann@example.com>")[number % 2]
        sample.deliver(home / "Mail" / "personal" / ("INBOX" if number % 3 else "Archive"),
                       sample.message(sender=sender, subject=f"Note {number} {picker.choice(words)}",
                                      body=" ".join(picker.sample(words, 3)),
                                      date=1_700_000_000 + number * 3600))


def _connection(home: Path):
    return index.connect(index.index_path(folders_of(home).for_plugin("mail").cache))


QUERIES = ["harvest", "apples OR plums", "cider -pears", '"note 3"', "note*", "is:unread", "subject:plums",
           "from:ada@example.net", "harvest date:2023-11-15..2023-11-16"]


def test_the_page_is_the_rows_of_the_ids_the_walk_finds(gateway_home: Path) -> None:
    _messages(gateway_home, 40)
    gateway = make_gateway([gateway_mail], home=gateway_home, config=sample.config(gateway_home / "Mail" / "personal"))
    assert not gateway.call("search_mail", {"query": "harvest"}).is_error  # the index made
    connection = _connection(gateway_home)
    ids = [r[0] for r in connection.execute("SELECT id FROM messages")]
    picker = random.Random(3)
    for words in QUERIES:
        for where, values, days in (("1", [], None), ("m.account = ?", ["personal"], None), ("1", [], 36500)):
            for _ in range(4):
                kept, shielded = (json.dumps(picker.sample(ids, picker.randrange(len(ids)))) for _ in range(2))
                search = answers.statements(UTC, words, where, values, days, kept, '["ann@example.com"]', shielded)
                for limit in (1, 7, 50):
                    found = [r[0] for r in connection.execute(search.sql, [*search.arguments, limit])]
                    rows = connection.execute(search.page_sql, [*search.arguments, limit]).fetchall()
                    by_id = {r["id"]: dict(r) for r in connection.execute(
                        f"SELECT {answers.HIT_COLUMNS} FROM messages WHERE id IN (SELECT value FROM json_each(?))",
                        (json.dumps(found),))}
                    assert [dict(r) for r in rows] == [by_id[i] for i in found], (words, where, limit)
    connection.close()


def _segments(home: Path) -> int:
    connection = _connection(home)
    try:
        return index.segments(connection)
    finally:
        connection.close()


def _found(home: Path) -> dict[str, list[int]]:
    connection = _connection(home)
    try:
        return {words: [r[0] for r in connection.execute(*_asked(words))] for words in QUERIES}
    finally:
        connection.close()


def _asked(words: str) -> tuple[str, list]:
    search = answers.statements(UTC, words, "1", [], None, "[]", "[]", "[]")
    return search.sql, [*search.arguments, 1000]


def _refresh(home: Path, **options) -> dict[str, int]:
    connection = _connection(home)
    try:
        return index.refresh(connection, [Account("personal", home / "Mail" / "personal")], **options)
    finally:
        connection.close()


def test_bulk_work_merges_the_search_tables_and_a_calls_refresh_never_does(
        gateway_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index, "MERGE_AFTER", 6)
    # FTS5 merges some segments of its own accord (its automerge, whose moment follows the bytes written, so the
    # length of the home's path): what is ours to check is when the refresh asks for the merge into one.
    merges: list[int] = []
    merge = index.merge_segments
    monkeypatch.setattr(index, "merge_segments", lambda connection: (merges.append(1), merge(connection))[1])
    # A call's refreshes (their deadline's check given): a segment each, never merged. Three, fewer than the four
    # segments of one level at which FTS5's automerge starts merging them itself (it once made four into one here).
    for batch in range(3):
        _messages(gateway_home, 5, start=batch * 5)
        assert _refresh(gateway_home, check=lambda: None)["read"] == 5
    assert merges == [] and _segments(gateway_home) > 1
    before = _found(gateway_home)
    assert _refresh(gateway_home, check=lambda: None) == {"read": 0, "moved": 0, "removed": 0, "unreadable": 0}
    assert _refresh(gateway_home)["read"] == 0 and merges == []  # nothing read: nothing merged
    _refresh(gateway_home, full=True)  # `gateway mail index --full`: merged when there are several
    assert merges == [1] and _segments(gateway_home) == 1
    assert _found(gateway_home) == before  # the same messages for every query, in the same order

    for batch in range(3):
        _messages(gateway_home, 5, start=100 + batch * 5)
        _refresh(gateway_home, check=lambda: None)
    assert merges == [1]
    _messages(gateway_home, 6, start=200)
    assert _refresh(gateway_home)["read"] == 6  # read as many as MERGE_AFTER, no deadline: merged
    assert merges == [1, 1] and _segments(gateway_home) == 1
    merged = _found(gateway_home)
    connection = _connection(gateway_home)
    try:  # what FTS5 finds in one segment is what it finds in many: checked against its own 'rebuild'
        connection.execute("INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')")
        connection.commit()
        assert {words: [r[0] for r in connection.execute(*_asked(words))] for words in QUERIES} == merged
    finally:
        connection.close()


def test_the_accounts_are_read_again_when_their_settings_or_the_home_change(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plugin_config = tmp_path / "config" / "plugins" / "mail"
    monkeypatch.setenv("HOME", str(tmp_path / "one"))
    settings = {"accounts": [{"name": "personal", "maildir": "~/Mail"}]}
    first = store.accounts(settings, plugin_config)
    assert first == [Account("personal", tmp_path / "one" / "Mail")]
    assert store.accounts(dict(settings), plugin_config) == first  # the same value: read once
    first.clear()  # a caller's list is its own
    assert store.accounts(settings, plugin_config) == [Account("personal", tmp_path / "one" / "Mail")]
    changed = {"accounts": [{"name": "work", "maildir": "Work", "addresses": ["pat@example.org"]}]}
    assert store.accounts(changed, plugin_config) == [
        Account("work", tmp_path / "config" / "Work", ("pat@example.org",))]
    monkeypatch.setenv("HOME", str(tmp_path / "two"))
    assert store.accounts(settings, plugin_config) == [Account("personal", tmp_path / "two" / "Mail")]
    with pytest.raises(Exception, match="needs a maildir"):
        store.accounts({"accounts": [{"name": "broken"}]}, plugin_config)


def test_a_dated_search_follows_the_clock(gateway_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    now = datetime.now(UTC)
    for days, subject in ((0, "today's plums"), (3, "plums of three days ago")):
        sample.deliver(gateway_home / "Mail" / "personal" / "INBOX",
                       sample.message(subject=subject, date=(now - timedelta(days=days)).timestamp()))
    gateway = make_gateway([gateway_mail], home=gateway_home, config=sample.config(gateway_home / "Mail" / "personal"))
    assert [h["subject"] for h in gateway.call("search_mail", {"query": "plums date:today"}).data["hits"]] == [
        "today's plums"]
    later = now + timedelta(days=3)

    class Later(datetime):
        @classmethod
        def now(cls, tz=None):
            return later.astimezone(tz) if tz else later.replace(tzinfo=None)

    monkeypatch.setattr(query, "datetime", Later)
    assert gateway.call("search_mail", {"query": "plums date:today"}).data["hits"] == []
