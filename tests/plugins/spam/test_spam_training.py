"""Training reuses what it can of the last training and still gives, to the last digit, what scoring every message
gives: each message's score and strength, the figures and the model's counts are those of the training before the
change (a fixed corpus, `training_corpus`, and its recorded answer, `training_reference.json`), after nothing
changed, after new mail, mail dated among the old, a label changed, a message gone and a label given by
spam_label; a message no parser may read is counted unreadable and left out each time."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from gateway_spam import corpus, evaluation, kept, labels, sample, training
from gateway_spam.model import Model
from spamfilter.score import STAMP

from gateway.testing import folders_of
from tests.plugins.spam import training_corpus

REFERENCE = json.loads((Path(__file__).with_name("training_reference.json")).read_text(encoding="utf-8"))


def _settings(home: Path, root: Path) -> dict:
    folders = folders_of(home)
    data = folders.data / "plugins" / "spam"
    data.mkdir(parents=True, exist_ok=True)
    return {"spam_folders": ["Junk"], "ham_folders": ["INBOX"], "ham_cutoff": 0.45, "spam_cutoff": 0.8,
            "data": str(data), "config": str(home), "cache": str(folders.cache / "plugins" / "spam"),
            "mail_accounts": [{"name": "personal", "maildir": str(root)}]}


def _kept_outcomes(settings: dict) -> list[list]:
    store = kept.Kept(settings["cache"])
    try:
        return [[key, label, probability, strength] for key, label, _tokens, probability, strength
                in store.stream(STAMP)]
    finally:
        store.close()


def _model(settings: dict) -> Model:
    return Model.load(Path(settings["data"]) / "model.sqlite")


def _digest(model: Model) -> str:
    return hashlib.sha256(json.dumps(sorted(model.counts.items())).encode()).hexdigest()


def _every_message_scored(settings: dict) -> tuple[list[list], dict, Model]:
    """What scoring every message one by one gives for the corpus as it is now (nothing reused)."""
    samples, _counts = training.gather(settings)
    model = Model()
    outcomes = evaluation.online(samples, model=model)
    return ([[o.sample.key, o.sample.label, o.probability, o.strength] for o in outcomes],
            evaluation.figures(outcomes, settings["ham_cutoff"], settings["spam_cutoff"]), model)


@pytest.fixture
def scored(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many messages the online evaluation scored one by one (those it could not take from the last)."""
    calls = [0]
    real = Model.score_then_learn

    def counted(self: Model, *args: object, **kwargs: object) -> tuple[float, float]:
        calls[0] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Model, "score_then_learn", counted)
    return calls


def test_training_gives_the_scores_and_model_it_gave_before_and_skips_a_broken_file(gateway_home: Path,
                                                                                    scored: list[int]) -> None:
    root = gateway_home / "Mail" / "personal"
    special = training_corpus.write(root)
    settings = _settings(gateway_home, root)
    first = training.train(settings)
    assert first["corpus"] == REFERENCE["corpus"]
    assert first["corpus"]["unreadable"] == 1 and first["corpus"]["duplicates"] == 1  # counted, not trained
    assert first["online"] == REFERENCE["online"]
    assert _kept_outcomes(settings) == REFERENCE["outcomes"]  # every score and strength, in order, to the last digit
    model = _model(settings)
    assert (model.spam, model.ham, len(model.counts), _digest(model)) == (
        REFERENCE["spam"], REFERENCE["ham"], REFERENCE["tokens"], REFERENCE["counts"])
    assert scored[0] == REFERENCE["corpus"]["messages"]
    assert all(not key.startswith("sha:") for key in model.trained)  # the broken file (no Message-ID) is not in it
    verdicts = {o[0]: o for o in REFERENCE["outcomes"]}
    assert any(0.45 <= o[2] <= 0.8 for o in verdicts.values())  # the corpus has unsure messages: not a trivial one

    # Again with nothing changed: no message read or scored, the model file left as it is, the same answer.
    model_file = Path(settings["data"]) / "model.sqlite"
    before = os.stat(model_file)
    again = training.train(settings)
    assert scored[0] == REFERENCE["corpus"]["messages"]  # none scored again
    assert again["online"] == first["online"] and again["corpus"] == first["corpus"]
    assert again["written"] == ["evaluation.json"]
    assert (os.stat(model_file).st_mtime_ns, os.stat(model_file).st_ino) == (before.st_mtime_ns, before.st_ino)
    assert _kept_outcomes(settings) == REFERENCE["outcomes"]
    assert special["broken"].exists()


