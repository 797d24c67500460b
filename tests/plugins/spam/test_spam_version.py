"""The model and the tokenizer's version: a model counted with another version (or one that does not record it) is
said stale by `gateway doctor`, spam_status and the classifier's start, still judges mail exactly as before, and is
counted anew by the next training (which a `gateway watch` round starts); a label taken back or changed subtracts
exactly the tokens its message was counted with, and when those are not known (another tokenizer, bytes changed and
no longer kept) the model waits for the next training, which leaves no stale count."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import gateway_mail
import gateway_spam
import pytest
import spamfilter.tokens
from gateway_spam import corpus, evaluation, freshness, kept, sample, tools, training
from gateway_spam.model import Model
from gateway_spam.tokens import stripped, tokens
from spamfilter import classify, daemon, store

from gateway.commands.doctor import run_checks
from gateway.commands.watch import refresh_all
from gateway.testing import folders_of, make_gateway
from tests.plugins.spam.classify_helpers import rule_environment

DELIVER = str(Path(classify.__file__).with_name("deliver.py"))


def _world(home: Path, messages: int = 40):  # noqa: ANN202 (a Gateway, the settings, the mail root)
    root = home / "Mail" / "personal"
    sample.write_mailbox(root, messages=messages)
    gateway = make_gateway([gateway_mail, gateway_spam], home=home, config=sample.config(root),
                           projects=sample.PROJECTS)
    folders = folders_of(home)
    data = folders.data / "plugins" / "spam"
    data.mkdir(parents=True, exist_ok=True)
    settings = {"spam_folders": ["Junk", "Spam"], "ham_folders": ["INBOX", "Archive"], "ham_cutoff": 0.45,
                "spam_cutoff": 0.8, "data": str(data), "config": str(home),
                "cache": str(folders.cache / "plugins" / "spam"),
                "mail_accounts": [{"name": "personal", "maildir": str(root), "addresses": ["pat@example.org"]}]}
    return gateway, settings, root


def _model_file(settings: dict) -> Path:
    return Path(settings["data"]) / store.NAME


def _forge(settings: dict, version: int | None) -> Model:
    """The model file rewritten with the same counts, the same time of training and sources, but recording
    `version` as the tokenizer's (None: none recorded, as a file written before it was)."""
    model = Model.load(_model_file(settings))
    model.tokens_version = version
    store.write(_model_file(settings), model.spam, model.ham, model.counts, model.trained, model.cutoffs,
                model.trained_at, tokens_version=version,
                sources=None if version is None else {k: (v, True) for k, v in model.sources.items()})
    return model


def _every_message_scored(settings: dict) -> Model:
    """The model a training from nothing gives for the corpus and labels as they are now (nothing written)."""
    samples, _counts = training.gather(settings)
    model = Model()
    evaluation.online(samples, model=model)
    return model


def _said(gateway) -> list[str]:  # noqa: ANN001
    lines: list[str] = []
    run_checks(gateway, lines.append)
    return [line for line in lines if "spam filter's model" in line]


def _follow(gateway, job_id: str) -> dict:  # noqa: ANN001
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        answer = gateway.call("spam_job", {"id": job_id})
        assert not answer.is_error, answer.text
        if answer.data["state"] != "running":
            return dict(answer.data)
        time.sleep(0.2)
    raise AssertionError("the job did not end within 120 seconds")


@pytest.mark.parametrize("version", [1, None])
def test_a_model_of_another_tokenizer_is_said_stale_and_counted_anew_by_the_next_training(
        gateway_home: Path, version: int | None) -> None:
    gateway, settings, _root = _world(gateway_home)
    training.train(settings)
    assert not Model.load(_model_file(settings)).stale
    assert _said(gateway) and all(line.startswith("ok ") for line in _said(gateway))
    assert "stale" not in gateway.call("spam_status").text
    forged = _forge(settings, version)

    warned = [line for line in _said(gateway) if line.startswith("WARNING  spam: spam filter's model at ")]
    assert len(warned) == 1, _said(gateway)
    counted = "with version 1 of the tokenizer" if version == 1 else "before the tokenizer's version was recorded"
    assert f"stale: counted {counted}, while mail is read by version {spamfilter.tokens.VERSION}" in warned[0]
    status = gateway.call("spam_status")
    assert not status.is_error
    assert status.data["model"]["stale"] is True and status.data["model"]["tokens_version"] == version
    assert "The model is stale: it was counted " + counted in status.text
    review = gateway.call("spam_review", {"limit": 5})
    assert review.data["model_stale"] is True and "The model is stale" in review.text

    # The stream the training kept and the model's time of training still match: only the version tells the
    # model apart, and the training counts it anew rather than leaving it as it is.
    result = training.train(settings)
    assert result["written"] == ["model.sqlite", "evaluation.json"]
    assert result["recounted_from_version"] == version and result["tokens_version"] == spamfilter.tokens.VERSION
    written = Model.load(_model_file(settings))
    assert written.tokens_version == spamfilter.tokens.VERSION and not written.stale
    assert (written.spam, written.ham, written.counts, written.trained) == (forged.spam, forged.ham, forged.counts,
                                                                            forged.trained)
    assert set(written.sources) == set(written.trained)
    assert all(line.startswith("ok ") for line in _said(gateway))
    assert gateway.call("spam_status").data["model"]["stale"] is False


