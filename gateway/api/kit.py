"""What every plugin wrote for itself: a count with its noun, the "left out" sentence, and a memo kept per consent gate.

(Running blocking work off the event loop is the core's job: it runs a plain ``def`` tool in a worker thread.)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def plural(count: int, noun: str, many: str | None = None) -> str:
    """The count and its noun, agreeing: ``plural(1, "line")`` is "1 line", ``plural(3, "entry", "entries")`` "3 entries"."""
    return f"{count:,} {noun if count == 1 else (many or noun + 's')}"


def left_out_sentence(count: int, what: str, plural: str | None = None) -> str:
    """The line that says how many items the gate kept back, never which: "" when none was.

    ``left_out_sentence(3, "session")`` is "3 sessions left out: their projects are closed to AI agents."
    """
    if not count:
        return ""
    noun = what if count == 1 else (plural or f"{what}s")
    return f"{count} {noun} left out: their projects are closed to AI agents."


class GateMemo(Generic[T]):
    """Something worked out from the consent gate alone, kept for as long as the gate is the same.

    A gate is a value (the manifest and ``outside_projects``): equal gates give equal answers, so what a plugin
    derives from one (the owners of each app, the closed working directories) is kept per gate, with an
    optional key of the plugin's own (a store's file and its counts). ``memo.get(ctx.gate, compute, key)``
    runs ``compute()`` the first time and gives the same value after; ``memo.of(ctx.gate)`` does the same with
    the ``make`` given at creation (a dict to fill, say). The last ``gates`` (gate, key) pairs are kept; an
    unhashable gate or key gets a fresh value each time. Safe from several threads.
    """

    def __init__(self, make: Callable[[], T] | None = None, *, gates: int = 8) -> None:
        self.make = make
        self.gates = gates
        self._values: OrderedDict[Any, T] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, gate: Hashable, key: Hashable = None) -> T:
        if self.make is None:
            raise TypeError("GateMemo.of needs the memo made with make=...; or call get(gate, compute)")
        return self.get(gate, self.make, key)

    def get(self, gate: Hashable, compute: Callable[[], T], key: Hashable = None) -> T:
        slot = (gate, key)
        try:
            hash(slot)
        except TypeError:
            return compute()
        with self._lock:
            if slot in self._values:
                self._values.move_to_end(slot)
                return self._values[slot]
        value = compute()  # outside the lock: it may be slow, and two threads computing it once each is harmless
        with self._lock:
            value = self._values.setdefault(slot, value)
            while len(self._values) > self.gates:
                self._values.popitem(last=False)
            return value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