def test_a_dry_run_reuses_the_last_evaluation_and_writes_nothing(gateway_home: Path, scored: list[int]) -> None:
    root = gateway_home / "Mail" / "personal"
    training_corpus.write(root, messages=120)
    settings = _settings(gateway_home, root)
    first = training.train(settings)
    model_file = Path(settings["data"]) / "model.sqlite"
    before = os.stat(model_file).st_mtime_ns
    sample.deliver(root / "Junk", sample.message("Prize <win@example.net>", "You won a prize", "Claim it now",
                                                 training_corpus.START + 10**7, "late@example.net"),
                   training_corpus.START + 10**7)
    calls = scored[0]
    dry = training.train(settings, dry_run=True)
    assert scored[0] == calls + 1 and dry["written"] == [] and dry["online"]["messages"] == first["online"][
        "messages"] + 1
    assert os.stat(model_file).st_mtime_ns == before


def _change(kind: str, root: Path, settings: dict) -> None:
    """One change to the corpus after a training, as mail and a person make them."""
    later = training_corpus.START + 10**7
    inbox = sorted((root / "INBOX" / "cur").iterdir())
    if kind == "new mail, later":
        for number in range(3):
            sample.deliver(root / ("Junk" if number % 2 else "INBOX"), sample.message(
                "Ada Example <ada@example.org>", f"minutes of the choir {number}", f"garden ladder harvest plan {number} words",
                later + number, f"late{number}@example.org"), later + number)
    elif kind == "mail dated among the old":
        middle = training_corpus.START + 40 * 3600
        sample.deliver(root / "INBOX", sample.message("Ben Example <ben@example.net>", "an old reply arrives late",
                                                      "library lecture draft words", middle, "old@example.net"),
                       middle)
    elif kind == "a label changed":
        path = inbox[len(inbox) // 3]
        key = corpus.key_of(path.read_bytes())
        labels.write_label(Path(settings["data"]), key, "spam", str(path))
    elif kind == "a message gone":
        inbox[len(inbox) // 2].unlink()
    elif kind == "a flag changed":  # the file renamed (read, replied): the same message
        path = inbox[len(inbox) // 4]
        path.rename(path.with_name(path.name.replace(":2,S", ":2,RS")))
    else:
        raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["new mail, later", "mail dated among the old", "a label changed",
                                  "a message gone", "a flag changed"])
def test_training_after_a_change_gives_what_scoring_every_message_gives(gateway_home: Path, scored: list[int],
                                                                        kind: str) -> None:
    root = gateway_home / "Mail" / "personal"
    training_corpus.write(root, messages=160)
    settings = _settings(gateway_home, root)
    training.train(settings)
    _change(kind, root, settings)
    calls = scored[0]
    result = training.train(settings)
    rescored = scored[0] - calls
    expected, figures, model = _every_message_scored(settings)
    assert _kept_outcomes(settings) == expected
    assert result["online"] == figures
    written = _model(settings)
    assert (written.spam, written.ham, written.counts, written.trained) == (model.spam, model.ham, model.counts,
                                                                            model.trained)
    if kind == "new mail, later":
        assert rescored == 3  # the new messages alone were scored
    elif kind == "a flag changed":
        assert rescored == 0  # the same messages: nothing scored again
    else:
        assert 0 < rescored < len(expected)  # from the change on, not from the start


def test_a_label_given_by_spam_label_after_training_is_not_taken_for_the_trained_model(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    training_corpus.write(root, messages=120)
    settings = _settings(gateway_home, root)
    training.train(settings)
    # What spam_label does: the label written, the model file taught it and written again.
    path = sorted((root / "INBOX" / "cur").iterdir())[5]
    raw = path.read_bytes()
    key = corpus.key_of(raw)
    labels.write_label(Path(settings["data"]), key, "spam", str(path))
    model = _model(settings)
    assert model.relearn(training.tokens_of(training.parse(training.stripped(raw))), "spam", key)
    model.save(Path(settings["data"]) / "model.sqlite")
    sample.deliver(root / "Junk", sample.message("Prize <win@example.net>", "You won", "Claim your prize now",
                                                 training_corpus.START + 10**7, "won@example.net"),
                   training_corpus.START + 10**7)
    result = training.train(settings)
    expected, figures, every = _every_message_scored(settings)
    assert _kept_outcomes(settings) == expected and result["online"] == figures
    written = _model(settings)
    assert (written.spam, written.ham, written.counts) == (every.spam, every.ham, every.counts)


def test_cutoffs_changed_write_the_model_again(gateway_home: Path, scored: list[int]) -> None:
    root = gateway_home / "Mail" / "personal"
    training_corpus.write(root, messages=60)
    settings = _settings(gateway_home, root)
    training.train(settings)
    calls = scored[0]
    result = training.train({**settings, "ham_cutoff": 0.3})
    assert scored[0] == calls and result["written"] == ["model.sqlite", "evaluation.json"]
    assert _model(settings).cutoffs == (0.3, 0.8)
