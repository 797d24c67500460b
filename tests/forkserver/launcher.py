"""What a test starts in place of `python -m gateway ARGS...`: `python -I -S launcher.py SOCKET ARGS...`; and
in place of `python SCRIPT ARGS...`: `python -I -S launcher.py SOCKET --script SCRIPT ARGS...` (a script of
the suite's own, such as a test server, that imports what a `gateway` start imports).

It hands its standard input, output and error (SCM_RIGHTS), its arguments, environment, working directory and
umask to the suite's fork server listening on SOCKET, which forks a `gateway` process that has already
imported the SDK. It then holds none of those three descriptors itself (so a pipe's end closes when the served
process closes it), forwards SIGTERM and SIGINT to the served process, and ends as it ended: with its exit
code, or by the same signal. When no fork server answers, or it declines the request, the launcher becomes
`python -m gateway ARGS...` (or `python SCRIPT ARGS...`) itself (exec), so a test never depends on the fork
server being there.

Only built-in modules and the few it names are imported, so that it starts in a few milliseconds.
"""

import json
import os
import signal
import socket
import struct
import sys


def _exec(script, arguments):
    head = [script] if script is not None else ["-m", "gateway"]
    os.execv(sys.executable, [sys.executable, *head, *arguments])


def _ignored():
    """The signals this process was started with ignored (an exec keeps them so), SIGPIPE and SIGXFSZ aside:
    the interpreter ignores those itself, whatever it was given."""
    return [int(number) for number in signal.valid_signals()
            if number not in (signal.SIGPIPE, signal.SIGXFSZ) and signal.getsignal(number) == signal.SIG_IGN]


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _request(script, arguments):
    return json.dumps({
        "script": script,
        "argv": arguments,
        "env": dict(os.environ),
        "cwd": os.getcwd(),
        "umask": _umask(),  # an exec keeps it (a test may set it: subprocess.run(umask=...))
        # Started as the leader of its own process group (the SDK's client does so, to signal the whole tree):
        # the served process then leads a group of its own, and signals go to that group.
        "leader": os.getpgid(0) == os.getpid(),
        # What an exec would have kept: the signals ignored and the signal mask.
        "ignored": _ignored(),
        "blocked": sorted(int(number) for number in signal.pthread_sigmask(signal.SIG_BLOCK, [])),
        # What the interpreter decided from the environment at start-up; the fork server declines when its own
        # differs, since a forked process cannot decide it again.
        "encodings": [sys.getfilesystemencoding(), sys.flags.utf8_mode, sys.stdout.encoding if sys.stdout else None,
                      sys.stdout.errors if sys.stdout else None],
    }).encode()


def _lines(connection):
    pending = b""
    while True:
        while b"\n" not in pending:
            chunk = connection.recv(4096)
            if not chunk:
                return
            pending += chunk
        line, pending = pending.split(b"\n", 1)
        yield json.loads(line)


def main():
    path, arguments = sys.argv[1], sys.argv[2:]
    script = None
    if arguments[:1] == ["--script"] and len(arguments) >= 2:
        script, arguments = arguments[1], arguments[2:]
    try:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(path)
        body = _request(script, arguments)
        socket.send_fds(connection, [struct.pack("!I", len(body))], [0, 1, 2])
        connection.sendall(body)
        answers = _lines(connection)
        first = next(answers, None)
    except (OSError, ValueError):
        first = None
    if first is None or "pid" not in first:
        _exec(script, arguments)  # no fork server, or it declined: the real exec

    # The served process has the three descriptors now; holding them here would keep its pipes open.
    null = os.open(os.devnull, os.O_RDWR)
    for descriptor in (0, 1, 2):
        os.dup2(null, descriptor)
    os.close(null)

    def forward(number, frame):
        try:  # noqa: SIM105 (contextlib is not imported here, to start fast)
            connection.sendall(b"%d\n" % number)
        except OSError:
            pass

    for number in (signal.SIGTERM, signal.SIGINT):
        if signal.getsignal(number) != signal.SIG_IGN:  # an ignored one would have been ignored by the exec'd process
            signal.signal(number, forward)
    for answer in answers:
        if "exit" in answer:
            os._exit(answer["exit"])
        if "signal" in answer:
            number = answer["signal"]
            signal.signal(number, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
            os.kill(os.getpid(), number)
            os._exit(128 + number)
    os._exit(70)  # the fork server went away while its process ran: its end is unknown


if __name__ == "__main__":
    main()
