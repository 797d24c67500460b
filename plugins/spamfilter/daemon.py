"""The long-lived classifier (`gateway-spam-classify --serve`): spamd to the command's spamc.

A delivery rule's process pays for Python's start and, judging a message itself, for the email package and SQLite
(tens of milliseconds). This process pays for them once: it listens on `classify.sock` in the data folder and
judges each message the command hands it with `verdicts.judge`, the very function the command would run, against
the model file as it is at that moment (opened per message: a model trained meanwhile is used at once).

Who may ask: the socket is made 0600 and each connection's peer must be this user (the kernel's SO_PEERCRED);
another user's connection is closed unanswered. What one asker may cost: a request is read within
`READ_TIMEOUT` seconds and `MAX_MESSAGE` bytes (what the command sends), at most `AT_ONCE` messages are judged at a
time, and a connection that finds no place within `WAIT` seconds is closed, so its command judges the message
itself. A broken message is an error line, never the end of this process. It runs in the foreground until SIGTERM
or SIGINT (a systemd user unit, or `&` in a session's start), and removes its socket when it ends.
"""

from __future__ import annotations

import os
import sys

from spamfilter import MAX_MESSAGE
from spamfilter.verdicts import ERROR, PROTOCOL, SOCKET, SOCKET_PATH_MAX, judge

READ_TIMEOUT = 10.0
AT_ONCE = 8
WAIT = 5.0
HEADER_MAX = 200  # bytes of the request's first line


def _cutoff(word: bytes) -> float | None:
    if word == b"-":
        return None
    value = float(word)
    if not 0.0 <= value <= 1.0:
        raise ValueError(word)
    return value


def answer(request: bytes, data: str) -> bytes:
    """The reply line to one whole request (its first line, then the message's bytes)."""
    line, newline, raw = request.partition(b"\n")
    words = line.split(b" ")
    try:
        if not newline or len(words) != 3 or words[0] != PROTOCOL:
            raise ValueError(line[:40])
        cutoffs = (_cutoff(words[1]), _cutoff(words[2]))
    except ValueError:
        return f"{ERROR} 0 the classifier was sent something other than a message to judge\n".encode()
    try:
        code, text, about = judge(raw, data, cutoffs)
    except Exception as error:  # noqa: BLE001 - whatever a stranger's message does, this process goes on
        code, text, about = ERROR, f"the message cannot be judged ({type(error).__name__})", True
    return f"{code} {int(about)} {text}\n".encode()


def _peer_is_me(connection) -> bool:  # noqa: ANN001
    import socket
    import struct

    try:
        _pid, uid, _gid = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                                    struct.calcsize("3i")))
    except (OSError, AttributeError):  # no SO_PEERCRED (not Linux): the socket's 0600 mode alone
        return True
    return uid == os.getuid()


def _receive(connection) -> bytes | None:  # noqa: ANN001
    """The whole request, or None when it is larger than any the command sends or does not end in time."""
    import time

    deadline = time.monotonic() + READ_TIMEOUT
    chunks, size = [], 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        connection.settimeout(left)
        chunk = connection.recv(1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_MESSAGE + HEADER_MAX:
            return None


def _say_if_stale(data: str) -> None:
    """A line on standard error (the session's journal) when the model was counted with another version of the
    tokenizer than the one reading mail now, or does not record it: it still judges, a little less well. Said once,
    at the start; the verdicts themselves say nothing of it."""
    from spamfilter import store, tokens

    try:
        table = store.Table(os.path.join(data, store.NAME))
    except store.ModelError:
        return
    table.close()
    if str(table.tokens_version) != str(tokens.VERSION):
        counted = (f"version {table.tokens_version}" if table.tokens_version is not None
                   else "an unrecorded version")
        print(f"note: the model was counted with {counted} of the tokenizer, and mail is read by version "
              f"{tokens.VERSION}: it still judges, a little less well, until it is trained again (gateway spam "
              "train)", file=sys.stderr, flush=True)


def serve(data: str) -> int:
    """Listen on `<data>/classify.sock` until SIGTERM or SIGINT; the exit code (3 when it cannot listen)."""
    import signal
    import socket
    import stat
    import threading

    data = os.path.abspath(data)  # before the chdir below
    if not os.path.isdir(data):
        print(f"error: {data} does not exist: train the filter first (gateway spam train)", file=sys.stderr)
        return ERROR
    path = os.path.join(data, SOCKET)
    os.chdir(data)  # bound by its name in its folder: AF_UNIX paths stop at 107 bytes
    name = SOCKET if len(os.fsencode(path)) > SOCKET_PATH_MAX else path
    if os.path.lexists(SOCKET):
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.settimeout(1.0)
            probe.connect(name)
            print(f"error: a classifier already listens on {path}", file=sys.stderr)
            return ERROR
        except OSError:  # nobody listens: a socket left by one that was killed
            if not stat.S_ISSOCK(os.lstat(SOCKET).st_mode):
                print(f"error: {path} exists and is not a socket: move it away", file=sys.stderr)
                return ERROR
            os.unlink(SOCKET)
        finally:
            probe.close()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mask = os.umask(0o177)
    try:
        listener.bind(name)
    finally:
        os.umask(mask)
    os.chmod(SOCKET, 0o600)
    bound = os.lstat(SOCKET).st_ino
    listener.listen(64)
    places = threading.BoundedSemaphore(AT_ONCE)

    def handle(connection) -> None:  # noqa: ANN001
        try:
            if not _peer_is_me(connection) or not places.acquire(timeout=WAIT):
                return
            try:
                request = _receive(connection)
                if request is not None:
                    connection.settimeout(READ_TIMEOUT)
                    connection.sendall(answer(request, data))
            finally:
                places.release()
        except OSError:  # the command went away: nothing to answer
            pass
        finally:
            connection.close()

    def stop(_signal: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    print(f"listening on {path}", file=sys.stderr, flush=True)
    _say_if_stale(data)
    try:
        while True:
            connection, _address = listener.accept()
            threading.Thread(target=handle, args=(connection,), daemon=True).start()
    except KeyboardInterrupt:
        return 0
    finally:
        listener.close()
        try:
            if os.lstat(SOCKET).st_ino == bound:  # still ours, not a later classifier's
                os.unlink(SOCKET)
        except OSError:
            pass
