"""The stdio transport's descriptors: taking fd 0 and 1 away from stray prints, and reading and writing them.

What is below JSON-RPC: which descriptors can be watched, non-blocking writes to a pipe or a socket, a worker
thread for what cannot be watched, and giving the descriptors back as they were. `gateway.wire.transport` frames
the lines on top of these.
"""

from __future__ import annotations

import fcntl
import os
import stat
import sys
import threading
from contextlib import suppress
from functools import partial
from typing import Any, BinaryIO, cast

import anyio
import anyio.to_thread
import structlog

log = structlog.get_logger()

# Large reads keep the syscall count per message low when a client pipelines; a pipe rarely holds more.
READ_CHUNK = 256 * 1024

_claimed: set[int] = set()
_claim_lock = threading.Lock()


def fd_of(stream: int | BinaryIO) -> int | None:
    if isinstance(stream, int):
        return stream
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def watchable(fd: int) -> bool:
    """Whether readiness can be waited on: pipes, sockets and terminals, not files or /dev/null."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


def claim(fd: int) -> int:
    """Point fd 0 or 1 away from the wire and return a private duplicate that carries the wire.

    Handlers and the children they start then read EOF on fd 0, and their stray prints on fd 1 land
    on stderr instead of corrupting the protocol.
    """
    with _claim_lock:
        if fd in _claimed:
            raise RuntimeError(f"fd {fd} already serves a stdio transport in this process")
        _claimed.add(fd)
    try:
        if fd == 1 and sys.stdout is not None:
            # What was printed before serving started was meant for the real stdout.
            with suppress(Exception):
                sys.stdout.flush()
        private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
        try:
            diversion = os.open(os.devnull, os.O_RDONLY) if fd == 0 else os.dup(2)
            try:
                os.dup2(diversion, fd)
            finally:
                os.close(diversion)
        except BaseException:
            os.close(private)
            raise
    except BaseException:
        with _claim_lock:
            _claimed.discard(fd)
        raise
    return private


def release(fd: int, private: int, close_private: bool) -> None:
    try:
        if fd == 1 and sys.stdout is not None:
            # Stray output buffered while serving belongs on stderr, not on the restored wire.
            with suppress(Exception):
                sys.stdout.flush()
        os.dup2(private, fd)
    finally:
        if close_private:
            os.close(private)
        with _claim_lock:
            _claimed.discard(fd)


class Source:
    """Chunks from the input: readiness plus one read where it can be watched, a worker thread otherwise."""

    def __init__(self, stdin: int | BinaryIO, chunk: int = READ_CHUNK) -> None:
        self.chunk = chunk
        self.fd = fd_of(stdin)
        self.file = None if self.fd is not None else stdin
        self.watch = self.fd is not None and watchable(self.fd)
        # True while a worker thread may still be blocked reading: the descriptor must then outlive us.
        self.thread_busy = False

    async def read(self) -> bytes:
        while self.watch:
            assert self.fd is not None
            try:
                await anyio.wait_readable(self.fd)
            except (OSError, NotImplementedError):
                # A terminal the event loop cannot watch: fall back to the thread.
                self.watch = False
                break
            try:
                return os.read(self.fd, self.chunk)
            except BlockingIOError:
                # Another reader of the same description won the race; wait again.
                continue
            except OSError as exc:
                log.debug("stdio_read_failed", errno=exc.errno)
                return b""
        if self.fd is not None:
            reader: Any = partial(os.read, self.fd)
        else:
            reader = getattr(self.file, "read1", None) or cast(BinaryIO, self.file).read
        # Left set if we are cancelled mid-read: the abandoned thread may still be inside the read.
        self.thread_busy = True
        try:
            chunk = bytes(await anyio.to_thread.run_sync(reader, self.chunk, abandon_on_cancel=True))
        except OSError as exc:
            log.debug("stdio_read_failed", errno=exc.errno)
            chunk = b""
        self.thread_busy = False
        return chunk


class Sink:
    """Whole buffers to the output: non-blocking writes on a pipe or socket, a worker thread otherwise."""

    def __init__(self, stdout: int | BinaryIO) -> None:
        self.fd = fd_of(stdout)
        self.file = None if self.fd is not None else stdout
        self.broken = False
        self.saved_flags: int | None = None
        if self.fd is not None:
            if not isinstance(stdout, int):
                # Whatever the caller's file object still buffers must precede our frames.
                with suppress(Exception):
                    stdout.flush()
            mode = os.fstat(self.fd).st_mode
            if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
                # Non-blocking, so a client slow to read stalls only this task, not the event loop.
                self.saved_flags = fcntl.fcntl(self.fd, fcntl.F_GETFL)
                fcntl.fcntl(self.fd, fcntl.F_SETFL, self.saved_flags | os.O_NONBLOCK)

    def restore(self) -> None:
        if self.saved_flags is not None and self.fd is not None:
            with suppress(OSError):
                fcntl.fcntl(self.fd, fcntl.F_SETFL, self.saved_flags)

    @property
    def never_waits(self) -> bool:
        """Whether `write_now` can be used: a non-blocking pipe or socket, or a client already gone."""
        return self.saved_flags is not None or self.broken

    def write_now(self, data: bytes) -> int:
        """Write what the pipe or socket takes at once, without waiting; how many bytes are gone (all of them when the
        client has gone: those are dropped). Only where `never_waits`."""
        if self.broken:
            return len(data)
        assert self.fd is not None and self.saved_flags is not None
        try:
            return os.write(self.fd, data)
        except BlockingIOError:
            return 0
        except OSError as exc:
            self.broken = True
            log.debug("stdio_write_failed", error=type(exc).__name__)
            return len(data)

    async def write(self, data: bytes) -> None:
        if self.broken:
            return
        try:
            if self.saved_flags is not None:
                assert self.fd is not None
                view = memoryview(data)
                while view:
                    try:
                        view = view[os.write(self.fd, view) :]
                    except BlockingIOError:
                        await anyio.wait_writable(self.fd)
            elif self.fd is not None:
                await anyio.to_thread.run_sync(_write_all, self.fd, data)
            else:
                await anyio.to_thread.run_sync(_write_flush, self.file, data)
        except (OSError, ValueError) as exc:
            # The client has gone: keep consuming answers so the server never blocks, but drop them.
            self.broken = True
            log.debug("stdio_write_failed", error=type(exc).__name__)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _write_flush(file: Any, data: bytes) -> None:
    file.write(data)
    file.flush()
