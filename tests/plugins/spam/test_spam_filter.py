"""The filter on its own: tokens, the model and its file, the corpus's labels, the evaluation's figures."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest
from gateway_spam import corpus, evaluation, sample, training
from gateway_spam.model import Model
from gateway_spam.tokens import stripped, tokens


def test_html_is_read_as_text_and_leaking_headers_are_left_out() -> None:
    raw = sample.message("Prize <p@winner.example.net>", "Hello", "", 1.0, "h@example.net",
                         html="<html><body><p>Unclaimed <b>jackpot</b></p><script>evilscript()</script></body></html>")
    raw = b"X-Spam-Status: Yes, score=9\nReceived: from relay.example.net\n" + raw
    found = tokens(raw)
    assert {"unclaimed", "jackpot", "html:script"} <= found
    assert not any("evilscript" in t for t in found)
    assert not any(t.startswith("header:x-spam") or t.startswith("header:received") for t in found)
    assert b"X-Spam-Status" not in stripped(raw) and b"Received:" not in stripped(raw)
    assert b"Subject: Hello" in stripped(raw)


def test_long_words_become_skip_tokens_and_addresses_give_their_domains() -> None:
    found = tokens(sample.message("Ada <ada@mail.example.org>", "Supercalifragilistic offer", "x", 1.0, "a@b.c"))
    assert "subject:skip:s 20" in found and "from:addr:mail.example.org" in found
    assert "from:domain:example.org" in found


def test_the_model_tells_spam_from_ham_and_unlearns_a_label(tmp_path: Path) -> None:
    model = Model()
    for _ in range(20):
        model.learn({"lottery", "winner", "claim"}, "spam")
        model.learn({"garden", "tuesday", "plumtree"}, "ham")
    assert model.score({"lottery", "winner"}).probability > 0.9
    assert model.score({"garden", "tuesday"}).probability < 0.2
    assert model.score({"unknownword"}).probability == 0.5  # no clue: unsure
    assert model.relearn({"plumtree", "lottery"}, "spam", "mid:x") is True
    assert model.relearn({"plumtree", "lottery"}, "spam", "mid:x") is False
    assert model.relearn({"plumtree", "lottery"}, "ham", "mid:x") is True
    assert model.spam == 20 and model.ham == 21 and model.trained == {"mid:x": "ham"}


def test_the_model_file_is_private_and_written_whole_then_renamed(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "model.sqlite"
    first = Model()
    first.learn({"alpha"}, "spam")
    first.save(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    second = Model()
    second.learn({"beta"}, "ham")

    def crash(*_args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        second.save(path)
    monkeypatch.undo()
    assert Model.load(path).counts == {"alpha": [1, 0]}  # the old model, whole
    assert [p.name for p in tmp_path.iterdir()] == ["model.sqlite"]  # no half-written file left


def test_a_label_is_one_line_replaced_by_the_next(tmp_path: Path) -> None:
    assert corpus.write_label(tmp_path, "mid:a@example.org", "spam", "/x") is None
    corpus.write_label(tmp_path, "mid:b@example.org", "ham", "/y")
    assert corpus.write_label(tmp_path, "mid:a@example.org", "ham", "/x") == "spam"
    lines = corpus.labels_path(tmp_path).read_text().splitlines()
    assert len(lines) == 2 and stat.S_IMODE(corpus.labels_path(tmp_path).stat().st_mode) == 0o600
    assert corpus.read_labels(tmp_path)["mid:a@example.org"]["label"] == "ham"


def test_online_evaluation_classifies_before_it_trains_in_time_order() -> None:
    samples = [evaluation.Sample(f"s{i}", "spam" if i % 2 else "ham", float(100 - i),
                                 {"lottery", f"x{i}"} if i % 2 else {"garden", f"y{i}"}) for i in range(40)]
    outcomes = evaluation.online(samples)
    assert [o.sample.when for o in outcomes] == sorted(s.when for s in samples)
    assert outcomes[0].probability == 0.5  # the first message meets an empty model
    figures = evaluation.figures(outcomes, 0.2, 0.9)
    assert figures["messages"] == 40 and figures["false_positives"] == 0 and figures["unsure"] >= 1
    assert figures["one_minus_roca_percent"] < 5
    assert len(evaluation.k_fold(samples)) == 40


def test_roc_area_counts_ties_half() -> None:
    def outcome(label: str, p: float) -> evaluation.Outcome:
        return evaluation.Outcome(evaluation.Sample("k", label, 0.0, set()), p, 0.0)

    assert evaluation.roc_area([outcome("spam", 0.9), outcome("ham", 0.1)]) == 1.0
    assert evaluation.roc_area([outcome("spam", 0.1), outcome("ham", 0.9)]) == 0.0
    assert evaluation.roc_area([outcome("spam", 0.5), outcome("ham", 0.5)]) == 0.5


def test_the_corpus_is_the_spam_and_ham_folders_labels_and_fetched_without_duplicates(tmp_path: Path) -> None:
    root = tmp_path / "Mail"
    written = sample.write_mailbox(root, messages=20)
    copy = root / "Archive" / "cur" / "copy:2,S"
    copy.write_bytes(written["code"].read_bytes().replace(b"code@example.org", b"copy@example.org"))
    data = tmp_path / "data"
    data.mkdir()
    corpus.write_label(data, "mid:mixed@example.com", "ham", str(written["mixed"]))  # Notes: labelled only
    assert corpus.add_fetched(data, sample.message("F <f@example.net>", "Fetched", "prize", 5.0, "f@x"), "spam", "p")
    settings = {"spam_folders": ["Junk"], "ham_folders": ["INBOX", "Archive"], "data": str(data),
                "config": str(tmp_path), "mail_accounts": [{"name": "personal", "maildir": str(root)}]}
    samples, counts = training.gather(settings)
    keys = {s.key for s in samples}
    assert "mid:mixed@example.com" in keys and "mid:f@x" in keys
    # The same body under another Message-ID is one message: only the first met is kept.
    assert len({"mid:copy@example.org", "mid:code@example.org"} & keys) == 1 and counts["duplicates"] == 1
    assert len(samples) == 20 + 3 + 1 + 1  # 20 made, code/blocked/closed, the labelled one, the fetched one
    assert all(sample.BODY_CANARY not in str(s.envelope) for s in samples)
    assert "482913" not in str([s.envelope for s in samples])


def test_a_job_is_kept_a_week_after_it_ended(tmp_path: Path) -> None:
    from gateway_spam import jobs

    folder = jobs.jobs_folder(tmp_path)
    now = time.time()
    for job_id, ended in (("old", now - 8 * 86400), ("recent", now - 6 * 86400)):
        jobs.write(folder / f"{job_id}.json", {"id": job_id, "kind": "train", "state": "done", "started": ended - 60,
                                               "ended": ended, "pid": 0})
    assert [j["id"] for j in jobs.all_jobs(tmp_path)] == ["recent"]
    assert not (folder / "old.json").exists()
    assert stat.S_IMODE((folder / "recent.json").stat().st_mode) == 0o600


def test_the_corpus_read_by_a_pool_is_the_corpus_read_in_one_process_a_broken_message_counted_alone(
        tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "Mail"
    sample.write_mailbox(root, messages=40)
    # Nested deeper than the parser is allowed to go: unreadable, and only it.
    nested = b"".join(b'Content-Type: multipart/mixed; boundary="b%d"\n\n--b%d\n' % (n, n) for n in range(200))
    (root / "INBOX" / "cur" / "nested:2,S").write_bytes(
        b"From: a@example.org\nMessage-ID: <nested@example.org>\nSubject: deep\nMIME-Version: 1.0\n" + nested)
    data = tmp_path / "data"
    data.mkdir()
    settings = {"spam_folders": ["Junk"], "ham_folders": ["INBOX", "Archive"], "data": str(data),
                "config": str(tmp_path), "mail_accounts": [{"name": "personal", "maildir": str(root)}]}
    monkeypatch.setattr(training, "POOL_FROM", 10**9)
    alone, alone_counts = training.gather(settings)
    monkeypatch.setattr(training, "POOL_FROM", 1)
    monkeypatch.setattr(training, "POOL_CHUNK", 4)
    monkeypatch.setattr(training, "_workers", lambda: 2)
    pooled, pooled_counts = training.gather(settings)
    assert pooled_counts == alone_counts and alone_counts["unreadable"] == 1
    assert [(s.key, s.label, s.when, s.tokens, s.envelope) for s in pooled] == \
        [(s.key, s.label, s.when, s.tokens, s.envelope) for s in alone]
    assert len(pooled) == 40 + 3
    outcomes = [(o.probability, o.strength) for o in evaluation.online(pooled)]
    model = Model()
    expected = []
    for s in sorted(alone, key=lambda s: s.when):  # the scoring written out, as the in-server model scores
        score = model.score(s.tokens)
        expected.append((score.probability, score.strength))
        model.learn(s.tokens, s.label, s.key)
    assert outcomes == expected


def test_the_written_out_score_is_the_formula_to_the_last_digit() -> None:
    """`combine` with `probability` inlined and `chi2q` with its functions bound gives what the formulas give."""
    import math
    import random

    from spamfilter import score

    def chi2q(x2: float, freedom: int) -> float:
        m = x2 / 2.0
        if m <= 0:
            return 1.0
        log_m = math.log(m)
        log_term = log_total = -m
        for i in range(1, freedom // 2):
            log_term += log_m - math.log(i)
            high, low = (log_total, log_term) if log_total >= log_term else (log_term, log_total)
            log_total = high + math.log1p(math.exp(low - high))
            if log_term < log_total - 40 and i > m:
                break
        return min(math.exp(log_total), 1.0)

    def combine(counts, spam_total, ham_total):
        clues = []
        for token, spam_count, ham_count in counts:
            f = score.probability(spam_count, ham_count, spam_total, ham_total)
            if f is not None and abs(f - 0.5) >= score.MIN_DISTANCE:
                clues.append((abs(f - 0.5), token, f))
        clues.sort(reverse=True)
        del clues[score.MAX_CLUES:]
        if not clues:
            return 0.5, 0.0
        ln_h = ln_s = strength = 0.0
        for _d, _t, f in clues:
            f = min(max(f, 1e-6), 1 - 1e-6)
            ln_h += math.log(f)
            ln_s += math.log(1.0 - f)
            strength += math.log(f / (1.0 - f))
        n = len(clues)
        value = (1.0 - chi2q(-2.0 * ln_s, 2 * n) - (1.0 - chi2q(-2.0 * ln_h, 2 * n)) + 1.0) / 2.0
        if min(spam_total, ham_total) < score.MIN_EACH:
            value = 0.5 + (value - 0.5) * score.SQUASH
        return value, strength

    rng = random.Random(7)
    for _ in range(300):
        spam_total, ham_total = rng.choice([0, 1, 2, 5, 300, 4000]), rng.choice([0, 1, 3, 80, 9000])
        counts = [(f"t{n}", rng.randint(0, spam_total), rng.randint(0, ham_total)) for n in range(rng.randint(0, 700))]
        counts = [c for c in counts if c[1] or c[2]]
        assert score.combine(counts, spam_total, ham_total)[:2] == combine(counts, spam_total, ham_total)



def test_the_online_step_scores_as_combine_known_whatever_the_counts() -> None:
    """`combine_then_count`, whose one-class tokens take f and its logarithms from tables by count, gives
    `combine_known`'s score and strength to the bit, and raises each count by one, on counts of every kind: one class
    or both, zero, a count above its class's total (a model file not made by training) or below zero."""
    import random

    from spamfilter import score

    rng = random.Random(11)
    for _ in range(400):
        spam_total, ham_total = rng.choice([1, 2, 3, 40, 700, 9000]), rng.choice([1, 3, 5, 90, 6000])
        counts = {}
        for n in range(rng.randint(0, 500)):
            kind = rng.random()
            pair = ([rng.randint(1, spam_total), 0] if kind < 0.4 else [0, rng.randint(1, ham_total)] if kind < 0.7
                    else [rng.randint(0, spam_total), rng.randint(0, ham_total)] if kind < 0.95
                    else [rng.choice([-1, 0, spam_total + 500]), rng.choice([-2, 0, ham_total + 900])])
            counts[f"t{n}"] = pair
        tokens = list(counts) + [f"new{n}" for n in range(rng.randint(0, 20))]
        rng.shuffle(tokens)
        column = rng.randint(0, 1)
        expected = score.combine_known(tokens, counts, spam_total, ham_total)[:2]
        raised = {token: list(pair) for token, pair in counts.items()}
        assert score.combine_then_count(tokens, raised, column, spam_total, ham_total) == expected
        for token in tokens:
            before = counts.get(token, [0, 0])
            assert raised[token][column] == before[column] + 1 and raised[token][1 - column] == before[1 - column]

