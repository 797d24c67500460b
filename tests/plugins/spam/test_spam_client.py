"""The compiled client of the long-lived classifier (`gateway spam client`, `plugins/gateway_spam/client/classify.c`):
the same line, stream and exit code as the Python command for every message and every error, by file and on
standard input; the Python command's own judgement when no classifier answers; a message cut where the Python
command cuts it; and a socket someone else could have put there never asked."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from gateway_spam.client import NAME, build
from gateway_spam.model import Model
from gateway_spam.tokens import stripped, tokens
from spamfilter import MAX_MESSAGE, classify

from tests.plugins.spam.classify_helpers import CUTOFFS, rule_environment, train_sample

DELIVER = str(Path(classify.__file__).with_name("deliver.py"))
PYTHON_COMMAND = [sys.executable, "-I", "-S", DELIVER]
STRICT = ("-Wall", "-Wextra", "-Werror", "-pedantic")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """(the client as `gateway spam client` builds it, every warning an error; one whose Python is gone, so that
    any answer it gives came from the classifier)."""
    folder = tmp_path_factory.mktemp("client")
    client = build(folder / "usual", flags=STRICT)
    # It waits as long as the classifier takes: a message at the bound takes it seconds on a loaded machine.
    stranded = build(folder / "stranded", python=str(folder / "gone" / "python3"), flags=STRICT, timeout=100)
    return str(client), str(stranded)


@pytest.fixture(scope="module")
def hasty(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The client built to wait one second for the classifier's reply (the Python command's wait is longer)."""
    return str(build(tmp_path_factory.mktemp("hasty"), flags=STRICT, timeout=1))


def _serve(home: Path, *extra: str) -> subprocess.Popen:
    served = subprocess.Popen([sys.executable, "-m", "spamfilter.classify", "--serve", *extra],
                              env=rule_environment(home), stderr=subprocess.PIPE, text=True)
    assert "listening on" in served.stderr.readline()
    return served


def _stop(served: subprocess.Popen) -> None:
    served.terminate()
    served.wait(timeout=30)


@pytest.fixture
def trained(gateway_home: Path):
    """A model trained on every third message of the sample mailbox, and a classifier serving it."""
    data, files, model = train_sample(gateway_home)
    served = _serve(gateway_home)
    try:
        yield data, files, model, served
    finally:
        _stop(served)


def _run(command: list[str], home: Path, stdin: bytes | None = None) -> tuple[int, str, str]:
    done = subprocess.run(command, env=rule_environment(home), input=stdin, capture_output=True, timeout=120)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def _expected(model: Model, path: Path) -> str:
    score = model.score(tokens(stripped(path.read_bytes())))
    return f"{score.verdict(*CUTOFFS)} {score.probability:.6f}"


def test_every_verdict_is_the_models_and_the_python_commands(compiled, trained, gateway_home: Path) -> None:
    _client, stranded = compiled
    data, files, model, _served = trained
    verdicts = set()
    for path in files:  # through the classifier: the client that cannot fall back shows it answered
        line = _expected(model, path)
        assert _run([stranded, str(path)], gateway_home) == (classify.EXIT_CODES[line.split()[0]], line + "\n", ""), path
        assert classify.ask(path.read_bytes(), str(data))[1] == line
        verdicts.add(line.split()[0])
    assert {"spam", "ham"} <= verdicts
    for path in files[::8]:  # by name and on standard input, with and without cutoffs: the Python command's answer
        for extra in ([], ["--ham-cutoff", "0.5", "--spam-cutoff", ".6"], ["--spam-cutoff", "1", "--data", str(data)]):
            ours = _run([stranded, *extra, str(path)], gateway_home)
            assert ours == _run([*PYTHON_COMMAND, *extra, str(path)], gateway_home), (path, extra)
            assert ours == _run([stranded, *extra, "-"], gateway_home, path.read_bytes()), (path, extra)


@pytest.mark.parametrize("content", [b"", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
                                     b"Dear diary,\nnothing here is a header.\n"])
