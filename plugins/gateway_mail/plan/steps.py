"""A bound on the steps of a search that cannot be stopped from outside: dateutil walking a repeat rule.

dateutil's rrule checks UNTIL only on a date its filters let through, so a rule whose filters never match (the 30th
of February, every second) walks day by day up to the year 9999: 15 to 45 seconds on this machine, holding a
worker for that long, whatever the call's deadline. The walk is pure Python, so it is bounded here by the number of
lines it runs: a trace function of this thread only counts them and, past the budget, raises `TooManySteps` inside
the walk, which ends it. Counting lines, not seconds, keeps the answer the same on a loaded machine.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

# About half a second of dateutil's work here: some twenty thousand periods of a rule (sixty years of days), far
# more than any rule a person writes needs between one occurrence and the next.
BUDGET = 1_000_000


class TooManySteps(Exception):
    """The search ran past its budget of steps."""


CHECK_EVERY = 1 << 16  # lines between two looks at `stop`


def bounded(work: Callable[[], T], budget: int = BUDGET, stop: Callable[[], bool] | None = None) -> T:
    """`work()`, stopped by TooManySteps once it has run `budget` lines of Python, or once `stop()` (looked at every
    CHECK_EVERY lines: a call's deadline) says so. This thread's trace function is put back after, so a debugger or
    coverage tool in use goes on."""
    left = budget

    def local(_frame: Any, _event: str, _arg: Any) -> Any:
        nonlocal left
        left -= 1
        if left < 0 or (stop is not None and left % CHECK_EVERY == 0 and stop()):
            raise TooManySteps
        return local

    def calls(_frame: Any, _event: str, _arg: Any) -> Any:
        return local

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        return work()
    finally:
        sys.settrace(previous)