_FORKED_POOL = """
import json, sys
from gateway_spam import training

settings = json.loads(sys.argv[1])
training.POOL_FROM, training.POOL_CHUNK, training._workers = 10**9, 4, lambda: 2
alone, alone_counts = training.gather(settings)
made = []
chosen = training._pool_context
training._pool_context = lambda multiprocessing: made.append(chosen(multiprocessing)) or made[-1]
training.POOL_FROM = 1
pooled, pooled_counts = training.gather(settings)
same = [(s.key, s.label, s.when, sorted(s.tokens)) for s in pooled] == \\
    [(s.key, s.label, s.when, sorted(s.tokens)) for s in alone]
print(json.dumps({"methods": [m.get_start_method() for m in made], "same": same, "messages": len(pooled),
                  "counts": pooled_counts == alone_counts}))
"""


def test_a_process_of_one_thread_forks_its_pool_and_reads_what_one_process_reads(tmp_path: Path) -> None:
    """The training command's and a job's process: the pool forked from it (nothing imported again), the same
    samples as read without a pool. (Run in a process of its own: the test runner has threads of its own.)"""
    import json
    import subprocess
    import sys

    root = tmp_path / "Mail"
    sample.write_mailbox(root, messages=30)
    data = tmp_path / "data"
    data.mkdir()
    settings = {"spam_folders": ["Junk"], "ham_folders": ["INBOX", "Archive"], "data": str(data),
                "config": str(tmp_path), "mail_accounts": [{"name": "personal", "maildir": str(root)}]}
    done = subprocess.run([sys.executable, "-c", _FORKED_POOL, json.dumps(settings)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"methods": ["fork"], "same": True, "messages": 30 + 3, "counts": True}


def test_a_process_running_other_threads_takes_its_pool_from_the_fork_server(monkeypatch) -> None:
    import multiprocessing
    import threading

    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert training._pool_context(multiprocessing).get_start_method() == "forkserver"
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    assert training._pool_context(multiprocessing).get_start_method() == "fork"
