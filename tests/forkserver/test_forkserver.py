"""The suite's fork server stands for `python -m gateway`: a process it forks has the launcher's descriptors,
arguments, environment and working directory (and none of the fork server's), its exit code or signal reaches the
test through the launcher, a crash leaves the fork server serving, and a launcher with no fork server (or one
that declines) still runs a real `gateway`."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from gateway.testing import home_environment, installed_plugin, serve_client, write_config
from tests import forkserver

# A plugin whose import, inside the served process, writes down what that process is and holds (then aborts
# when asked to): imported at start-up, as every plugin the config turns on.
PROBE = '''
import codecs, json, locale, os, re, signal, sys

def _target(descriptor):
    try:
        return os.readlink(f"/proc/self/fd/{descriptor}")
    except OSError:
        return None

_report = {
    "env": dict(os.environ),
    "cwd": os.getcwd(),
    "argv": sys.argv,
    "orig_argv": sys.orig_argv[1:],
    "path": list(sys.path)[:2],
    "main": getattr(sys.modules["__main__"], "__file__", None),
    "main_spec": getattr(getattr(sys.modules["__main__"], "__spec__", None), "name", None),
    "descriptors": {d: _target(d) for d in sorted(int(n) for n in os.listdir("/proc/self/fd"))},
    "handlers": {s.name: re.sub(" at 0x[0-9a-f]+", "", str(signal.getsignal(s))) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD,
                                                             signal.SIGPIPE, signal.SIGHUP, signal.SIGUSR1)},
    "mask": sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])),
    "streams": [(s.encoding, s.errors, s.line_buffering, s.write_through, type(s.buffer).__name__)
                for s in (sys.stdin, sys.stdout, sys.stderr)],
    "dont_write_bytecode": sys.dont_write_bytecode,
    "encodings": [codecs.lookup(sys.getfilesystemencoding()).name, codecs.lookup(locale.getpreferredencoding(False)).name,
                  sys.getfilesystemencodeerrors(), locale.setlocale(locale.LC_CTYPE)],
    "ppid": os.getppid(),
    "pid": os.getpid(),
}
with open(os.environ["PROBE_OUT"], "w") as out:
    json.dump(_report, out)
if os.environ.get("PROBE_ABORT"):
    os.abort()

from gateway import hookimpl

@hookimpl
def register_tools(gateway):
    return []
'''


@pytest.fixture(scope="module")
def fork_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    """A fork server of this module's own (the suite's is left alone), with a variable of its own set."""
    folder = tmp_path_factory.mktemp("fork")
    os.environ["FORK_SERVER_ONLY"] = "the fork server's own"
    try:
        process = forkserver.start(folder / "s.sock", folder / "log")
    finally:
        del os.environ["FORK_SERVER_ONLY"]
    assert process is not None, (folder / "log").read_text()
    yield folder / "s.sock", process
    forkserver.stop(process)


@pytest.fixture
def probed(tmp_path: Path) -> dict[str, str]:
    """A home whose config turns the probe on, and the environment of a `gateway` started on it."""
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(home), "REQUEST_ONLY": "the request's own",
           **installed_plugin(tmp_path / "site", "probe", PROBE)}
    write_config(home, {"gateway": {"plugins": ["probe"]}})
    return env


def _launcher(socket_path: Path, *arguments: str) -> list[str]:
    return [*shlex.split(forkserver.launcher_prefix(socket_path)), *arguments]


def _run(command: list[str], env: dict[str, str], folder: Path, out: Path,
         ignoring: tuple[signal.Signals, ...] = (), umask: int = -1) -> tuple[int, dict, str, str]:
    """Run `command` with files for its stdin, stdout and stderr (and the signals `ignoring` ignored, as a parent
    may leave them, and `umask` when not -1); its exit code, the probe's report, and its output."""
    folder.mkdir(exist_ok=True)
    (folder / "in").write_bytes(b"")
    with open(folder / "in", "rb") as stdin, open(folder / "out", "wb") as stdout, \
            open(folder / "err", "wb") as stderr:
        code = subprocess.run(command, env={**env, "PROBE_OUT": str(out)}, cwd=folder, stdin=stdin,
                              stdout=stdout, stderr=stderr, timeout=120, umask=umask,
                              preexec_fn=(lambda: [signal.signal(n, signal.SIG_IGN) for n in ignoring]) if ignoring
                              else None).returncode
    report = json.loads(out.read_text()) if out.exists() else {}
    return code, report, (folder / "out").read_text(), (folder / "err").read_text()


