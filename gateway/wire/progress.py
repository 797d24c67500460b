"""Progress of one call told to the host that asked for it: `notifications/progress` against the request's token.

A plugin reports through `Context.progress` (from any thread); this keeps each report only if it goes forward,
masks its message, and sends at most one every `MIN_INTERVAL` seconds (the latest value wins, so a loop that reports
each step costs nothing), then the last one before the call's answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio

from gateway.api.context import reporting_progress
from gateway.engine.log import get_logger
from gateway.privacy import clip

log = get_logger("gateway.wire.progress")

MIN_INTERVAL = 0.1  # seconds between two notifications of one call: ten a second at most
MESSAGE_LIMIT = 200  # characters of a progress message, after masking

Send = Callable[[float, "float | None", "str | None"], Awaitable[Any]]


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


class Progress:
    """The reports of one call, bounded in rate and in order, waiting for the wire to send them."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.loop = asyncio.get_running_loop()
        self.lock = threading.Lock()
        self.wake = asyncio.Event()
        self.last: float | None = None  # the last value accepted: a report must go above it
        self.pending: tuple[float, float | None, str | None] | None = None
        self.closed = False
        self.sent_at = 0.0
        self.sent = 0

    def report(self, done: Any, total: Any = None, message: Any = None) -> None:
        """`Context.progress` lands here, on the loop or on a worker thread."""
        value, whole = _number(done), _number(total) if total is not None else None
        if value is None or (total is not None and whole is None):
            return  # not a number: nothing a host could read (a plugin's slip is not the call's failure)
        said = clip(str(message), MESSAGE_LIMIT) if message else None
        with self.lock:
            if self.closed or (self.last is not None and value <= self.last):
                return
            self.last = value
            self.pending = (value, whole, said or None)
        with contextlib.suppress(RuntimeError):  # the loop is gone: the call ended long ago
            self.loop.call_soon_threadsafe(self.wake.set)

    def _take(self) -> tuple[float, float | None, str | None] | None:
        with self.lock:
            item, self.pending = self.pending, None
        return item

    async def _spaced(self) -> None:
        wait = self.sent_at + MIN_INTERVAL - time.monotonic()
        if wait > 0:
            await anyio.sleep(wait)

    async def _send(self, item: tuple[float, float | None, str | None]) -> None:
        try:
            with anyio.CancelScope(shield=True):  # a notification begun is finished, not cut by the call's end
                await self.send(*item)
        except Exception as error:  # the host went away: the call still answers (or ends) on its own
            log.info("progress not sent", error=type(error).__name__)
        self.sent_at = time.monotonic()
        self.sent += 1

    async def pump(self) -> None:
        """Send what is reported, one at a time and spaced, until cancelled (a report taken only once it can
        leave, so that a cancelled wait leaves it for `close`)."""
        while True:
            await self.wake.wait()
            self.wake.clear()
            await self._spaced()
            item = self._take()
            if item is not None:
                await self._send(item)

    async def close(self) -> None:
        """No more reports; the last one not yet sent leaves now (before the answer)."""
        with self.lock:
            self.closed = True
        if self.pending is not None:
            await self._spaced()
            item = self._take()
            if item is not None:
                await self._send(item)


@asynccontextmanager
async def progress_of_call(send: Send | None) -> AsyncIterator[Progress | None]:
    """Around one call: with `send` (the host gave a progress token), the call's `Context.progress` reports leave
    through it while the block runs, the last before the block ends; without, nothing is reported or sent."""
    if send is None:
        yield None
        return
    progress = Progress(send)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(progress.pump)
        try:
            with reporting_progress(progress.report):
                yield progress
        finally:
            tasks.cancel_scope.cancel()
    await progress.close()