def test_a_watch_round_starts_a_training_of_a_stale_model_once(gateway_home: Path) -> None:
    gateway, settings, _root = _world(gateway_home)
    training.train(settings)
    _forge(settings, 1)
    said: list[str] = []
    refresh_all(gateway, said.append)
    started = gateway.call("spam_job")
    assert started.data["found"] and started.data["kind"] == "train", started.text
    assert started.data["arguments"] == {"dry_run": False, "why": "stale model"}
    job = _follow(gateway, started.data["id"])
    assert job["state"] == "done" and job["result"]["recounted_from_version"] == 1, job
    assert not Model.load(_model_file(settings)).stale
    refresh_all(gateway, said.append)  # a model of today's version: no other job
    assert gateway.call("spam_job").data["id"] == started.data["id"]
    freshness._looked.clear()
    refresh_all(gateway, said.append)
    assert gateway.call("spam_job").data["id"] == started.data["id"]


def test_a_stale_model_with_an_empty_corpus_is_left_for_the_person(gateway_home: Path) -> None:
    gateway, settings, root = _world(gateway_home, messages=8)
    training.train(settings)
    _forge(settings, 1)
    for folder in ("INBOX", "Archive", "Junk", "Notes"):
        for path in (root / folder / "cur").iterdir():
            path.unlink()
    refresh_all(gateway, [].append)
    assert not gateway.call("spam_job").data["found"]  # training nothing would throw the counts away
    assert Model.load(_model_file(settings)).tokens_version == 1


def _ham(root: Path, number: int) -> tuple[Path, str]:
    """A ham message of the sample mailbox (trained as ham): its file and its key."""
    path = next(p for folder in ("INBOX", "Archive") for p in (root / folder / "cur").iterdir()
                if f"ham{number}@example.org" in p.read_text())
    return path, corpus.key_of(path.read_bytes())


def _label(gateway, key: str, label: str) -> dict:  # noqa: ANN001
    answer = gateway.call("spam_label", {"address": key, "label": label})
    assert not answer.is_error, answer.text
    return dict(answer.data) | {"text": answer.text}


def test_a_label_changed_back_and_forth_leaves_the_counts_of_one_label(gateway_home: Path) -> None:
    gateway, settings, root = _world(gateway_home)
    training.train(settings)
    path, key = _ham(root, 6)
    # Its file changed since it was trained (a line added): the model counted the old bytes' tokens, which the
    # facts store still keeps; the label takes those back, not the tokens of the bytes at hand.
    path.write_bytes(path.read_bytes() + b"\nA postscript about the harvest ledger, added later.\n")
    assert Model.load(_model_file(settings)).counted_tokens(key, tokens(stripped(path.read_bytes()))) is None
    for label, before in (("spam", ""), ("ham", "spam"), ("spam", "ham")):  # `before`: the label given before
        answer = _label(gateway, key, label)
        assert answer["learned"] is True and answer["waits_for_training"] is False, answer["text"]
        assert answer["before"] == before
        assert gateway.call("spam_status").data["model"]["labels_waiting"] == 0
    labelled = Model.load(_model_file(settings))
    expected = _every_message_scored(settings)  # the message's bytes as they are now, labelled spam
    assert (labelled.spam, labelled.ham, labelled.trained) == (expected.spam, expected.ham, expected.trained)
    assert labelled.counts == expected.counts
    assert labelled.sources[key] == kept.identity_of(tokens(stripped(path.read_bytes()))).hex()


def test_a_label_whose_counted_tokens_are_no_longer_known_waits_for_the_training(gateway_home: Path) -> None:
    gateway, settings, root = _world(gateway_home)
    training.train(settings)
    path, key = _ham(root, 8)
    path.write_bytes(path.read_bytes() + b"\nA postscript about the harvest ledger, added later.\n")
    training.keep(settings)  # gateway watch read the file again: its old tokens are kept no more
    before = _model_file(settings).read_bytes()
    answer = _label(gateway, key, "spam")
    assert answer["learned"] is False and answer["waits_for_training"] is True
    assert "the tokens it counted for this message's earlier label are no longer known" in answer["text"]
    assert _model_file(settings).read_bytes() == before  # no guess subtracted
    status = gateway.call("spam_status")
    assert status.data["model"]["labels_waiting"] == 1
    assert "1 label given since the model was written is not in it yet" in status.text
    training.train(settings)
    assert gateway.call("spam_status").data["model"]["labels_waiting"] == 0
    expected = _every_message_scored(settings)
    written = Model.load(_model_file(settings))
    assert (written.spam, written.ham, written.counts) == (expected.spam, expected.ham, expected.counts)
    assert written.trained[key] == "spam"


