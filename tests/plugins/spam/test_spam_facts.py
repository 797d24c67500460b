"""The corpus's facts kept between processes (facts.sqlite), the spam plugin's refresh in `gateway watch`, and the
online evaluation's one-lookup step: training from the store gives what training from the files gives, to the
last digit; a changed or removed file is read again or forgotten; spam_review answers alike with or without it."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import gateway_mail
import gateway_spam
from gateway_spam import evaluation, freshness, kept, sample, training
from gateway_spam.model import Model
from gateway_spam.tokens import stripped, tokens

from gateway.commands.watch import CALLER, refresh_all
from gateway.testing import folders_of, make_gateway
from tests.forkserver import gateway_command


def _settings(home: Path, root: Path) -> dict:
    folders = folders_of(home)
    data = folders.data / "plugins" / "spam"
    data.mkdir(parents=True, exist_ok=True)
    return {"spam_folders": ["Junk", "Spam"], "ham_folders": ["INBOX", "Archive"], "ham_cutoff": 0.2,
            "spam_cutoff": 0.9, "data": str(data), "config": str(home), "cache": str(folders.cache / "plugins" / "spam"),
            "mail_accounts": [{"name": "personal", "maildir": str(root)}]}


def _stored(settings: dict) -> dict[str, tuple]:
    store = kept.Kept(settings["cache"])
    try:
        return store.rows()
    finally:
        store.close()


def test_training_again_reads_the_store_and_gives_the_same_model_and_figures(gateway_home: Path,
                                                                              monkeypatch) -> None:
    root = gateway_home / "Mail" / "personal"
    sample.write_mailbox(root, messages=60)
    settings = _settings(gateway_home, root)
    first = training.train(settings)
    model_first = Model.load(Path(settings["data"]) / "model.sqlite")
    rows = _stored(settings)
    assert len(rows) == first["corpus"]["read"] > 40
    assert oct(os.stat(Path(settings["cache"]) / kept.NAME).st_mode & 0o777) == "0o600"

    read: list[str] = []
    real = training.facts_of
    monkeypatch.setattr(training, "facts_of", lambda place: read.append(place.path.name) or real(place))
    again = training.train(settings)
    assert read == []  # nothing read from the files: every fact came from the store
    model_again = Model.load(Path(settings["data"]) / "model.sqlite")
    assert (model_again.spam, model_again.ham, model_again.counts, model_again.trained) == (
        model_first.spam, model_first.ham, model_first.counts, model_first.trained)
    assert again["online"] == first["online"] and again["corpus"] == first["corpus"]

    changed = next(iter((root / "INBOX" / "cur").iterdir()))
    changed.write_bytes(changed.read_bytes() + b"\nA line more.\n")
    gone = sorted((root / "Junk" / "cur").iterdir())[0]
    gone.unlink()
    training.train(settings)
    assert read == [changed.name]  # the changed file alone read again
    rows = _stored(settings)
    assert str(gone) not in rows and str(changed) in rows


def test_a_new_tokenizer_empties_the_store(gateway_home: Path, monkeypatch) -> None:
    root = gateway_home / "Mail" / "personal"
    sample.write_mailbox(root, messages=30)
    settings = _settings(gateway_home, root)
    assert training.keep(settings) > 20
    assert training.keep(settings) == 0  # all kept: nothing read
    monkeypatch.setattr(kept, "STAMP", kept.STAMP + " and a change")
    assert _stored(settings) == {}
    assert training.keep(settings) > 20


def test_a_store_of_the_earlier_layout_gets_the_facts_table_anew(gateway_home: Path) -> None:
    """A store written before (its facts in a WITHOUT ROWID table, under the earlier stamp) is emptied and its facts
    table made again in this layout; the next reading fills it."""
    root = gateway_home / "Mail" / "personal"
    sample.write_mailbox(root, messages=30)
    settings = _settings(gateway_home, root)
    Path(settings["cache"]).mkdir(parents=True, exist_ok=True)
    earlier = sqlite3.connect(Path(settings["cache"]) / kept.NAME)
    earlier.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value);
        CREATE TABLE facts (path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime INTEGER NOT NULL,
            readable INTEGER NOT NULL, key TEXT, digest TEXT, moment REAL, tokens TEXT) WITHOUT ROWID;
        INSERT INTO meta VALUES ('version', 'facts 2, tokens 1');
        INSERT INTO facts VALUES ('/nowhere/cur/1', 1, 1, 1, 'mid:a@example.com', 'd', 1.0, 'old');
    """)
    earlier.close()
    assert _stored(settings) == {}
    assert training.keep(settings) > 20
    check = sqlite3.connect(Path(settings["cache"]) / kept.NAME)
    try:
        layout = check.execute("SELECT sql FROM sqlite_master WHERE name = 'facts'").fetchone()[0]
        assert "WITHOUT ROWID" not in layout and check.execute("SELECT count(*) FROM facts").fetchone()[0] > 20
    finally:
        check.close()