def test_what_is_not_mail_is_refused_with_4_as_the_python_command_does(compiled, trained, gateway_home: Path,
                                                                       tmp_path: Path, content: bytes) -> None:
    _client, stranded = compiled
    path = tmp_path / "not-mail"
    path.write_bytes(content)
    ours = _run([stranded, str(path)], gateway_home)
    assert ours[0] == classify.NOT_MAIL == 4 and ours[1] == ""
    assert ours[2].startswith(f"error: {path}: this is not a mail message")
    assert ours == _run([*PYTHON_COMMAND, str(path)], gateway_home) == _run([*PYTHON_COMMAND, "--here", str(path)],
                                                                            gateway_home)
    assert _run([stranded, "-"], gateway_home, content) == _run([*PYTHON_COMMAND, "-"], gateway_home, content)


def test_errors_and_arguments_give_the_python_commands_lines_and_codes(compiled, trained, gateway_home: Path,
                                                                       tmp_path: Path) -> None:
    client, _stranded = compiled
    data, files, _model, _served = trained
    empty = tmp_path / "empty-data"
    empty.mkdir()
    no_model = _serve(gateway_home, "--data", str(empty))  # a classifier with no model to judge by
    try:
        for arguments in (["--data", str(empty), str(files[0])], [str(tmp_path / "missing.eml")], [str(tmp_path)],
                          ["--ham-cutoff", "2", str(files[0])], ["--spam-cutoff", "1e-1", str(files[0])],
                          ["--spam-cutoff", "0.9", "--ham-cutoff"], [], ["--bogus", str(files[0])],
                          [str(files[0]), str(files[1])], ["--help"], ["--command"], ["--here", str(files[0])],
                          [str(tmp_path / "naïve.eml")]):
            ours = _run([client, *arguments], gateway_home)
            assert ours == _run([*PYTHON_COMMAND, *arguments], gateway_home), arguments
            if arguments and arguments[0] == "--data":
                assert ours == (3, "", "error: the filter has no model yet (train it: spam_train, or gateway spam "
                                       "train)\n")
    finally:
        _stop(no_model)


def test_with_no_classifier_the_python_command_judges_and_the_message_is_not_lost(compiled, trained,
                                                                                 gateway_home: Path) -> None:
    client, stranded = compiled
    data, files, model, served = trained
    served.kill()  # killed: its socket stays behind, nobody listening
    served.wait(timeout=30)
    assert (data / classify.SOCKET).exists()
    for state in ("a socket nobody listens on", "no socket"):
        for path in files[1::16]:
            line = _expected(model, path)
            expected = (classify.EXIT_CODES[line.split()[0]], line + "\n", "")
            assert _run([client, str(path)], gateway_home) == expected, state
            assert _run([client, "-"], gateway_home, path.read_bytes()) == expected, state  # handed through a pipe
        (data / classify.SOCKET).unlink(missing_ok=True)
    code, out, err = _run([stranded, str(files[0])], gateway_home)  # nothing to fall back on: said, and 3
    assert (code, out) == (3, "") and "cannot start" in err and "gateway spam client" in err


