"""The test suite's fork server for `gateway` starts (`serve` and the other commands the tests run):
`python -m tests.forkserver.server SOCKET`.

Starting `gateway` is almost all importing the MCP SDK. This process imports, once, what every `gateway` start
imports (the command line and the server, hence the SDK, pydantic, anyio, structlog) and what every `serve`
imports once it runs (the event loop's backend, the stdio framing, SQLite), and nothing more: no plugin,
nothing that reads the home or the time zone when imported (what reads the environment when imported is listed
below); then, single-threaded, it listens on the Unix socket SOCKET (mode 0600). Each request comes from
`tests/forkserver/launcher.py`: the launcher's standard input, output and error (SCM_RIGHTS), its arguments,
environment, working directory and umask. The fork server forks; the child puts the three descriptors in
place, closes every other one, changes directory, takes the launcher's umask, replaces its environment wholly,
sets the signal handlers and mask as a fresh interpreter exec'd by the launcher has them (the signals the
launcher was started with ignored stay ignored), and runs `gateway`'s `__main__` as
`python -m gateway ARGS...` does, ending through the interpreter's ordinary exit. The fork server reaps its
children and sends each one's exit code or signal back to its launcher, passes on the signals the launcher
forwards, and kills a child whose launcher went away (as a killed process would have gone with it). A launcher
that leads its own process group (the SDK's client starts its server so, to end the whole tree with one
signal) has its child lead a new session and group, and the signals go to that group.

A request may name a script instead (`python SCRIPT ARGS...`: a test server of the suite's own, such as
`tests/gateway/echo_server.py`, importing no more than a `gateway` start): the child then runs that file as
the interpreter runs a script, its folder first on `sys.path`.

It declines (the launcher then execs `python -m gateway`, or the script, itself) a request whose environment
differs from its own in what the interpreter or an imported library read at start-up: variables named PYTHON*
or _PYTHON* (PYTHONPATH excepted: its folders, and a script's own, are put on `sys.path` as the interpreter
would, when no module they hold was imported already and they hold no sitecustomize or usercustomize; and the
two made again in the child, PYTHONUNBUFFERED and PYTHONDONTWRITEBYTECODE), OTEL_*,
NO_COLOR, FORCE_COLOR and GATEWAY_LOG_LEVEL (read by OpenTelemetry, structlog and the gateway's log set-up
when imported), a different encoding (UTF-8 mode aside when the locale's encoding is UTF-8: see
`_same_encodings`), or a terminal on a standard stream (structlog's import looks for one).
It ends when its standard input (a pipe from the test session that started it) closes.

Forked children share the fork server's string-hash seed (a fresh interpreter picks its own); `random` is
reseeded in each child by Python itself.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import selectors
import signal
import socket
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

# Read at import by the modules a `gateway` start imports (see the module docstring), or by the interpreter:
# structlog's defaults (NO_COLOR, FORCE_COLOR), the gateway's log set-up (GATEWAY_LOG_LEVEL), OpenTelemetry.
IMPORT_TIME_VARIABLES = ("NO_COLOR", "FORCE_COLOR", "GATEWAY_LOG_LEVEL")
IMPORT_TIME_PREFIXES = ("PYTHON", "_PYTHON", "OTEL_")  # _PYTHON_*: sysconfig, for cross builds
# Read by the interpreter as it starts, but what they decide is made again in each child: its standard streams
# (PYTHONUNBUFFERED: stdout and stderr written through, unbuffered) and sys.dont_write_bytecode. Only
# `sys.flags` keeps the fork server's values.
MADE_AGAIN = ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")


def _preload() -> None:
    gc.disable()
    # What every `gateway` start imports, and what every `serve` imports once it runs (the event loop's backend,
    # the stdio framing, the tools' schemas, SQLite): modules that read nothing of the environment when imported.
    import sqlite3  # noqa: F401

    import anyio._backends._asyncio  # noqa: F401

    import gateway.api.schemas  # noqa: F401
    import gateway.commands.cli  # noqa: F401
    import gateway.commands.start  # noqa: F401
    import gateway.wire.descriptors  # noqa: F401
    import gateway.wire.server  # noqa: F401
    import gateway.wire.transport  # noqa: F401

    _warm_what_children_reach_first()

    gc.freeze()  # the child's collector need not walk what it was given
    gc.enable()


def _warm_what_children_reach_first() -> None:
    """What a start leaves for later and most children reach at once: structlog (imported and set up to stderr by
    the gateway's log module, as on the first line a fresh process logs), the masks' code and link forms, and the
    masks' patterns compiled (each is compiled on first use otherwise, in every child again)."""
    import structlog  # noqa: F401

    import gateway.privacy.codes  # noqa: F401 - compiled as it is imported
    import gateway.privacy.links  # noqa: F401
    from gateway.privacy import framing, keys, masks, numbers, secret_links, text

    for module in (framing, keys, masks, numbers, secret_links, text):
        for value in list(vars(module).values()):
            if isinstance(value, text.LazyPattern):
                value.pattern  # noqa: B018 - compiled here, once for every child


@dataclass
class Request:
    descriptors: list[int]
    argv: list[str]
    env: dict[str, str]
    cwd: str
    encodings: list[object]
    leader: bool = False
    ignored: list[int] = field(default_factory=list)
    blocked: list[int] = field(default_factory=list)
    umask: int | None = None
    script: str | None = None  # None: `python -m gateway ARGV...`; else `python SCRIPT ARGV...`
    connection: socket.socket | None = None
    pid: int = 0
    closing: list[object] = field(default_factory=list)


def _encodings() -> list[object]:
    return [sys.getfilesystemencoding(), sys.flags.utf8_mode, sys.stdout.encoding, sys.stdout.errors]


def _declined(request: Request) -> str | None:
    """Why this process cannot stand for a fresh interpreter started as `request` asks, or None."""
    own = os.environ
    for key in set(request.env) | set(own):
        if key == "PYTHONPATH" or key in MADE_AGAIN:
            continue
        read_at_start = key in IMPORT_TIME_VARIABLES or key.startswith(IMPORT_TIME_PREFIXES)
        if read_at_start and request.env.get(key) != own.get(key):
            return f"{key} differs"
    if not _same_encodings(request.encodings, _encodings()):
        return "encoding differs"
    if any(os.isatty(d) for d in request.descriptors):
        return "a terminal"
    folders = _python_path(request)
    if request.script is not None:
        if not os.path.isfile(os.path.join(request.cwd, request.script)):
            return "no such script"  # the interpreter says so itself
        folders = [_script_folder(request), *folders]
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            module = name.split(".", 1)[0]
            if module in sys.modules:
                return f"{folder} holds {module}, already imported"
            if module in ("sitecustomize", "usercustomize"):  # the interpreter would run it as it starts
                return f"{folder} holds {module}"
    return None


def _same_encodings(asked: list[object], own: list[object]) -> bool:
    """Whether a fresh interpreter that reported `asked` (file system encoding, UTF-8 mode, standard output's
    encoding and errors) decides what this one decided.

    This process's environment names no locale, so the interpreter took the C locale as C.UTF-8 and turned UTF-8
    mode on; a launcher given LANG=C.UTF-8 (as the suite's own environment may be) has it off. With a UTF-8
    locale the two decide the same: the file system's encoding and errors, the standard streams' encoding and
    errors (compared here), and the encoding open() and subprocess use (the locale's, UTF-8; the child sets its
    locale from the request's environment). So the mode alone may differ when the encoding is UTF-8."""
    if len(asked) != len(own):
        return False
    if asked[1] != own[1] and str(asked[0]).lower().replace("-", "").replace("_", "") == "utf8":
        asked = [asked[0], own[1], *asked[2:]]
    return asked == own


def _script_folder(request: Request) -> str:
    """The folder `python SCRIPT` puts first on sys.path: the script's own, links resolved."""
    return os.path.dirname(os.path.realpath(os.path.join(request.cwd, str(request.script))))


def _python_path(request: Request) -> list[str]:
    value = request.env.get("PYTHONPATH", "")
    return [os.path.join(request.cwd, part) for part in value.split(os.pathsep) if part]


def _receive(connection: socket.socket) -> Request:
    connection.settimeout(30)
    head, descriptors, _, _ = socket.recv_fds(connection, 4, 3)
    if len(descriptors) != 3 or len(head) != 4:
        for descriptor in descriptors:
            os.close(descriptor)
        raise OSError("a request without its three descriptors")
    (size,) = struct.unpack("!I", head)
    body = b""
    while len(body) < size:
        chunk = connection.recv(size - len(body))
        if not chunk:
            break
        body += chunk
    connection.settimeout(None)
    try:
        asked = json.loads(body)
        return Request(descriptors, list(asked["argv"]), dict(asked["env"]), str(asked["cwd"]),
                       list(asked["encodings"]), bool(asked.get("leader")), [int(n) for n in asked.get("ignored", [])],
                       [int(n) for n in asked.get("blocked", [])],
                       int(asked["umask"]) if asked.get("umask") is not None else None,
                       str(asked["script"]) if asked.get("script") is not None else None, connection)
    except (ValueError, KeyError, TypeError) as error:
        for descriptor in descriptors:
            os.close(descriptor)
        raise OSError(f"an unreadable request: {error}") from error


def _send(connection: socket.socket, message: dict[str, object]) -> None:
    with contextlib.suppress(OSError):
        connection.sendall(json.dumps(message).encode() + b"\n")


class ForkServer:
    def __init__(self, path: str) -> None:
        self.path = path
        self.selector = selectors.DefaultSelector()
        self.children: dict[int, Request] = {}
        self.by_connection: dict[socket.socket, Request] = {}
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_read, False)
        os.set_blocking(self.wake_write, False)
        signal.set_wakeup_fd(self.wake_write)
        signal.signal(signal.SIGCHLD, lambda number, frame: None)
        signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(0))
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        previous = os.umask(0o177)
        try:
            self.listener.bind(path)
        finally:
            os.umask(previous)
        os.chmod(path, 0o600)
        self.listener.listen(64)
        self.selector.register(self.listener, selectors.EVENT_READ, "listen")
        self.selector.register(self.wake_read, selectors.EVENT_READ, "wake")
        self.selector.register(0, selectors.EVENT_READ, "parent")

    def serve(self) -> Request | None:
        """Serve until the parent goes away (None), or, in a forked child, return the request it is to run."""
        while True:
            for key, _ in self.selector.select():
                if key.data == "listen":
                    child = self._accept()
                    if child is not None:
                        return child
                elif key.data == "wake":
                    self._reap()
                elif key.data == "parent":
                    if not os.read(0, 4096):
                        return None
                else:
                    self._from_launcher(key.fileobj)  # type: ignore[arg-type]

    def _accept(self) -> Request | None:
        connection, _ = self.listener.accept()
        try:
            request = _receive(connection)
        except OSError as error:
            print(f"forkserver: {error}", file=sys.stderr, flush=True)
            connection.close()
            return None
        why = _declined(request)
        if why is not None:
            print(f"forkserver: declined {request.argv}: {why}", file=sys.stderr, flush=True)
            _send(connection, {"declined": why})
            self._close_request(request)
            return None
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            return request
        request.pid = pid
        print(f"forkserver: {pid} runs {request.argv}", file=sys.stderr, flush=True)
        for descriptor in request.descriptors:
            os.close(descriptor)
        request.descriptors = []
        self.children[pid] = request
        self.by_connection[connection] = request
        self.selector.register(connection, selectors.EVENT_READ, "launcher")
        _send(connection, {"pid": pid})
        return None

    def _from_launcher(self, connection: socket.socket) -> None:
        request = self.by_connection[connection]
        try:
            data = connection.recv(4096)
        except OSError:
            data = b""
        if not data:  # the launcher is gone (killed): its process goes with it, as an exec'd one would
            self._forget_connection(request)
            if request.pid in self.children:
                _kill(request, signal.SIGKILL)
            return
        for line in data.split(b"\n"):
            if line.strip().isdigit() and request.pid in self.children:
                _kill(request, int(line))

    def _reap(self) -> None:
        try:
            while os.read(self.wake_read, 4096):
                pass
        except BlockingIOError:
            pass
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            code = os.waitstatus_to_exitcode(status)
            print(f"forkserver: {pid} ended {code} cpu {usage.ru_utime + usage.ru_stime:.3f}", file=sys.stderr,
                  flush=True)
            request = self.children.pop(pid, None)
            if request is None or request.connection is None:
                continue
            _send(request.connection, {"exit": code} if code >= 0 else {"signal": -code})
            self._forget_connection(request)

    def _forget_connection(self, request: Request) -> None:
        if request.connection is not None:
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(request.connection)
            self.by_connection.pop(request.connection, None)
            request.connection.close()
            request.connection = None

    def _close_request(self, request: Request) -> None:
        for descriptor in request.descriptors:
            os.close(descriptor)
        request.descriptors = []
        if request.connection is not None:
            request.connection.close()
            request.connection = None

    def shut(self) -> None:
        for request in list(self.children.values()):
            _kill(request, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.unlink(self.path)

    def leave_to_child(self) -> None:
        """In a forked child: let go of everything the fork server holds (the descriptors are closed later)."""
        signal.set_wakeup_fd(-1)
        self.selector.close()
        self.listener.detach()
        for connection in list(self.by_connection):
            connection.detach()
        self.by_connection.clear()
        self.children.clear()


def _kill(request: Request, number: int) -> None:
    """Signal a child: its whole group when its launcher led one (as a group signal would have reached it)."""
    with contextlib.suppress(OSError):
        if request.leader:
            os.killpg(request.pid, number)
        else:
            os.kill(request.pid, number)


def _fresh_signals(ignored: list[int], blocked: list[int]) -> None:
    """The signal handlers and mask a fresh CPython process starts with, when exec'd by a process that ignored
    `ignored` and blocked `blocked` (an exec keeps both; the interpreter leaves an ignored SIGINT ignored)."""
    for number in signal.valid_signals():
        if number in (signal.SIGKILL, signal.SIGSTOP):
            continue
        with contextlib.suppress(OSError, ValueError):
            signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    for number in ignored:
        with contextlib.suppress(OSError, ValueError):
            signal.signal(number, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _fresh_streams(encoding: str, errors: str, buffered: bool) -> None:
    """sys.stdin, stdout and stderr made over descriptors 0, 1 and 2 as the interpreter makes them at start-up
    (`buffered` false: as PYTHONUNBUFFERED makes them, stdout and stderr with no buffer, all written
    through)."""
    import io

    def stream(descriptor: int, mode: str, errors: str, line_buffering: bool) -> io.TextIOWrapper:
        unbuffered = not buffered and mode == "w"
        size = 0 if unbuffered else -1
        raw = io.open(descriptor, mode + "b", buffering=size, closefd=False)  # noqa: UP020, SIM115 (lives as long as the process)
        # Unbuffered, stdin too is written through (as the interpreter makes it).
        return io.TextIOWrapper(raw, encoding=encoding, errors=errors, write_through=not buffered,
                                line_buffering=line_buffering and buffered)

    sys.stdin = sys.__stdin__ = stream(0, "r", errors, False)
    sys.stdout = sys.__stdout__ = stream(1, "w", errors, os.isatty(1))
    sys.stderr = sys.__stderr__ = stream(2, "w", "backslashreplace", True)


def become(server: ForkServer, request: Request) -> None:
    """In the forked child: become `python -m gateway ARGV...` (or `python SCRIPT ARGV...`) started with the
    request's stdio, env, cwd and umask."""
    import locale
    import runpy
    import time

    server.leave_to_child()
    if request.leader:
        os.setsid()
    if request.connection is not None:
        request.connection.detach()  # closed with the rest below; never by its object, after the number is reused
        request.connection = None
    _fresh_signals(request.ignored, request.blocked)
    for target, descriptor in enumerate(request.descriptors):
        os.dup2(descriptor, target, inheritable=True)
    os.closerange(3, os.sysconf("SC_OPEN_MAX") if os.sysconf("SC_OPEN_MAX") > 0 else 65536)
    os.chdir(request.cwd)
    if request.umask is not None:
        os.umask(request.umask)
    os.environ.clear()
    os.environ.update(request.env)
    time.tzset()
    with contextlib.suppress(locale.Error):
        locale.setlocale(locale.LC_CTYPE, "")
    _fresh_streams(str(request.encodings[2]), str(request.encodings[3]),
                   buffered=not request.env.get("PYTHONUNBUFFERED"))
    sys.dont_write_bytecode = bool(request.env.get("PYTHONDONTWRITEBYTECODE"))
    # `python -m` puts the working directory first on sys.path, `python SCRIPT` the script's folder; then
    # PYTHONPATH's folders.
    sys.path[0] = os.getcwd() if request.script is None else _script_folder(request)
    sys.path[1:1] = _python_path(request)
    if "multiprocessing.process" in sys.modules:
        sys.modules["multiprocessing.process"].ORIGINAL_DIR = os.getcwd()  # type: ignore[attr-defined]
    if request.script is not None:
        sys.orig_argv = [sys.executable, request.script, *request.argv]
        sys.argv = [request.script, *request.argv]
        runpy.run_path(request.script, run_name="__main__")
        return
    sys.orig_argv = [sys.executable, "-m", "gateway", *request.argv]
    sys.argv = ["-m", *request.argv]
    runpy.run_module("gateway", run_name="__main__", alter_sys=True)


def main() -> None:
    path = sys.argv[1]
    _preload()
    server = ForkServer(path)
    try:
        request = server.serve()
    except SystemExit:
        request = None
    if request is None:
        server.shut()
        return
    become(server, request)


if __name__ == "__main__":
    if Path(sys.argv[0]).name == "server.py" and len(sys.argv) != 2:
        sys.exit("usage: python -m tests.forkserver.server SOCKET")
    main()
