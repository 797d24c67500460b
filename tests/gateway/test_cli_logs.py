"""Warnings on stderr: a readable line when a person reads it (a terminal), a JSON line when a host keeps it."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time

import pytest

from gateway.api.context import home_environment
from gateway.testing import write_config
from tests.forkserver import gateway_command

# A config naming a plugin that is not installed: the core warns about it when it merges the catalogue.
ARGUMENTS = ("call", "hello", '{"name": "Ada"}')
# On a terminal the fork server would decline it (tests/forkserver/server.py): a real exec there.
COMMAND = [sys.executable, "-m", "gateway", *ARGUMENTS]


@pytest.fixture
def environment(gateway_home):
    write_config(gateway_home, {"gateway": {"plugins": ["ghost", "hello"]}})
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(gateway_home)}
    return env


def run_on_a_terminal(command: list[str], env: dict[str, str]) -> str:
    """What a person sees in a terminal: stdout and stderr both on one pseudo-terminal."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: its stdin, stdout and stderr are the terminal
        try:
            os.execve(command[0], command, env)
        finally:
            os._exit(127)
    seen = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child ended and closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(fd)
    _pid, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, seen.decode(errors="replace")
    return seen.decode(errors="replace").replace("\r\n", "\n")


def test_a_warning_on_a_terminal_is_a_readable_line(environment):
    seen = run_on_a_terminal(COMMAND, environment)
    warning = [line for line in seen.splitlines() if "catalogue problem" in line]
    assert len(warning) == 1, seen
    assert "[warning" in warning[0] and "no plugin named 'ghost'" in warning[0]
    assert not warning[0].lstrip().startswith("{")
    assert "Hello, Ada!" in seen


def test_a_warning_kept_by_a_host_is_a_json_line(environment):
    result = subprocess.run(gateway_command(*ARGUMENTS), env=environment, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0 and result.stdout.strip() == "Hello, Ada!"
    lines = [json.loads(line) for line in result.stderr.splitlines() if line.strip()]
    assert [line["event"] for line in lines] == ["catalogue problem"]
    assert lines[0]["level"] == "warning" and "ghost" in lines[0]["problem"]


def test_the_format_can_be_chosen_by_hand(environment):
    result = subprocess.run(gateway_command(*ARGUMENTS), env={**environment, "GATEWAY_LOG_FORMAT": "console"},
                            capture_output=True, text=True, timeout=60)
    assert "[warning" in result.stderr and not result.stderr.lstrip().startswith("{")


def test_a_traceback_reads_as_python_prints_it_on_a_terminal(monkeypatch, capsys):
    import structlog

    from gateway.engine import log

    monkeypatch.setattr(log, "on_terminal", lambda: True)
    log.configure()
    try:
        structlog.get_logger("gateway").error("plugin failed", plugin="x", traceback="Traceback:\n  line 1\nBoom\n")
    finally:
        log.configure()
    err = capsys.readouterr().err
    assert "plugin failed" in err and "\n  line 1\nBoom" in err and "\\n" not in err


def logged_by(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
                          env={**os.environ, "GATEWAY_LOG_FORMAT": "json"})


def test_structlog_is_imported_when_a_line_is_first_logged_and_not_for_a_dropped_one():
    done = logged_by(
        "import sys; from gateway.engine.log import get_logger; log = get_logger('gateway.test');"
        "log.debug('dropped', n=1); log.info('dropped too'); print('structlog' in sys.modules);"
        "log.warning('kept', n=2); print('structlog' in sys.modules)")
    assert done.stdout.split() == ["False", "True"]
    lines = [json.loads(line) for line in done.stderr.splitlines()]
    assert [(line["event"], line["level"], line["n"]) for line in lines] == [("kept", "warning", 2)]


def test_a_plugin_importing_structlog_itself_logs_to_stderr_not_to_the_protocol():
    """structlog's own default writes to stdout: the gateway sets it up as it is imported, whoever imports it."""
    done = logged_by(
        "import importlib.util, sys, gateway.engine.log; assert 'structlog' not in sys.modules;"
        "assert importlib.util.find_spec('structlog') is not None;"  # looked up only: still set up when imported
        "import structlog; structlog.get_logger('gateway_plugin').warning('plugin said', k='v')")
    assert done.stdout == ""
    [line] = [json.loads(line) for line in done.stderr.splitlines()]
    assert line["event"] == "plugin said" and line["k"] == "v" and line["level"] == "warning"


def test_structlog_imported_before_the_gateway_is_set_up_too():
    done = logged_by("import structlog, gateway.engine.log; structlog.get_logger().error('early', k=1)")
    assert done.stdout == "" and json.loads(done.stderr)["event"] == "early"
