"""The stdio transport's descriptors: taking fd 0 and 1 away from stray prints, and reading and writing them.

What is below JSON-RPC: which descriptors can be watched, non-blocking writes to a pipe or a socket, a worker
thread for what cannot be watched, and giving the descriptors back as they were. `gateway.wire.transport` frames
the lines on top of these.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import select
import stat
import sys
import threading
import time
from contextlib import suppress
from functools import partial
from queue import SimpleQueue
from typing import Any, BinaryIO, cast

import anyio
import anyio.to_thread

from gateway.engine.log import get_logger
from gateway.wire.seams import loop_selector

log = get_logger()

# Large reads keep the syscall count per message low when a client pipelines; a pipe rarely holds more.
READ_CHUNK = 256 * 1024
# The writer thread holds at most about this much before a batched write waits for it (a client slow to read).
_HIGH_WATER = 64 * 1024
# A lone answer held for the event loop's sleep is written at the latest once the loop has gone this long without
# sleeping (a loop busy turn after turn).
_HOLD_SECONDS = 0.0005
# A write of a held answer that took longer than this (wall time) was taken off its core: the client it woke took the
# core, and the loop's thread waited in the run queue before it could go to sleep. On a machine that busy the writer
# thread writes lone answers instead, for _BUSY_SECONDS, as the loop's thread is then asleep before the client runs.
_PREEMPTED_SECONDS = 0.0002
_BUSY_SECONDS = 1.0

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


class _Writer:
    """A thread of its own that writes what it is handed to a pipe or socket, in order.

    Why a thread: a call's answer written by the event loop's thread wakes the client, which on a busy machine
    often takes that thread's core at once; the loop's thread, still busy with the call's last steps, then waits in
    the run queue, and the client's next request finds it there rather than asleep, so it waits for its turn instead
    of being woken. A thread that does nothing but write goes back to sleep as soon as it has written, and the loop's
    thread is asleep, waiting on its input, when the next request comes. (The SDK's own stdio transport writes from a
    worker thread too.) A lone answer is written by the loop's thread itself as it goes to sleep, which has the same
    effect without this thread's wake-up (`Sink.hold_until_sleep`); this thread writes batches, and what a pipe
    that is full does not take.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.broken = False
        self.pending = 0  # bytes handed over and not written yet
        self._queue: SimpleQueue[bytes | None] = SimpleQueue()
        self._drained = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="gateway-stdout", daemon=True)
        self._thread.start()

    def put(self, data: bytes) -> None:
        with self._drained:
            self.pending += len(data)
        self._queue.put(data)

    def _run(self) -> None:
        while (data := self._queue.get()) is not None:
            if not self.broken:
                self._write(data)
            with self._drained:
                self.pending -= len(data)
                self._drained.notify_all()

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view and not self.broken:
                try:
                    view = view[os.write(self.fd, view):]
                except BlockingIOError:
                    # The descriptor is non-blocking: wait until the client reads, looking now and then whether the
                    # transport gave up on it.
                    select.select([], [self.fd], [], 0.5)
        except (OSError, ValueError) as exc:
            # The client has gone: what comes next is dropped, never left waiting.
            self.broken = True
            log.debug("stdio_write_failed", error=type(exc).__name__)

    def wait_drained(self, at_most: int, timeout: float | None = None) -> bool:
        """Block until at most `at_most` bytes are still to write (False when `timeout` passed first)."""
        with self._drained:
            return self._drained.wait_for(lambda: self.pending <= at_most or self.broken, timeout)

    def stop(self) -> None:
        """End the thread, dropping what it still holds (within half a second when it waits on the client)."""
        self.broken = True
        self._queue.put(None)
        self._thread.join(1.0)


