"""The long-lived classifier (`gateway-spam-classify --serve`) and the command's quickest start (`python -I -S
deliver.py`): the same verdicts as the plugin's model, message by message; what is not mail still refused with 4;
a broken message or a stranger on the socket never ends it; a model trained meanwhile used at once."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from gateway_spam.model import Model
from gateway_spam.tokens import stripped, tokens
from spamfilter import classify, daemon, store

from tests.plugins.spam.classify_helpers import CUTOFFS, rule_environment, train_sample

DELIVER = str(Path(classify.__file__).with_name("deliver.py"))


_env = rule_environment


@pytest.fixture
def trained(gateway_home: Path):
    """A model trained on every third message of the sample mailbox, and a classifier serving it."""
    data, files, model = train_sample(gateway_home)
    served = subprocess.Popen([sys.executable, "-m", "spamfilter.classify", "--serve"], env=_env(gateway_home),
                              stderr=subprocess.PIPE, text=True)
    try:
        assert "listening on" in served.stderr.readline()
        yield data, files, model, served
    finally:
        served.terminate()
        served.wait(timeout=30)


def _expected(model: Model, path: Path) -> str:
    score = model.score(tokens(stripped(path.read_bytes())))
    return f"{score.verdict(*CUTOFFS)} {score.probability:.6f}"


def test_every_verdict_the_classifier_gives_is_the_models_and_the_commands(trained, gateway_home: Path) -> None:
    data, files, model, _served = trained
    verdicts = set()
    for path in files:
        raw = path.read_bytes()
        asked = classify.ask(raw, str(data))
        assert asked is not None, "the classifier did not answer"
        here = classify.judge(raw, str(data))
        line = _expected(model, path)
        assert asked == here and asked[1] == line and asked[0] == classify.EXIT_CODES[line.split()[0]], path
        verdicts.add(line.split()[0])
    assert {"spam", "ham"} <= verdicts
    for path in files[1::12]:  # the processes a delivery rule starts: through the classifier, then on their own
        for extra in ([], ["--here"]):
            done = subprocess.run([sys.executable, "-I", "-S", DELIVER, *extra, str(path)], env=_env(gateway_home),
                                  capture_output=True, text=True, timeout=120)
            line = _expected(model, path)
            assert done.stdout == line + "\n" and done.returncode == classify.EXIT_CODES[line.split()[0]], done


def test_the_quickest_start_imports_no_email_package_when_the_classifier_answers(trained,
                                                                                gateway_home: Path) -> None:
    data, files, model, _served = trained
    # The child finds the package by its file (a -I -S interpreter reads no PYTHONPATH and no site folder).
    probe = ("import sys, importlib.util; package = sys.argv[2] + '/spamfilter'; "
             "spec = importlib.util.spec_from_file_location('spamfilter', package + '/__init__.py', "
             "submodule_search_locations=[package]); "
             "sys.modules['spamfilter'] = importlib.util.module_from_spec(spec); "
             "spec.loader.exec_module(sys.modules['spamfilter']); from spamfilter.classify import main; "
             "code = main([sys.argv[1]]); "
             "print(sorted({m.split('.')[0] for m in sys.modules} & {'email', 'sqlite3', 'socket', 'gateway', "
             "'gateway_spam', 'mcp', 'click', 'pydantic', 'html'}), code)")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(files[2]), str(Path(DELIVER).parent.parent)],
                          env=_env(gateway_home), capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines()[0] == _expected(model, files[2]), done
    assert done.stdout.splitlines()[-1].startswith("[] "), done
    command = subprocess.run([sys.executable, "-m", "spamfilter.classify", "--command"], capture_output=True,
                             text=True, timeout=60)
    assert command.stdout.split() == [sys.executable, "-I", "-S", DELIVER]


@pytest.mark.parametrize("content", [b"", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
                                     b"Dear diary,\nnothing here is a header.\n"])
def test_what_is_not_mail_is_refused_with_4_through_the_classifier_and_without(trained, gateway_home: Path,
                                                                                 tmp_path: Path,
                                                                                 content: bytes) -> None:
    path = tmp_path / "not-mail"
    path.write_bytes(content)
    for extra in ([], ["--here"]):
        done = subprocess.run([sys.executable, "-I", "-S", DELIVER, *extra, str(path)], env=_env(gateway_home),
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == classify.NOT_MAIL == 4 and done.stdout == "", (extra, done)
        assert f"error: {path}: this is not a mail message" in done.stderr


def test_a_broken_message_or_a_stranger_protocol_never_ends_the_classifier(trained, tmp_path: Path) -> None:
    data, files, model, served = trained
    nested = b"".join(b'Content-Type: multipart/mixed; boundary="b%d"\n\n--b%d\n' % (i, i) for i in range(80))
    bomb = b"From: x@example.com\nSubject: deep\nMIME-Version: 1.0\n" + nested
    asked = classify.ask(bomb, str(data))
    assert asked is not None and asked[0] == classify.ERROR and "cannot be read" in asked[1]
    for request in (b"", b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", b"gateway-spam-classify/1 7 x\nFrom: a"):
        connection = classify.connect(socket, str(data / classify.SOCKET))  # the path may pass 107 bytes
        connection.sendall(request)
        connection.shutdown(socket.SHUT_WR)
        reply = connection.recv(4096)
        connection.close()
        assert reply.startswith(b"3 0 the classifier was sent something other than a message"), reply
    assert served.poll() is None
    assert classify.ask(files[0].read_bytes(), str(data))[1] == _expected(model, files[0])


def test_the_socket_is_the_persons_alone_and_one_classifier_listens(trained, gateway_home: Path) -> None:
    data, _files, _model, served = trained
    assert stat.S_IMODE(os.stat(data / classify.SOCKET).st_mode) == 0o600
    second = subprocess.run([sys.executable, "-m", "spamfilter.classify", "--serve"], env=_env(gateway_home),
                            capture_output=True, text=True, timeout=60)
    assert second.returncode == classify.ERROR and "already listens" in second.stderr
    served.send_signal(signal.SIGTERM)
    assert served.wait(timeout=30) == 0
    assert not (data / classify.SOCKET).exists()


def test_a_socket_nobody_listens_on_is_judged_here_and_a_new_model_is_used_at_once(trained,
                                                                                  gateway_home: Path) -> None:
    data, files, model, served = trained
    message = next(p for p in files if _expected(model, p).startswith("spam"))
    relabelled = Model.load(data / store.NAME)
    for _ in range(40):  # the message taught as ham, over and over: its score falls
        relabelled.learn(tokens(stripped(message.read_bytes())), "ham")
    relabelled.save(data / store.NAME)
    asked = classify.ask(message.read_bytes(), str(data))
    assert asked is not None and asked[1] != _expected(model, message)
    assert asked == classify.judge(message.read_bytes(), str(data))
    served.kill()  # killed: its socket stays behind, and nobody listens on it
    served.wait(timeout=30)
    assert (data / classify.SOCKET).exists()
    assert classify.ask(message.read_bytes(), str(data)) is None
    done = subprocess.run([sys.executable, "-I", "-S", DELIVER, str(message)], env=_env(gateway_home),
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == asked[1]
    restarted = subprocess.Popen([sys.executable, "-m", "spamfilter.classify", "--serve"], env=_env(gateway_home),
                                 stderr=subprocess.PIPE, text=True)
    try:
        assert "listening on" in restarted.stderr.readline()  # the stale socket replaced
        assert classify.ask(message.read_bytes(), str(data)) == asked[:3]
    finally:
        restarted.terminate()
        restarted.wait(timeout=30)


def test_a_reply_is_one_line_the_command_parses(tmp_path: Path) -> None:
    assert daemon.answer(b"gateway-spam-classify/1 - -\nnot mail at all", str(tmp_path)).startswith(b"4 1 ")
    assert daemon.answer(b"gateway-spam-classify/1 - -\nFrom: a@example.com\n\nhi", str(tmp_path)) == (
        b"3 0 the filter has no model yet (train it: spam_train, or gateway spam train)\n")
    assert daemon.answer(b"gateway-spam-classify/1 2 -\nFrom: a@example.com\n\nhi", str(tmp_path)).startswith(
        b"3 0 the classifier was sent")
