"""The spam plugin's defences, in process: the labels' store (who gave each, the person's first), the correspondents,
TLS settings, the review's bound, and the gate that fails closed when it cannot read every conversation in time."""

from __future__ import annotations

import json
import time
from pathlib import Path

import attrs
import gateway_mail
import gateway_spam
import pytest
from gateway_spam import labels, sample
from gateway_spam.correspondents import correspondents
from gateway_spam.fetch import FetchFailed, connect, is_loopback, tls_problem
from gateway_spam.tools import Shown, client_name, folders_signature, review_budget
from maildirs import accounts_in

from gateway import ToolError
from gateway.api.deadline import Deadline
from gateway.engine.core import Caller
from gateway.testing import make_gateway


def test_the_persons_label_counts_over_any_agents_and_undoing_a_client_shows_the_others_again(tmp_path: Path) -> None:
    key = "mid:a@example.org"
    labels.write_label(tmp_path, key, "ham", "/x", client="host-a", client_version="1")
    labels.write_label(tmp_path, key, "spam", "/x", client="host-b")
    assert labels.read_labels(tmp_path)[key]["label"] == "spam"  # the latest agent's
    labels.write_label(tmp_path, key, "ham", "/x")  # the person (cli)
    labels.write_label(tmp_path, key, "spam", "/x", client="host-a")  # an agent after the person: does not count
    assert labels.read_labels(tmp_path)[key]["client"] == labels.PERSON
    lines = labels.labels_path(tmp_path).read_text().splitlines()
    assert len(lines) == 3  # one line per (message, client): host-a's second label replaced its first
    assert {json.loads(line)["client"] for line in lines} == {"host-a", "host-b", "cli"}
    assert [e["key"] for e in labels.remove_client(tmp_path, labels.PERSON)] == [key]
    assert labels.read_labels(tmp_path)[key]["client"] == "host-a"
    labels.remove_client(tmp_path, "host-a")
    assert labels.read_labels(tmp_path)[key]["client"] == "host-b"
    summary = labels.by_client(labels.entries(tmp_path))
    assert summary == {"host-b": {"labels": 1, "spam": 1, "ham": 0, "versions": [], "first": summary["host-b"]["first"],
                                  "last": summary["host-b"]["last"]}}


def test_a_label_written_before_clients_were_recorded_is_listed_as_unrecorded(tmp_path: Path) -> None:
    labels.labels_path(tmp_path).write_text(json.dumps({"key": "mid:o@example.org", "label": "spam", "place": "/o",
                                                        "at": "2026-11-30T10:00:00Z"}) + "\n")
    assert list(labels.by_client(labels.entries(tmp_path))) == [labels.UNRECORDED]
    assert labels.agent_labels_since(labels.entries(tmp_path), 0)  # counted with the agents' labels
    assert len(labels.remove_client(tmp_path, labels.UNRECORDED)) == 1


def test_correspondents_are_the_recipients_of_the_persons_own_mail(tmp_path: Path) -> None:
    root = tmp_path / "Mail"
    now = time.time()
    to_ada = sample.message("Pat <pat@example.org>", "hello", "words", now, "s1@example.org")
    sample.deliver(root / "Sent Items", to_ada.replace(b"To: Pat Example <pat@example.org>", b"To: ada@example.org"),
                   now)
    # Pat's own mail outside Sent (a copy to self, Cc the lawyer) counts too; Pat is never a correspondent.
    copy = sample.message("Pat <PAT@example.org>", "copy", "words", now, "s2@example.org")
    sample.deliver(root / "INBOX", copy.replace(b"To: Pat Example <pat@example.org>",
                                                b"To: pat@example.org\nCc: Lee <lee@firm.example.com>"), now)
    for number in range(5):
        sample.deliver(root / "INBOX", sample.message("Ada <ada@example.org>", "hi", "words", now - number,
                                                      f"a{number}@example.org"), now - number)
    sample.deliver(root / "Junk", sample.message("Ada <ada@example.org>", "forged", "x", now, "f@example.org"), now)
    sample.deliver(root / "INBOX", sample.message("Zed <zed@example.net>", "hi", "x", now, "z@example.org"), now)
    known = accounts_in({"accounts": [{"name": "p", "maildir": str(root), "addresses": ["pat@example.org"]}]},
                        tmp_path)
    found = correspondents(known, lambda name: name == "Junk")
    assert found.addresses == {"ada@example.org", "lee@firm.example.com"}
    assert "ADA@example.org" in found and "zed@example.net" not in found
    assert len(found.watched) == 3 and all("Junk" not in str(p) for p in found.watched)  # her 3 newest, no spam
    assert len(found.probes) == 2 and any("from:addr:firm.example.com" in p for p in found.probes)


