"""search_mail with the index's look (its file's inode and its generation) left to file notifications answers what
the long way (the look made on every call) answers, after every kind of change between two calls: new mail, another
process writing the index, the index removed, the index replaced by another file, a folder removed. Each change comes
once the notifications stand in for the look, so the test plays the shortcut; the long way is the same gateway with
every kept look forgotten."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import gateway_mail
from gateway_mail.docindex import generation, set_meta
from gateway_mail.mail import index, sample, store
from gateway_mail.projects import belonging

from gateway.testing import folders_of, make_gateway
from tests.plugins.mail.test_mail_search_rare import QUERIES, _deliver

CLOSED = [{"id": "orchard", "ai": False, "senders": ["@example.com"]}]


def _answers(gateway) -> list:
    found = []
    for words in QUERIES:
        answer = gateway.call("search_mail", {"query": words, "limit": 7})
        assert not answer.is_error, answer.text
        assert "ann@example.com" not in answer.text + str(answer.data)  # the closed project's sender, never shown
        found.append((answer.text, answer.data))
    return found


def _forget_looks() -> None:
    for kept in (store._index_noted, belonging._ties_noted):
        for noted in kept.values():
            noted.close()
        kept.clear()


def test_search_with_the_index_look_left_to_notifications_answers_as_the_long_way(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    _deliver(gateway_home, 40)
    gateway = make_gateway([gateway_mail], home=gateway_home, config=sample.config(root), projects=CLOSED)
    path = index.index_path(folders_of(gateway_home).for_plugin("mail").cache)

    def settled() -> None:
        for _ in range(4):
            gateway.call("search_mail", {"query": "harvest"})
            noted = store._index_noted.get(str(path))
            if noted is not None and noted.seen() is not None:
                return
        raise AssertionError("the index's look was never left to the notifications")

    def compared() -> list:
        short = _answers(gateway)
        _forget_looks()
        assert short == _answers(gateway)
        return short

    settled()
    first = compared()
    assert first[0][1]["left_out"] > 0  # the closed project's messages are in the index, counted

    settled()
    _deliver(gateway_home, 20, start=40)  # new mail: the call's own refresh writes the index
    assert compared() != first

    # Another process writes the index: one of the closed project's messages gone from it, the generation moved on
    # (what is counted per generation, the messages left out, must be counted again).
    settled()
    before = compared()
    writer = sqlite3.connect(path)
    with writer:
        index._delete(writer, "id = (SELECT min(id) FROM messages WHERE sender LIKE '%@example.com' AND subject "
                              "LIKE '%harvest%')", ())
        set_meta(writer, "generation", str(generation(writer) + 1))
    writer.close()
    after = compared()
    assert after[0][1]["left_out"] == before[0][1]["left_out"] - 1

    # A copy of the index made now, mail delivered, then the copy renamed over the index: another file, another inode.
    settled()
    copy = path.with_name("copy.sqlite")
    source, target = sqlite3.connect(path), sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.close()
    _deliver(gateway_home, 10, start=60)
    compared()
    settled()
    copy.rename(path)
    compared()

    settled()
    for name in (path.name, f"{path.name}-wal", f"{path.name}-shm"):  # the index removed: made again in full
        (path.parent / name).unlink(missing_ok=True)
    compared()

    settled()
    shutil.rmtree(root / "Archive")  # a folder removed
    compared()


def test_an_index_replaced_while_a_call_reads_the_old_file_is_looked_at_again(gateway_home: Path,
                                                                              monkeypatch) -> None:
    """The index renamed over while a call's connection still reads the old file (during its refresh): that call's
    look read the old file's generation, which must not be kept for the new file. (Two things see to it: the look
    keeps nothing when the file is not the one its connection reads, and opening the new file, which the next call
    does, changes its mode: an event. This test fails only when both are gone.)"""
    root = gateway_home / "Mail" / "personal"
    _deliver(gateway_home, 30)
    gateway = make_gateway([gateway_mail], home=gateway_home, config=sample.config(root), projects=CLOSED)
    path = index.index_path(folders_of(gateway_home).for_plugin("mail").cache)
    gateway.call("search_mail", {"query": "harvest"})
    copy = path.with_name("copy.sqlite")
    source, target = sqlite3.connect(path), sqlite3.connect(copy)
    source.backup(target)  # the index as it is now: fewer messages, an older generation than after the next mail
    source.close()
    target.close()
    _deliver(gateway_home, 30, start=30)
    for _ in range(3):
        gateway.call("search_mail", {"query": "harvest"})
    assert store._index_noted[str(path)].seen() is not None
    refreshed = store._refreshed

    def replaced_meanwhile(*arguments) -> None:
        refreshed(*arguments)
        if copy.exists():
            copy.rename(path)

    monkeypatch.setattr(store, "_refreshed", replaced_meanwhile)
    gateway.call("search_mail", {"query": "harvest"})
    monkeypatch.setattr(store, "_refreshed", refreshed)
    short = _answers(gateway)
    _forget_looks()
    assert short == _answers(gateway)