def test_a_broken_store_is_as_if_empty(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    sample.write_mailbox(root, messages=30)
    settings = _settings(gateway_home, root)
    Path(settings["cache"]).mkdir(parents=True, exist_ok=True)
    (Path(settings["cache"]) / kept.NAME).write_bytes(b"not a database, long enough to be looked at" * 200)
    result = training.train(settings)
    assert result["corpus"]["read"] > 20 and result["online"]["messages"] > 20


def test_the_one_lookup_step_scores_as_score_then_learn(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    written = sample.write_mailbox(root, messages=80)
    assert written
    samples = []
    for number, path in enumerate(sorted(p for folder in root.iterdir() for p in (folder / "cur").iterdir())):
        label = "spam" if path.parent.parent.name == "Junk" else "ham"
        samples.append(evaluation.Sample(f"k{number}", label, float(number), tokens(stripped(path.read_bytes()))))
    fused = Model()
    outcomes = evaluation.online(samples, model=fused)
    apart = Model()
    for sample_, outcome in zip(samples, outcomes, strict=True):
        score = apart.score(sample_.tokens)
        assert (score.probability, score.strength) == (outcome.probability, outcome.strength)
        apart.learn(sample_.tokens, sample_.label, sample_.key)
    assert (fused.spam, fused.ham, fused.counts, fused.trained) == (apart.spam, apart.ham, apart.counts,
                                                                     apart.trained)


def test_watch_once_refreshes_the_spam_plugin_and_says_so(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    sample.write_mailbox(root, messages=40)
    gateway = make_gateway([gateway_mail, gateway_spam], home=gateway_home, config=sample.config(root),
                           projects=sample.PROJECTS)
    said: list[str] = []
    refresh_all(gateway, said.append, every_one=True)
    spam_line = next(line for line in said if " spam: " in line)
    assert int(spam_line.split(" spam: ")[1].split()[0]) > 30
    said.clear()
    refresh_all(gateway, said.append, every_one=True)
    assert any(" spam: 0 new" in line for line in said)  # nothing changed: nothing read
    sample.deliver(root / "Junk", sample.message("Prize <win@example.net>", "You won", "Claim your prize now",
                                                 1.0, "won@example.net"), 1.0)
    said.clear()
    refresh_all(gateway, said.append, every_one=True)
    assert any(" spam: 1 new" in line for line in said), said
    context = gateway.context("spam", gateway.snapshot(), CALLER)
    folders = {source.what for refresh in gateway.registry.get("spam").refreshes for source in refresh.sources(context)}
    assert "spam and ham folders of mail account personal" in folders


def test_no_spam_call_waits_for_the_store() -> None:
    assert freshness.stale(None) is False  # type: ignore[arg-type]


def test_spam_review_answers_alike_with_the_store_and_without(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    sample.write_mailbox(root, messages=40)
    gateway = make_gateway([gateway_mail, gateway_spam], home=gateway_home, config=sample.config(root),
                           projects=sample.PROJECTS)
    settings = _settings(gateway_home, root)
    training.train(settings)
    store = Path(settings["cache"]) / kept.NAME
    store.unlink()
    without = gateway.call("spam_review", {"limit": 20})
    training.keep(settings)
    connection = sqlite3.connect(store)
    assert connection.execute("SELECT count(*) FROM facts").fetchone()[0] > 30
    connection.close()
    kept_answer = gateway.call("spam_review", {"limit": 20})
    assert not without.is_error and without.text == kept_answer.text and without.data == kept_answer.data
    status = gateway.call("spam_status", {})
    model = Model.load(Path(settings["data"]) / "model.sqlite")
    assert status.data["model"]["spam"] == model.spam and status.data["model"]["ham"] == model.ham


def test_gateway_watch_once_reads_the_spam_corpus_as_a_person_runs_it(gateway_home: Path) -> None:
    import subprocess

    from gateway.api.context import home_environment
    from gateway.testing import write_config

    root = gateway_home / "Mail" / "personal"
    sample.write_mailbox(root, messages=30)
    write_config(gateway_home, sample.config(root))
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(gateway_home)}

    def once() -> str:
        done = subprocess.run(gateway_command("watch", "--once"), env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return next(line for line in done.stderr.splitlines() if " spam: " in line)

    first = once()
    assert int(first.split(" spam: ")[1].split()[0]) > 20 and " ms)" in first
    assert (folders_of(gateway_home).cache / "plugins" / "spam" / kept.NAME).is_file()
    assert " spam: 0 new" in once()  # a new process: the store already has every file


def test_a_token_with_a_newline_and_an_unreadable_file_are_kept_as_they_are(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    sample.write_mailbox(root, messages=30)
    folded = (b"From: Relay <relay@example.org>\nSubject: folded id\nMessage-ID: <x1@example.org (added by\n"
              b"    relay)>\nDate: Tue, 01 Dec 2026 10:00:00 +0000\n\nplain words of a folded message\n")
    odd = sample.deliver(root / "INBOX", folded, 1.0)
    nested = b"".join(b'Content-Type: multipart/mixed; boundary="b%d"\n\n--b%d\n' % (i, i) for i in range(80))
    sample.deliver(root / "Junk", b"From: x@example.com\nSubject: deep\nMIME-Version: 1.0\n" + nested, 2.0)
    settings = _settings(gateway_home, root)
    expected = training.facts_of(next(p for p in training.corpus.folder_places(
        training.accounts_in({"accounts": settings["mail_accounts"]}, gateway_home), ["Junk"], ["INBOX"])
        if p.path == odd))
    assert any("\n" in token for token in expected[3])
    assert training.keep(settings) > 20
    assert training.keep(settings) == 0  # neither the folded message nor the broken one read again
    assert _stored(settings)[str(odd)][2] == expected
