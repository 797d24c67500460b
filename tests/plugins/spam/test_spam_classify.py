"""The lean classifier a delivery rule runs (`python -m spamfilter.classify`): the same verdicts as the plugin's
model, from a model file it looks tokens up in; what it imports; what it says of a file that is not mail."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from gateway_spam import sample
from gateway_spam.model import Model
from gateway_spam.tokens import stripped, tokens
from spamfilter import classify, store

from tests.forkserver import gateway_command
from tests.plugins.spam.classify_helpers import CUTOFFS, rule_environment, train_sample

_env = rule_environment


@pytest.fixture
def trained(gateway_home: Path) -> tuple[Path, list[Path], Model]:
    """A model trained on every third message of the sample mailbox, saved where the plugin keeps it."""
    data, files, _model = train_sample(gateway_home)
    return data, files, Model.load(data / store.NAME)


def test_looked_up_scores_are_the_loaded_models_exactly(trained) -> None:
    data, files, model = trained
    assert str(data) == classify.data_folder()  # where the gateway keeps it, found without the gateway
    verdicts = set()
    for path in files:
        expected = model.score(tokens(stripped(path.read_bytes())))
        code, line = classify.run(str(path), data)
        verdict = expected.verdict(*CUTOFFS)
        assert line == f"{verdict} {expected.probability:.6f}" and code == classify.EXIT_CODES[verdict], path
        table = store.Table(data / store.NAME)
        found = tokens(stripped(path.read_bytes()))
        from spamfilter.score import combine

        assert combine(table.counts(found), table.spam, table.ham)[:2] == (expected.probability, expected.strength)
        table.close()
        verdicts.add(verdict)
    assert {"spam", "ham"} <= verdicts


def test_the_command_imports_nothing_of_the_gateway_and_agrees_with_gateway_spam_classify(trained,
                                                                                         gateway_home: Path) -> None:
    data, files, model = trained
    message = files[1]
    probe = ("import sys; from spamfilter.classify import main; code = main([sys.argv[1]]); "
             "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'gateway', 'gateway_spam', 'mcp', 'click', "
             "'pluggy', 'pydantic', 'attrs', 'structlog', 'anyio', 'lxml'}); print(heavy, code)")
    lean = subprocess.run([sys.executable, "-c", probe, str(message)], env=_env(gateway_home),
                          capture_output=True, text=True, timeout=60)
    assert lean.stdout.splitlines()[-1].startswith("[] "), lean.stdout + lean.stderr
    served = subprocess.run(gateway_command("spam", "classify", str(message)),
                            env=_env(gateway_home), capture_output=True, text=True, timeout=120)
    module = subprocess.run([sys.executable, "-m", "spamfilter.classify", str(message)], env=_env(gateway_home),
                            capture_output=True, text=True, timeout=60)
    assert served.stdout == module.stdout == lean.stdout.splitlines()[0] + "\n"
    assert served.returncode == module.returncode == int(lean.stdout.split()[-1])


@pytest.mark.parametrize("content", [b"", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
                                     b"Dear diary,\nnothing here is a header.\n",
                                     b"name: pat\ncolour: green\n\nno mail header above\n"])
def test_what_is_not_mail_is_refused_with_its_own_code(trained, gateway_home: Path, tmp_path: Path,
                                                       content: bytes) -> None:
    path = tmp_path / "not-mail"
    path.write_bytes(content)
    for command in ([sys.executable, "-m", "spamfilter.classify", str(path)],
                    gateway_command("spam", "classify", str(path))):
        done = subprocess.run(command, env=_env(gateway_home), capture_output=True, text=True, timeout=120)
        assert done.returncode == classify.NOT_MAIL == 4 and done.stdout == "", (command, done)
        assert "not a mail message" in done.stderr


def test_no_model_and_no_file_are_errors_that_say_what_to_do(gateway_home: Path, tmp_path: Path) -> None:
    raw = sample.message("Ada <ada@example.org>", "Hello", "Hello there.", 1.0, "m1@example.org")
    path = tmp_path / "message.eml"
    path.write_bytes(raw)
    code, line = classify.run(str(path), tmp_path / "empty")
    assert code == classify.ERROR and "no model yet" in line and "gateway spam train" in line
    code, line = classify.run(str(tmp_path / "missing.eml"), tmp_path)
    assert code == classify.ERROR and "missing.eml" in line
    (tmp_path / store.NAME).write_bytes(b"not a database at all, but long enough to be looked at" * 100)
    code, line = classify.run(str(path), tmp_path)
    assert code == classify.ERROR and "cannot be read" in line


def test_cutoffs_come_from_the_model_unless_given(trained) -> None:
    data, files, model = trained
    path = next(p for p in files if model.score(tokens(stripped(p.read_bytes()))).probability > 0.9)
    assert classify.run(str(path), data)[0] == classify.SPAM
    assert classify.main(["--data", str(data), "--spam-cutoff", "1", str(path)]) == classify.UNSURE
    assert classify.main(["--data", str(data), "--ham-cutoff", "2", str(path)]) == classify.ERROR


def test_training_in_a_terminal_shows_its_progress_and_writes_a_model_the_command_reads(gateway_home: Path) -> None:
    import pty

    from gateway.testing import write_config

    root = gateway_home / "Mail"
    written = sample.write_mailbox(root, messages=40)
    write_config(gateway_home, sample.config(root))
    controller, terminal = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "gateway", "spam", "train"], env=_env(gateway_home),
                              stdout=subprocess.PIPE, stderr=terminal, text=True, timeout=300)
        os.close(terminal)
        shown = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal's other end is closed: all was read
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(controller)
    assert done.returncode == 0, done.stdout
    assert b"reading the corpus: 43 of 43" in shown and b"evaluating online and training:" in shown, shown
    assert "written: model.sqlite, evaluation.json" in done.stdout
    data = classify.data_folder()
    assert os.path.isfile(os.path.join(data, store.NAME))
    code, line = classify.run(str(written["mixed"]))  # the model where the command looks for it, by default
    assert code in (classify.SPAM, classify.HAM, classify.UNSURE) and line.split()[0] in classify.EXIT_CODES


def test_a_model_of_the_earlier_format_is_converted_once(tmp_path: Path) -> None:
    import gzip
    import json

    from gateway_spam import training

    legacy = {"format": 1, "spam": 4, "ham": 5, "trained_at": 1.0, "counts": {"lottery": [4, 0], "garden": [0, 5]},
              "trained": {"mid:a@example.org": "spam"}}
    (tmp_path / "model.json.gz").write_bytes(gzip.compress(json.dumps(legacy).encode()))
    path = training.model_path(tmp_path)
    assert path.name == store.NAME and path.is_file() and not (tmp_path / "model.json.gz").exists()
    model = Model.load(path)
    assert (model.spam, model.ham, model.counts, model.trained) == (4, 5, legacy["counts"], legacy["trained"])
    table = store.Table(path)
    assert sorted(table.counts(["garden", "lottery", "unknown"])) == [("garden", 0, 5), ("lottery", 4, 0)]
    table.close()
