"""Every call bounded in time: synchronous plugin work runs on a few worker threads, under a deadline that
SQLite honours through its progress handler.

The event loop only waits on a worker, so a ping (or another host's call) is answered while a tool runs. A
worker still busy when its call's deadline passes keeps its slot until it returns: the number of threads stays
bounded however many calls time out, and SQLite work given `Deadline.interrupting` stops at the deadline.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

import anyio
from attrs import frozen

if TYPE_CHECKING:
    import sqlite3

__all__ = ["DEFAULT_CALL_TIMEOUT", "WORKERS", "Deadline", "DeadlinePassed", "run_in_worker"]

T = TypeVar("T")

# Seconds a call may take when `[gateway] call_timeout` does not say.
DEFAULT_CALL_TIMEOUT = 30.0
# Synchronous plugin functions running at once; more calls wait for a worker (within their own deadline).
WORKERS = 8
# SQLite virtual-machine steps between two looks at the clock: about a millisecond of work, a negligible cost.
_PROGRESS_STEPS = 10_000

_executor: ThreadPoolExecutor | None = None


class DeadlinePassed(Exception):
    """Raised by `Deadline.check()` in plugin code that loops on its own (the gateway answers for it)."""


@frozen
class Deadline:
    """The moment (time.monotonic) a call must be done by; `seconds` is the budget it was given."""

    at: float
    seconds: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds, seconds)

    @classmethod
    def never(cls) -> Deadline:
        return cls(math.inf, math.inf)

    def left(self) -> float:
        """Seconds left (0 once passed; inf for a call without deadline)."""
        return max(0.0, self.at - time.monotonic())

    def passed(self) -> bool:
        return time.monotonic() >= self.at

    def check(self) -> None:
        """For a plugin's own loops: stop here once the deadline has passed."""
        if self.passed():
            raise DeadlinePassed(f"the call took longer than {self.seconds:g} s")

    @contextmanager
    def interrupting(self, connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        """SQLite work on `connection` inside the block stops with OperationalError('interrupted') at the deadline.

        The handler is removed on the way out, so a connection kept between calls carries no old deadline.
        """
        if math.isinf(self.at):
            yield connection
            return
        at = self.at
        connection.set_progress_handler(lambda: 1 if time.monotonic() >= at else 0, _PROGRESS_STEPS)
        try:
            yield connection
        finally:
            connection.set_progress_handler(None, _PROGRESS_STEPS)

    def sentence(self) -> str:
        return (
            f"The call took longer than {self.seconds:g} s and was stopped. Narrow it (fewer or more precise "
            "words, a shorter time range, a smaller limit) and call again."
        )


def _workers() -> ThreadPoolExecutor:
    # One pool for the process, whatever event loop calls: a test may run several loops one after another.
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="gateway-worker")
    return _executor


async def run_in_worker(function: Callable[[], T]) -> T:
    """Run `function` on a worker thread and wait for it; cancelling the wait leaves the worker to finish.

    A call not yet started when the wait is cancelled never starts. The caller's context variables (structlog's
    bound values) go with it. A `GeneratorExit` the function raises (a plugin's own subclass) is raised here as
    it is: the event loop would throw it into the waiting coroutine, which Python takes for closing it.
    """
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    future = loop.run_in_executor(_workers(), context.run, _carrying, function)
    try:
        outcome = await future
    except anyio.get_cancelled_exc_class():
        future.cancel()
        raise
    if isinstance(outcome, _Carried):
        raise outcome.error
    return outcome


class _Carried:
    """A GeneratorExit raised on a worker, carried to the waiting coroutine as a value (see `run_in_worker`)."""

    __slots__ = ("error",)

    def __init__(self, error: GeneratorExit) -> None:
        self.error = error


def _carrying(function: Callable[[], T]) -> T | _Carried:
    try:
        return function()
    except GeneratorExit as error:
        return _Carried(error)

