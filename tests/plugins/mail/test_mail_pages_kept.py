"""search_mail's pages kept per index generation: the same search again on an unchanged index reads no row again,
and every change its rows follow (new mail, a flag, a folder removed, an index made again, a project closed, a
sender blocked) gives the answer read afresh, as if no page had been kept."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import gateway_mail
import pytest
from gateway_mail.mail import answers, index, sample

from gateway.testing import folders_of, make_gateway
from tests.plugins.mail import test_mail_search_rare as search_rare

QUERIES = ["harvest", "quince", "zqxjvbnonexistent", '"note 3"', "note*", "cider -pears", "is:flagged",
           "is:unread quince", "subject:plums", "from:ann@example.com", "harvest date:2023-11-15..2023-11-16",
           "NOT harvest", "apples OR quince"]


def _deliver(home: Path, count: int, start: int = 0) -> None:
    search_rare._deliver(home, count, start, message_ids=True)


def _answers(gateway, monkeypatch: pytest.MonkeyPatch, keeping: bool) -> list:
    monkeypatch.setattr(answers, "KEEPING_PAGES", keeping)
    said = []
    for words in QUERIES:
        for arguments in ({}, {"limit": 3}, {"folder": "Lists"}, {"days": 36500}):
            answer = gateway.call("search_mail", {"query": words, **arguments})
            said.append((words, arguments, answer.is_error, answer.text, answer.data))
    return said


def _alike(gateway, monkeypatch: pytest.MonkeyPatch) -> list:
    """The answers with pages kept (each asked twice: read, then kept) and read afresh: the same."""
    kept = _answers(gateway, monkeypatch, True)
    assert _answers(gateway, monkeypatch, True) == kept
    assert _answers(gateway, monkeypatch, False) == kept
    return kept


def _addresses(said: list, words: str) -> list[str]:
    [data] = [data for w, arguments, _error, _text, data in said if w == words and not arguments]
    return [hit["address"] for hit in data["hits"]]


def test_a_kept_page_is_the_page_read_afresh_through_every_change(gateway_home: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    root = gateway_home / "Mail" / "personal"
    _deliver(gateway_home, 40)
    gateway = make_gateway([gateway_mail], home=gateway_home, config=sample.config(root, blocked=[]))
    first = _alike(gateway, monkeypatch)
    assert len(answers._pages) > 0
    _deliver(gateway_home, 12, start=40)  # new mail between two calls: note44's quince is found
    second = _alike(gateway, monkeypatch)
    assert _addresses(second, "quince")[0] == "mid:note44@example.org"
    assert _addresses(second, "quince")[1:] == _addresses(first, "quince")
    [data] = [data for w, arguments, _e, _t, data in second if w == "harvest" and not arguments]
    assert not all(hit["flags"] for hit in data["hits"])
    for message in list(root.glob("**/new/*")):  # mail read, as a mail program marks it
        message.rename(message.parent.parent / "cur" / f"{message.name}:2,S")
    third = _alike(gateway, monkeypatch)
    [data] = [data for w, arguments, _e, _t, data in third if w == "harvest" and not arguments]
    assert all(hit["flags"] for hit in data["hits"])  # no hit still shown unread
    assert _addresses(third, "is:unread quince") == []
    shutil.rmtree(root / "Archive")  # a folder removed
    fourth = _alike(gateway, monkeypatch)
    assert all(hit["folder"] != "Archive" for *_rest, data in fourth if data for hit in data["hits"])


def test_a_project_closed_or_a_sender_blocked_takes_its_mail_out_of_a_kept_page(gateway_home: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    root = gateway_home / "Mail" / "personal"
    _deliver(gateway_home, 30)
    worlds = [({"blocked": []}, []), ({"blocked": []}, [{"id": "orchard", "ai": False, "senders": ["@example.com"]}]),
              ({"blocked": ["ada@example.net"]}, []), ({"blocked": []}, [])]
    seen = []
    for extra, projects in worlds:
        gateway = make_gateway([gateway_mail], home=gateway_home, config=sample.config(root, **extra),
                               projects=projects)
        said = _alike(gateway, monkeypatch)
        hits = [hit for *_rest, data in said if data for hit in data["hits"]]
        senders = {hit["from"].rpartition("<")[2].rstrip(">") for hit in hits}
        seen.append(senders)
        if projects:
            assert "ann@example.com" not in senders
        if extra["blocked"]:
            assert "ada@example.net" not in senders
    assert "ann@example.com" in seen[0] and "ada@example.net" in seen[0] and seen[3] == seen[0]


def test_an_index_made_again_is_not_answered_from_the_pages_of_the_one_before(gateway_home: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The index removed and made again from other mail can reach the same generation: its pages are its own."""
    root = gateway_home / "Mail" / "personal"
    _deliver(gateway_home, 20)
    gateway = make_gateway([gateway_mail], home=gateway_home, config=sample.config(root, blocked=[]))
    before = _alike(gateway, monkeypatch)
    path = index.index_path(folders_of(gateway_home).for_plugin("mail").cache)
    generation = index.generation(index.thread_connection(path))
    for message in [*(root / "INBOX" / "cur").iterdir(), *(root / "INBOX" / "new").iterdir()][::2]:
        message.unlink()
    for file in path.parent.glob(path.name + "*"):
        file.unlink()
    assert not gateway.call("search_mail", {"query": "harvest"}).is_error  # the index made again
    connection = index.connect(path)
    try:  # at the generation the one before had (how many writes made it varies)
        with connection:
            index.set_meta(connection, "generation", str(generation))
    finally:
        connection.close()
    after = _alike(gateway, monkeypatch)
    assert index.generation(index.thread_connection(path)) == generation  # the same generation, another index
    assert after != before
    assert len(_addresses(after, "harvest")) < len(_addresses(before, "harvest"))


def test_pages_kept_are_bounded(gateway_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = gateway_home / "Mail" / "personal"
    _deliver(gateway_home, 30)
    gateway = make_gateway([gateway_mail], home=gateway_home, config=sample.config(root, blocked=[]))
    monkeypatch.setattr(answers, "_pages", {})
    monkeypatch.setattr(answers, "_page_rows_kept", 0)
    monkeypatch.setattr(answers, "PAGES_KEPT", 5)
    monkeypatch.setattr(answers, "PAGE_ROWS_KEPT", 40)
    for limit in range(1, 30):
        assert not gateway.call("search_mail", {"query": "note", "limit": limit}).is_error
        assert len(answers._pages) <= 5 and answers._page_rows_kept <= 40
        assert answers._page_rows_kept == sum(len(rows) for rows in answers._pages.values())


def test_each_answer_s_hits_are_its_own(gateway_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a kept page shows is made once, and each answer gets hits of its own: one changed by whoever holds an
    answer is not the next answer's."""
    root = gateway_home / "Mail" / "personal"
    _deliver(gateway_home, 12)
    gateway = make_gateway([gateway_mail], home=gateway_home, config=sample.config(root, blocked=[]))
    first = gateway.call("search_mail", {"query": "harvest"})
    kept = json.dumps(first.data)
    for hit in first.data["hits"]:
        hit["subject"] = "changed"
        hit.pop("address")
    first.data["hits"].append({"address": "mid:forged@example.org"})
    again = gateway.call("search_mail", {"query": "harvest"})
    assert json.dumps(again.data) == kept and again.data["hits"] is not first.data["hits"]