def _kinds(descriptors: dict[str, str | None], folder: Path) -> list[str]:
    """What each open descriptor is: the numbers of pipes, sockets and inodes left out, `folder` named so."""
    return sorted(d + ":" + re.sub(r"[:\[]\d+\]?$", "", (target or "").replace(str(folder), "FOLDER"))
                  for d, target in descriptors.items())


@pytest.mark.parametrize("ignoring, unbuffered, lang", [
    ((), False, None), ((signal.SIGINT, signal.SIGUSR1), True, None), ((), False, "C.UTF-8")],
    ids=["none-ignored", "some-ignored-and-unbuffered", "a-utf-8-locale-named"])
def test_the_forked_process_is_the_exec_d_one_with_the_request_s_descriptors_and_environment(
        fork_server, probed, tmp_path, ignoring, unbuffered, lang):
    socket_path, server = fork_server
    if unbuffered:  # read by the interpreter as it starts, made again by the fork server in its child
        probed = {**probed, "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    if lang:  # the fork server's environment names no locale (UTF-8 mode on); this one names a UTF-8 locale
        probed = {**probed, "LANG": lang}
    real_code, real, _, real_err = _run([sys.executable, "-m", "gateway", "serve"], probed, tmp_path / "real",
                                        tmp_path / "real.json", ignoring)
    code, forked, _, err = _run(_launcher(socket_path, "serve"), probed, tmp_path / "forked", tmp_path / "forked.json",
                                ignoring)
    assert real and forked, (real_err, err)
    assert (code, real_code) == (0, 0), (err, real_err)

    assert forked["ppid"] == server.pid  # made by the fork server, not exec'd by the launcher
    assert real["ppid"] != server.pid
    assert forked["env"]["REQUEST_ONLY"] == "the request's own"
    assert "FORK_SERVER_ONLY" not in forked["env"]
    real["env"].pop("PROBE_OUT"), forked["env"].pop("PROBE_OUT")
    assert forked["env"] == real["env"]
    assert forked["cwd"] == str(tmp_path / "forked") and real["cwd"] == str(tmp_path / "real")
    for key in ("argv", "orig_argv", "main", "main_spec", "handlers", "mask", "streams",
                "dont_write_bytecode", "encodings"):
        assert forked[key] == real[key], key
    assert real["dont_write_bytecode"] is unbuffered
    assert real["encodings"] == ["utf-8", "utf-8", "surrogateescape", lang or "C.UTF-8"]
    assert forked["env"].get("LANG") == lang
    written = [True, "FileIO"] if unbuffered else [False, "BufferedWriter"]  # (written through, under it)
    assert real["streams"][1][3:] == real["streams"][2][3:] == written
    assert forked["path"] == [str(tmp_path / "forked"), str(tmp_path / "site")]
    assert real["path"] == [str(tmp_path / "real"), str(tmp_path / "site")]
    # The request's three files are what it holds (the server moves them aside from 0 and 1 while it serves, in
    # both); nothing else the fork server held is open.
    for name in ("in", "out", "err"):
        assert str(tmp_path / "forked" / name) in forked["descriptors"].values(), forked["descriptors"]
    assert _kinds(forked["descriptors"], tmp_path / "forked") == _kinds(real["descriptors"], tmp_path / "real")
    assert not any(str(socket_path.parent) in (t or "") for t in forked["descriptors"].values())


# A script of the suite's own run through the launcher (`--script`), as the test servers are: what it is given
# (its umask too: `gateway` sets its own as it starts, so the probe above cannot see the launcher's).
SCRIPT = """
import json, os, sys
main = sys.modules["__main__"]
report = {"path0": list(sys.path)[0], "argv": sys.argv, "orig_argv": sys.orig_argv[1:], "file": main.__file__,
          "spec": repr(main.__spec__), "name": __name__, "ppid": os.getppid(), "umask": os.umask(0o022)}
with open(os.environ["PROBE_OUT"], "w") as out:
    json.dump(report, out)
print("said", *sys.argv[1:])
sys.exit(int(sys.argv[1]))
"""


def test_a_script_runs_as_the_interpreter_runs_it(fork_server, probed, tmp_path):
    socket_path, server = fork_server
    folder = tmp_path / "linked"
    (tmp_path / "scripts").mkdir()
    folder.symlink_to(tmp_path / "scripts")  # the interpreter puts the script's real folder on sys.path
    (folder / "probe_script.py").write_text(SCRIPT)
    script = str(folder / "probe_script.py")
    real = _run([sys.executable, script, "3", "a word"], probed, tmp_path / "real", tmp_path / "r.json",
                umask=0o027)
    forked = _run([*_launcher(socket_path, "--script", script), "3", "a word"], probed, tmp_path / "forked",
                  tmp_path / "f.json", umask=0o027)
    assert forked[1].pop("ppid") == server.pid and real[1].pop("ppid") != server.pid
    assert forked[1] == real[1]
    assert real[1]["path0"] == str(tmp_path / "scripts") and real[1]["umask"] == 0o027
    assert (forked[0], forked[2], forked[3]) == (real[0], real[2], real[3]) == (3, "said 3 a word\n", "")
    absent = str(tmp_path / "absent.py")  # declined: the interpreter's own words
    real = _run([sys.executable, absent], probed, tmp_path / "real", tmp_path / "r2.json")
    forked = _run(_launcher(socket_path, "--script", absent), probed, tmp_path / "forked",
                  tmp_path / "f2.json")
    assert forked[0] == real[0] == 2 and forked[3] == real[3] and "can't open file" in real[3]


def test_a_crash_reaches_the_test_as_its_signal_and_the_fork_server_serves_on(fork_server, probed, tmp_path):
    socket_path, server = fork_server
    crashing = {**probed, "PROBE_ABORT": "1"}
    real_code, *_ = _run([sys.executable, "-m", "gateway", "serve"], crashing, tmp_path / "real", tmp_path / "r.json")
    code, report, _, _ = _run(_launcher(socket_path, "serve"), crashing, tmp_path / "forked", tmp_path / "f.json")
    assert report["ppid"] == server.pid
    assert code == real_code == -signal.SIGABRT

    code, report, _, err = _run(_launcher(socket_path, "serve"), probed, tmp_path / "after", tmp_path / "a.json")
    assert code == 0, err
    assert report["ppid"] == server.pid
    assert server.poll() is None


def test_exit_codes_and_output_are_the_exec_d_ones(fork_server, probed, tmp_path):
    socket_path, _ = fork_server
    for arguments in (["no-such-command"], ["--version"], ["--config", str(tmp_path / "absent.toml"), "doctor"]):
        real = _run([sys.executable, "-m", "gateway", *arguments], probed, tmp_path / "real", tmp_path / "r.json")
        forked = _run(_launcher(socket_path, *arguments), probed, tmp_path / "forked", tmp_path / "f.json")
        assert forked[0] == real[0], arguments
        assert (forked[2], forked[3]) == (real[2], real[3]), arguments
    assert real[0] != 0  # the last one fails, and says why the same way


def test_a_signal_the_test_sends_reaches_the_served_process(fork_server, probed, tmp_path):
    socket_path, server = fork_server
    codes = []
    for command in ([sys.executable, "-m", "gateway", "serve"], _launcher(socket_path, "serve")):
        out = tmp_path / f"{len(codes)}.json"
        process = subprocess.Popen(command, env={**probed, "PROBE_OUT": str(out)}, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode() + b"\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1  # serving, its signal handlers in place
        process.send_signal(signal.SIGTERM)
        codes.append(process.wait(timeout=60))
        process.stdin.close(), process.stdout.close()
    assert codes[1] == codes[0] == 0  # the server ends on SIGTERM as it ends on end of input
    assert json.loads(out.read_text())["ppid"] == server.pid


def _serving(command: list[str], env: dict[str, str], out: Path, **options) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(command, env={**env, "PROBE_OUT": str(out)}, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, **options)
    process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode() + b"\n")
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["id"] == 1
    return process


def _gone(pid: int) -> bool:
    """Whether `pid` has ended, waiting for it up to a minute (a guard against a hang, not a time limit)."""
    for _ in range(1200):
        try:
            os.kill(pid, 0)
            with open(f"/proc/{pid}/stat") as stat:  # a zombie has ended too
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except (ProcessLookupError, FileNotFoundError):  # gone, perhaps reaped between the two looks
            return True
        time.sleep(0.05)
    return False


def test_a_group_signal_and_a_killed_launcher_reach_the_served_process(fork_server, probed, tmp_path):
    socket_path, _ = fork_server
    # The SDK's client starts its server as a group leader and ends it with a signal to the group.
    process = _serving(_launcher(socket_path, "serve"), probed, tmp_path / "a.json", start_new_session=True)
    os.killpg(process.pid, signal.SIGTERM)
    assert process.wait(timeout=60) == 0
    assert _gone(json.loads((tmp_path / "a.json").read_text())["pid"])
    process.stdin.close(), process.stdout.close()
    # A launcher killed outright takes its served process with it, as SIGKILL would have taken an exec'd one.
    process = _serving(_launcher(socket_path, "serve"), probed, tmp_path / "b.json")
    served = json.loads((tmp_path / "b.json").read_text())["pid"]
    process.kill()
    assert process.wait(timeout=60) == -signal.SIGKILL
    assert _gone(served)
    process.stdin.close(), process.stdout.close()


def test_a_launcher_without_a_fork_server_serves_by_exec(probed, tmp_path, monkeypatch):
    home = Path(probed["HOME"])
    monkeypatch.setenv(forkserver.VARIABLE, forkserver.launcher_prefix(tmp_path / "nobody-listens.sock"))
    out = tmp_path / "probe.json"

    async def session():
        async with serve_client(home, extra_env={**probed, "PROBE_OUT": str(out)}) as client:
            return (await client.list_tools()).tools

    assert isinstance(anyio.run(session), list)
    report = json.loads(out.read_text())
    assert report["orig_argv"] == ["-m", "gateway", "serve"]
    assert "launcher.py" not in " ".join(report["orig_argv"])


@pytest.mark.parametrize("variable, value", [
    ("PYTHONWARNINGS", "error::DeprecationWarning"),  # read by the interpreter as it starts
    ("GATEWAY_LOG_LEVEL", "debug"),  # read when the gateway's log set-up is imported
    ("NO_COLOR", "1"),  # read when structlog is imported
])
def test_a_request_the_fork_server_cannot_stand_for_is_exec_d(fork_server, probed, tmp_path, variable, value):
    socket_path, server = fork_server
    code, report, _, err = _run(_launcher(socket_path, "serve"), {**probed, variable: value}, tmp_path / "x",
                                tmp_path / "x.json")
    assert code == 0, err
    assert report["ppid"] != server.pid
    assert report["env"][variable] == value


def test_serve_client_through_the_fork_server_answers(fork_server, probed, monkeypatch, tmp_path):
    socket_path, server = fork_server
    monkeypatch.setenv(forkserver.VARIABLE, forkserver.launcher_prefix(socket_path))
    out = tmp_path / "probe.json"

    async def session():
        async with serve_client(Path(probed["HOME"]), extra_env={**probed, "PROBE_OUT": str(out)}) as client:
            return (await client.list_tools()).tools

    anyio.run(session)
    assert json.loads(out.read_text())["ppid"] == server.pid