class Sink:
    """Whole buffers to the output, in order: a writer thread of its own on a pipe or socket (non-blocking, so that a
    client that stops reading holds only that thread), a worker thread per write otherwise."""

    def __init__(self, stdout: int | BinaryIO) -> None:
        self.fd = fd_of(stdout)
        self.file = None if self.fd is not None else stdout
        self.broken = False
        self.saved_flags: int | None = None
        self._writer: _Writer | None = None
        self._held: list[bytes] = []  # lone answers to write when the event loop next goes to sleep
        self._held_since = 0.0
        self._threaded_until = 0.0  # lone answers go to the writer thread until then (a busy machine)
        self._unhook: Any = None
        if self.fd is not None:
            if not isinstance(stdout, int):
                # Whatever the caller's file object still buffers must precede our frames.
                with suppress(Exception):
                    stdout.flush()
            mode = os.fstat(self.fd).st_mode
            if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
                self.saved_flags = fcntl.fcntl(self.fd, fcntl.F_GETFL)
                fcntl.fcntl(self.fd, fcntl.F_SETFL, self.saved_flags | os.O_NONBLOCK)
                self._writer = _Writer(self.fd)

    @property
    def idle(self) -> bool:
        """Whether `write_now` may be used: a pipe or socket, with nothing still to write."""
        return self._writer is not None and not self._writer.pending

    def hold_until_sleep(self) -> bool:
        """Write lone answers (`write_now`) from the event loop's own thread just before it goes to sleep waiting
        for input, rather than through the writer thread. True when set up: an asyncio loop runs, the output is a
        pipe or socket, and the loop's selector is there (`gateway.wire.seams.loop_selector`).

        Why then: written at once, a lone answer wakes the client while the loop's thread still has the call's last
        steps to finish, and on a busy machine the client often takes its core, leaving the loop's thread in the run
        queue when the next request comes; handed to the writer thread, it costs a wake-up of that thread and a
        switch to it, which then waits for the interpreter's lock until the loop's thread sleeps anyway. Written as
        the loop goes to sleep, it leaves when it would have left through the thread, without the thread. But the
        write itself wakes the client, which on a busy machine may take the core before the loop's thread reaches
        its sleep: a write seen to take that long (_PREEMPTED_SECONDS) hands lone answers to the writer thread again
        for _BUSY_SECONDS."""
        if self._writer is None or self._unhook is not None:
            return self._unhook is not None
        try:
            selector = loop_selector(asyncio.get_running_loop())
        except RuntimeError:
            return False
        if selector is None:
            return False
        real = selector.select

        def select(timeout: float | None = None) -> Any:
            # The loop asks the selector before every turn: with a timeout of 0 when it has work ready (no sleep).
            if self._held and (timeout != 0 or time.perf_counter() - self._held_since > _HOLD_SECONDS):
                self.flush_held()
            return real(timeout)

        selector.select = select
        self._unhook = partial(_unhook, selector, select)
        return True

    def write_now(self, data: bytes) -> None:
        """Write `data` without waiting (only when `idle`: what the writer thread holds stays small): as the event
        loop next goes to sleep when `hold_until_sleep` is set up, else through the writer thread."""
        assert self._writer is not None
        if self._unhook is None:
            self._writer.put(data)
            return
        if not self._held:
            now = time.perf_counter()
            if now < self._threaded_until:
                self._writer.put(data)
                return
            self._held_since = now
        self._held.append(data)

    def flush_held(self) -> None:
        """Write the answers held for the loop's sleep, as far as the pipe takes them at once (the descriptor is
        non-blocking; a write of a few hundred bytes to a pipe with room never waits); the rest to the writer
        thread, after which order holds."""
        writer = self._writer
        if not self._held or writer is None:
            self._held.clear()
            return
        data = self._held[0] if len(self._held) == 1 else b"".join(self._held)
        self._held.clear()
        if not writer.pending and not writer.broken:
            began = time.perf_counter()
            try:
                written = os.write(writer.fd, data)
            except BlockingIOError:
                written = 0
            except (OSError, ValueError) as exc:
                writer.broken = True
                log.debug("stdio_write_failed", error=type(exc).__name__)
                return
            ended = time.perf_counter()
            if ended - began > _PREEMPTED_SECONDS:
                self._threaded_until = ended + _BUSY_SECONDS
            if written == len(data):
                return
            data = data[written:]
        writer.put(data)

    async def write(self, data: bytes) -> None:
        """Write `data` after everything before it; returns once little enough is left to write (back-pressure)."""
        self.flush_held()
        if self._writer is not None:
            self._writer.put(data)
            if self._writer.pending > _HIGH_WATER:
                await anyio.to_thread.run_sync(self._writer.wait_drained, _HIGH_WATER, abandon_on_cancel=True)
            return
        if self.broken:
            return
        try:
            if self.fd is not None:
                await anyio.to_thread.run_sync(_write_all, self.fd, data)
            else:
                await anyio.to_thread.run_sync(_write_flush, self.file, data)
        except (OSError, ValueError) as exc:
            # The client has gone: keep consuming answers so the server never blocks, but drop them.
            self.broken = True
            log.debug("stdio_write_failed", error=type(exc).__name__)

    async def drain(self, timeout: float) -> None:
        """Wait until the writer thread has written what it holds, for at most `timeout` seconds."""
        self.flush_held()
        if self._writer is not None and self._writer.pending:
            await anyio.to_thread.run_sync(partial(self._writer.wait_drained, 0, timeout), abandon_on_cancel=True)

    def restore(self) -> None:
        """Stop the writer thread (what it still holds is dropped) and give the descriptor its flags back."""
        self.flush_held()
        if self._unhook is not None:
            self._unhook()
            self._unhook = None
        if self._writer is not None:
            self._writer.stop()
            self._writer = None
        if self.saved_flags is not None and self.fd is not None:
            with suppress(OSError):
                fcntl.fcntl(self.fd, fcntl.F_SETFL, self.saved_flags)


def _unhook(selector: Any, select: Any) -> None:
    if selector.__dict__.get("select") is select:
        del selector.select


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _write_flush(file: Any, data: bytes) -> None:
    file.write(data)
    file.flush()
