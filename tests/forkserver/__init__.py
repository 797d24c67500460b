"""A fork server for the test suite's `gateway` starts (`serve` and the other commands), and the launcher a
test runs in its place.

A start of `gateway` is almost all importing the MCP SDK (about a second of CPU), and the suite starts a few
hundred. `tests/conftest.py` starts one fork server per pytest process (`start`), which has imported that once,
and sets GATEWAY_TEST_LAUNCHER to the command that replaces `python -m gateway` (`python -I -S launcher.py
SOCKET`); `gateway.testing.serve_client` and `gateway_command` below use it. The process a test talks to is the
same program with the same arguments, environment, working directory, umask and standard streams, forked
instead of exec'd. A test about start-up itself (what a fresh interpreter imported, the cold start) or one
that reads the process's /proc (its pid is the launcher's) asks for the fixture `real_exec`, which unsets the
variable for it. `gateway_command` and `script_command` are called when the test runs, not when its module is
imported (a session fixture sets the variable).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

LAUNCHER = Path(__file__).with_name("launcher.py")
VARIABLE = "GATEWAY_TEST_LAUNCHER"
ROOT = Path(__file__).resolve().parents[2]
# What the fork server leaves out of its own environment: most requests the suite makes carry none of them, and
# the fork server declines a request that differs from it in any read at start-up (see server.py). With no locale
# named it runs in UTF-8 mode, which stands for a request naming a UTF-8 locale too (LANG=C.UTF-8).
_LEFT_OUT_PREFIXES = ("PYTHON", "_PYTHON", "OTEL_", "LC_")
_LEFT_OUT = ("LANG", "NO_COLOR", "FORCE_COLOR", "GATEWAY_LOG_LEVEL", VARIABLE)


def gateway_command(*arguments: str) -> list[str]:
    """The command that runs `python -m gateway ARGUMENTS...`: through the launcher when the suite set it."""
    prefix = os.environ.get(VARIABLE)
    head = shlex.split(prefix) if prefix else [sys.executable, "-m", "gateway"]
    return [*head, *arguments]


def script_command(script: Path | str, *arguments: str) -> list[str]:
    """The command that runs `python SCRIPT ARGUMENTS...` for a script of the suite's own that imports no more
    than a `gateway` start does (a test server): through the launcher when the suite set it."""
    prefix = os.environ.get(VARIABLE)
    if not prefix:
        return [sys.executable, str(script), *arguments]
    return [*shlex.split(prefix), "--script", str(script), *arguments]


def launcher_prefix(socket_path: Path) -> str:
    return shlex.join([sys.executable, "-I", "-S", str(LAUNCHER), str(socket_path)])


def start(socket_path: Path, log: Path, wait: float = 60.0) -> subprocess.Popen[bytes] | None:
    """Start a fork server listening on `socket_path`; None when it is not listening within `wait` seconds."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_LEFT_OUT_PREFIXES) and k not in _LEFT_OUT}
    with open(log, "ab") as output:
        process = subprocess.Popen([sys.executable, "-m", "tests.forkserver.server", str(socket_path)], cwd=ROOT,
                                   env=env, stdin=subprocess.PIPE, stdout=output, stderr=output)
    deadline = time.monotonic() + wait
    while not socket_path.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            stop(process)
            return None
        time.sleep(0.05)
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    """End a fork server: closing its standard input tells it to go."""
    if process.stdin is not None:
        process.stdin.close()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