def test_a_message_past_the_bound_is_cut_where_the_python_command_cuts_it(compiled, trained,
                                                                         gateway_home: Path) -> None:
    _client, stranded = compiled
    head = b"From: someone@example.com\nTo: pat@example.org\nSubject: a long one\n\n"
    raw = head + b"meeting agenda notes\n" * (MAX_MESSAGE // 21) + b"VIAGRA CASINO WINNER\n" * 40_000
    assert len(raw) > MAX_MESSAGE + 500_000
    # Answered by the classifier (this client has nothing else to run), which refuses a request longer than the
    # bound and its first line: so the client cut it, and the answer is the Python command's, which cuts it too.
    ours = _run([stranded, "-"], gateway_home, raw)
    assert ours[0] in (0, 1, 2) and ours[2] == "", ours
    assert ours == _run([*PYTHON_COMMAND, "-"], gateway_home, raw)


def test_gateway_spam_client_builds_into_the_data_folder_or_says_what_to_do(gateway_home: Path) -> None:
    data, files, model = train_sample(gateway_home)
    environment = rule_environment(gateway_home)
    gateway = str(Path(sys.executable).with_name("gateway"))
    done = subprocess.run([gateway, "spam", "client"], env=environment, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    built = Path(done.stdout.strip())
    assert built == data / NAME and stat.S_IMODE(built.stat().st_mode) == 0o700
    line = _expected(model, files[3])
    assert _run([str(built), str(files[3])], gateway_home)[1] == line + "\n"
    before = built.read_bytes()
    for compiler, said in (("/nowhere/cc", "no C compiler found (/nowhere/cc)"), ("false", "could not build")):
        refused = subprocess.run([gateway, "spam", "client"], env={**environment, "CC": compiler},
                                 capture_output=True, text=True, timeout=120)
        assert refused.returncode != 0 and said in refused.stderr and refused.stdout == "", refused
        assert built.read_bytes() == before  # the client in place is untouched
        assert [p.name for p in data.iterdir() if p.name.startswith(f".{NAME}")] == []  # no half-written file


# The attacks: a socket someone else could have put there is never handed a message.

LIAR = textwrap.dedent("""
    import os, socket, sys, time
    path, log, mode = sys.argv[1], sys.argv[2], int(sys.argv[3], 8)
    reply = open(sys.argv[4], "rb").read() if len(sys.argv) > 4 else b"0 0 spam 1.000000\\n"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    os.chdir(os.path.dirname(path))  # bound by its name: the whole path may pass what AF_UNIX takes
    listener.bind(os.path.basename(path))
    os.chmod(path, mode)
    listener.listen(8)
    print("ready", flush=True)
    if reply == b"(silent)":  # connections wait in the backlog, never accepted, never answered
        time.sleep(3600)
    while True:
        connection, _ = listener.accept()
        connection.settimeout(5)
        received = b""
        try:
            while chunk := connection.recv(65536):
                received += chunk
            with open(log, "a") as handle:  # before the reply: the client may be gone just after it
                handle.write(f"{len(received)}\\n")
            connection.sendall(reply)
        except OSError:
            pass
        connection.close()
""")


def _liar(path: Path, log: Path, mode: int, reply: bytes | None = None, **user) -> subprocess.Popen:  # noqa: ANN003
    """A classifier that answers every message 'spam 1.000000' (or `reply`) and logs how many bytes it was
    handed."""
    script = log.with_name("liar.py")
    script.write_text(LIAR)
    os.chmod(script, 0o644)
    if reply is not None:
        log.with_name("liar.reply").write_bytes(reply)
    liar = subprocess.Popen([os.path.realpath(sys.executable), "-I", "-S", str(script), str(path), str(log),
                             f"{mode:o}", *([] if reply is None else [str(log.with_name("liar.reply"))])], stdout=subprocess.PIPE, text=True,
                            **user)
    assert liar.stdout.readline().strip() == "ready"
    return liar


def _judged_here(compiled, data: Path, files: list[Path], model: Model, home: Path) -> None:
    """Both clients give the model's own verdicts (the liar would have said spam 1.000000 for each)."""
    client, _stranded = compiled
    for path in files[:4]:
        line = _expected(model, path)
        expected = (classify.EXIT_CODES[line.split()[0]], line + "\n", "")
        assert _run([client, str(path)], home) == expected
        assert _run([*PYTHON_COMMAND, str(path)], home) == expected
        assert classify.ask(path.read_bytes(), str(data)) is None


def test_a_socket_group_or_others_may_open_or_a_link_is_not_asked(compiled, gateway_home: Path) -> None:
    data, files, model = train_sample(gateway_home)
    log = data / "liar.log"
    for mode, linked in ((0o666, False), (0o660, False), (0o600, True)):
        place = data / "elsewhere.sock" if linked else data / classify.SOCKET
        liar = _liar(place, log, mode)
        try:
            if linked:
                (data / classify.SOCKET).symlink_to(place)
            _judged_here(compiled, data, files, model, gateway_home)
        finally:
            liar.kill()
            liar.wait(timeout=30)
            for stale in (data / classify.SOCKET, place):
                stale.unlink(missing_ok=True)
        assert not log.exists() or log.read_text() == "", (mode, linked, log.read_text())


@pytest.mark.parametrize("reply", [b"", b"spam 1.000000\n", b"7 0 spam 1.000000\n", b"0 2 spam 1.000000\n",
                                   b"0 0 \n", b"0 0 spam\x001.000000\n", b"0 0 spam \xff\xfe\n", b"x" * 70_000])
def test_a_reply_that_is_not_the_classifiers_is_never_printed(compiled, gateway_home: Path, reply: bytes) -> None:
    """The person's own socket, answering what the classifier never answers: both clients judge the message
    themselves (the compiled one by the Python command) rather than print it."""
    data, files, model = train_sample(gateway_home)
    liar = _liar(data / classify.SOCKET, data / "liar.log", 0o600, reply)
    try:
        _judged_here(compiled, data, files, model, gateway_home)
    finally:
        liar.kill()
        liar.wait(timeout=30)
    assert len((data / "liar.log").read_text().split()) == 12  # each client, each message: it was asked


def test_a_classifier_silent_past_the_timeout_leaves_the_message_to_the_python_command(hasty: str,
                                                                                      gateway_home: Path) -> None:
    client = hasty
    data, files, model = train_sample(gateway_home)
    liar = _liar(data / classify.SOCKET, data / "liar.log", 0o600, b"(silent)")
    try:
        line = _expected(model, files[5])
        assert _run([client, "-"], gateway_home, files[5].read_bytes()) == (
            classify.EXIT_CODES[line.split()[0]], line + "\n", "")
    finally:
        liar.kill()
        liar.wait(timeout=30)


@pytest.mark.skipif(os.geteuid() != 0, reason="playing another user needs root (the CI runs as root)")
def test_another_users_socket_or_listener_is_not_handed_the_message(compiled, gateway_home: Path) -> None:
    data, files, model = train_sample(gateway_home)
    shared = Path(tempfile.mkdtemp(prefix="spam-client-other-"))  # a folder the other user can reach and write
    try:
        os.chmod(shared, 0o777)
        log = shared / "liar.log"
        liar = _liar(shared / "planted.sock", log, 0o600, user=65534, group=65534, extra_groups=[])
        try:
            os.rename(shared / "planted.sock", data / classify.SOCKET)  # the other user's socket, 0600, planted
            assert os.lstat(data / classify.SOCKET).st_uid == 65534
            _judged_here(compiled, data, files, model, gateway_home)
            os.chown(data / classify.SOCKET, os.getuid(), os.getgid(), follow_symlinks=False)
            _judged_here(compiled, data, files, model, gateway_home)  # its file looks ours; its listener is not
        finally:
            liar.send_signal(signal.SIGKILL)
            liar.wait(timeout=30)
        handed = [int(n) for n in log.read_text().split()] if log.exists() else []
        assert not any(handed), handed  # connected at most, and handed not one byte
    finally:
        shutil.rmtree(shared, ignore_errors=True)
        (data / classify.SOCKET).unlink(missing_ok=True)


def test_the_client_holds_to_the_classifiers_socket_protocol(trained) -> None:
    """The request the compiled client sends is the one the classifier reads (a reply from a raw socket)."""
    data, files, model, _served = trained
    connection = classify.connect(socket, str(data / classify.SOCKET))
    connection.sendall(b"gateway-spam-classify/1 0.20000000000000001 0.90000000000000002\n" + files[0].read_bytes())
    connection.shutdown(socket.SHUT_WR)
    reply = connection.recv(4096)
    connection.close()
    line = _expected(model, files[0])
    assert reply == f"{classify.EXIT_CODES[line.split()[0]]} 0 {line}\n".encode()