def test_a_label_changed_after_a_tokenizer_change_leaves_no_stale_counts(gateway_home: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    gateway, settings, root = _world(gateway_home)
    training.train(settings)
    path, key = _ham(root, 10)
    # A new tokenizer: another version, which reads one token more of every message.
    new_version = spamfilter.tokens.VERSION + 1
    monkeypatch.setattr(spamfilter.tokens, "VERSION", new_version)
    monkeypatch.setattr(kept, "STAMP", f"{kept.STAMP} then {new_version}")
    real_of, real = training.tokens_of, tools.tokens
    monkeypatch.setattr(training, "tokens_of", lambda message: real_of(message) | {"tokenizer:new"})
    monkeypatch.setattr(tools, "tokens", lambda raw: real(raw) | {"tokenizer:new"})
    before = _model_file(settings).read_bytes()
    assert Model.load(_model_file(settings)).stale
    answer = _label(gateway, key, "spam")
    assert answer["learned"] is False and answer["waits_for_training"] is True
    assert "counted with an earlier version of the tokenizer" in answer["text"]
    assert _model_file(settings).read_bytes() == before
    assert gateway.call("spam_status").data["model"]["labels_waiting"] == 1
    result = training.train(settings)
    assert result["recounted_from_version"] == new_version - 1
    written = Model.load(_model_file(settings))
    expected = _every_message_scored(settings)
    assert written.tokens_version == new_version
    assert (written.spam, written.ham, written.counts, written.trained) == (expected.spam, expected.ham,
                                                                            expected.counts, expected.trained)
    assert written.counts["tokenizer:new"] == [written.spam, written.ham]  # every message counted anew
    assert written.trained[key] == "spam"
    # Now of today's version: the label taken back again is exact.
    again = _label(gateway, key, "ham")
    assert again["learned"] is True
    assert Model.load(_model_file(settings)).counts == _every_message_scored(settings).counts


def test_delivery_judges_alike_with_a_stale_model(gateway_home: Path) -> None:
    _gateway, settings, root = _world(gateway_home)
    training.train(settings)
    data = settings["data"]
    files = sorted(p for folder in ("INBOX", "Junk", "Notes") for p in (root / folder / "cur").iterdir())
    current = {path: classify.judge(path.read_bytes(), data) for path in files}
    model = _forge(settings, 1)
    verdicts = set()
    for path in files:
        raw = path.read_bytes()
        here = classify.judge(raw, data)
        served = daemon.answer(classify.PROTOCOL + b" - -\n" + raw, data)
        score = model.score(tokens(stripped(raw)))
        line = f"{score.verdict(*model.cutoffs)} {score.probability:.6f}"
        assert here == current[path] and here[1] == line, path
        assert served == f"{here[0]} 0 {line}\n".encode()
        verdicts.add(line.split()[0])
    assert {"spam", "ham"} <= verdicts
    env = rule_environment(gateway_home)
    done = subprocess.run([sys.executable, "-I", "-S", DELIVER, "--here", str(files[0])], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.stdout == current[files[0]][1] + "\n" and done.stderr == ""  # the rule's line and nothing more
    served = subprocess.Popen([sys.executable, "-m", "spamfilter.classify", "--serve"], env=env,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert "listening on" in served.stderr.readline()
        note = served.stderr.readline()
        assert note.startswith("note: the model was counted with version 1 of the tokenizer"), note
        asked = classify.ask(files[0].read_bytes(), data)
        assert asked == current[files[0]]
    finally:
        served.terminate()
        served.wait(timeout=30)


def test_a_label_tried_for_its_effect_is_put_back_exactly() -> None:
    # What an agent's spam label is tried as (its effect on a correspondent's mail), then undone: the counts, totals
    # and records as they were, even where the trial subtracted tokens the model never counted (clamped at zero).
    model = Model()
    model.relearn({"garden", "ladder", "shared"}, "ham", "mid:a@example.org")
    model.relearn({"casino", "shared"}, "spam", "mid:b@example.org")
    before = (model.spam, model.ham, {k: list(v) for k, v in model.counts.items()}, dict(model.trained),
              dict(model.sources))
    now = {"garden", "orchard", "casino"}  # the message read now: other tokens than those counted
    restore = model.snapshot(now)
    assert model.relearn(now, "spam", "mid:a@example.org")  # takes back `now` where `counted` is unknown
    assert model.counts != before[2]
    restore()
    assert (model.spam, model.ham, model.counts, model.trained, model.sources) == before