def test_tls_false_only_for_a_loopback_host(tmp_path: Path) -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LOCALHOST."))
    assert not any(is_loopback(h) for h in ("imap.example.org", "10.0.0.1", "128.0.0.1", "localhost.example.org"))
    assert tls_problem({"host": "imap.example.org"}) is None  # TLS by default
    assert "loopback host only" in tls_problem({"host": "imap.example.org", "tls": False})
    assert "true or false" in tls_problem({"host": "127.0.0.1", "tls": "no"})
    assert tls_problem({"host": "127.0.0.1", "tls": False}) is None
    with pytest.raises(FetchFailed, match="loopback host only"):
        connect({"host": "192.0.2.1", "port": 143, "tls": False})  # refused before any connection is tried


def test_the_review_reads_a_bounded_number_whatever_the_store() -> None:
    assert review_budget(1) == 110 and review_budget(200) == 2100


def _ctx(home: Path, deadline: Deadline):
    root = home / "Mail" / "personal"
    sample.write_mailbox(root, messages=10, now=time.time())
    gateway = make_gateway([gateway_mail, gateway_spam], home=home, config=sample.config(root),
                           projects=sample.PROJECTS)
    ctx = gateway.context("spam", gateway.snapshot(), Caller("host", "1", "test"))
    return attrs.evolve(ctx, deadline=deadline)


def test_the_gate_fails_closed_when_it_cannot_read_every_conversation_in_time(gateway_home: Path) -> None:
    ctx = _ctx(gateway_home, Deadline.after(0.0))
    shown = Shown(ctx)
    envelope = {"sender": "ada@example.org", "subject": "Garden", "folder": "INBOX", "address": "mid:x@example.org",
                "ids": ["x@example.org"]}
    assert shown.filter([envelope]) == [] and shown.unchecked == 1
    assert "not shown yet" in " ".join(shown.sentences())
    with pytest.raises(ToolError, match="try again"):
        shown.owners_or_refuse(envelope)
    # With time, the same message is read and shown.
    patient = Shown(attrs.evolve(ctx, deadline=Deadline.after(60)))
    assert [e["address"] for e in patient.filter([envelope])] == ["mid:x@example.org"] and patient.unchecked == 0


def test_the_conversations_are_read_again_only_when_a_message_directory_changes(gateway_home: Path) -> None:
    ctx = _ctx(gateway_home, Deadline.after(60))
    first = Shown(ctx).conversations()
    assert first is not None and Shown(ctx).conversations() is first
    signature = folders_signature(Shown(ctx).accounts, ctx.folders.data)
    time.sleep(0.01)
    sample.deliver(gateway_home / "Mail" / "personal" / "INBOX", sample.message(
        "Ada <ada@example.org>", "new", "x", time.time(), "new@example.org"), time.time())
    assert folders_signature(Shown(ctx).accounts, ctx.folders.data) != signature
    assert Shown(ctx).conversations() is not first


def test_only_the_command_line_speaks_for_the_person(gateway_home: Path) -> None:
    ctx = _ctx(gateway_home, Deadline.after(60))
    assert client_name(attrs.evolve(ctx, transport="cli")) == (labels.PERSON, "")
    assert client_name(attrs.evolve(ctx, client="Claude Code", client_version="2.1", transport="stdio")) == \
        ("Claude Code", "2.1")
    assert client_name(attrs.evolve(ctx, client="cli", transport="http")) == ("cli (mcp)", "1")  # a host posing
    assert client_name(attrs.evolve(ctx, client="two\nlines", transport="stdio"))[0] == "two lines"
