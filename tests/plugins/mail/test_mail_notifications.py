"""The mail index before a call: with the kernel's file notifications, a call after which nothing happened in any
Maildir stats nothing (the refresh is not run at all), and each kind of change is seen by the very next call: a
message delivered, flagged (renamed in cur/), moved into a folder made meanwhile, removed; an account added."""

from __future__ import annotations

import os
from pathlib import Path

import gateway_mail
import pytest
from gateway_mail.mail import index, sample

from gateway.testing import make_gateway


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    runs: list[int] = []
    real = index.refresh

    def counting(*arguments, **options):
        runs.append(1)
        return real(*arguments, **options)

    monkeypatch.setattr(index, "refresh", counting)
    return runs


def _subjects(gateway, query: str, **arguments) -> list[str]:
    answer = gateway.call("search_mail", {"query": query, **arguments})
    assert not answer.is_error, answer.text
    return sorted(m["subject"] for m in answer.data["hits"])


def test_nothing_changed_runs_no_refresh_and_each_change_is_seen_by_the_next_call(
        gateway_home: Path, counted: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GATEWAY_FILE_NOTIFICATIONS", raising=False)
    root = gateway_home / "Mail" / "personal"
    first = sample.deliver(root / "INBOX", sample.message(subject="Roof budget", body="the budget"))
    gateway = make_gateway([gateway_mail], home=gateway_home, config=sample.config(root))
    for _ in range(3):  # the first calls watch the folders; from then on nothing changed, nothing is run
        assert _subjects(gateway, "budget") == ["Roof budget"]
    before = len(counted)
    for _ in range(5):
        assert _subjects(gateway, "budget") == ["Roof budget"]
    assert len(counted) == before

    sample.deliver(root / "INBOX", sample.message(subject="Garden budget", body="the budget"), flags=None)
    assert _subjects(gateway, "budget") == ["Garden budget", "Roof budget"]

    flagged = first.with_name(first.name.split(":2,")[0] + ":2,FS")  # a flag set: renamed in cur/
    os.rename(first, flagged)
    assert _subjects(gateway, "budget") == ["Garden budget", "Roof budget"]

    sample.deliver(root / "Archive", sample.message(subject="Old budget", body="the budget"))  # a folder made now
    assert _subjects(gateway, "budget", folder="personal/Archive") == ["Old budget"]

    flagged.unlink()
    assert _subjects(gateway, "budget") == ["Garden budget", "Old budget"]
    settled = len(counted)
    _subjects(gateway, "budget")
    _subjects(gateway, "budget")
    assert len(counted) <= settled + 1  # quiet again once the folders are settled


def test_without_notifications_every_call_runs_the_refresh(
        gateway_home: Path, counted: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    from gateway.api import changes

    monkeypatch.setattr(changes, "_hub", changes._Hub())  # the process's descriptor, made anew without inotify
    monkeypatch.setenv(changes.DISABLE, "0")
    root = gateway_home / "Mail" / "personal"
    sample.deliver(root / "INBOX", sample.message(subject="Roof budget", body="the budget"))
    gateway = make_gateway([gateway_mail], home=gateway_home, config=sample.config(root))
    for _ in range(4):
        _subjects(gateway, "budget")
    assert len(counted) == 4


def test_a_call_after_a_change_walks_each_account_once_and_still_watches_a_new_folder(
        gateway_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gateway_mail.mail import maildir

    monkeypatch.delenv("GATEWAY_FILE_NOTIFICATIONS", raising=False)
    walks: list[Path] = []
    real = maildir.folders

    def counting(root: Path):
        walks.append(root)
        return real(root)

    monkeypatch.setattr(maildir, "folders", counting)
    personal, work = gateway_home / "Mail" / "personal", gateway_home / "Mail" / "work"
    sample.deliver(personal / "INBOX", sample.message(subject="Roof budget", body="the budget"))
    sample.deliver(work / "INBOX", sample.message(subject="Desk budget", body="the budget"))
    config = sample.config(personal)
    config["plugins"]["mail"]["accounts"].append({**config["plugins"]["mail"]["accounts"][0], "name": "work",
                                                  "maildir": str(work)})
    gateway = make_gateway([gateway_mail], home=gateway_home, config=config)
    assert _subjects(gateway, "budget") == ["Desk budget", "Roof budget"]
    assert sorted(map(str, walks)) == sorted([str(personal), str(work)])  # the refresh's walk, handed on

    walks.clear()
    sample.deliver(work / "Later", sample.message(subject="Shed budget", body="the budget"))  # a folder made now
    assert _subjects(gateway, "budget") == ["Desk budget", "Roof budget", "Shed budget"]
    assert sorted(map(str, walks)) == sorted([str(personal), str(work)])
    sample.deliver(work / "Later", sample.message(subject="Gate budget", body="the budget"))  # into the new folder
    assert "Gate budget" in _subjects(gateway, "budget")
