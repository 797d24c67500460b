"""What every plugin wrote for itself: a count with its noun, the "left out" sentence, and a memo kept per consent gate.

(Running blocking work off the event loop is the core's job: it runs a plain ``def`` tool in a worker thread.)
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable

T = TypeVar("T")


def usable_cores(limit: int | None = None) -> int:
    """The cores this process may run on (its CPU affinity, so a `taskset` or a container's share is honoured;
    the machine's count where there is none), at least 1 and at most `limit`: the size of a pool of workers."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, limit) if limit else cores)


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


def open_store(folder: Path, name: str, schema: str, stamp: str | None = None, *, emptied: Iterable[str] = (),
               fts: Iterable[str] = (), on_emptied: Callable[[sqlite3.Connection], None] | None = None,
               ) -> sqlite3.Connection:
    """A plugin's own SQLite store, `folder/name` (its cache folder, made when missing): usable from any thread,
    rows as `sqlite3.Row`, WAL, and `schema` run (``CREATE ... IF NOT EXISTS``, with a ``meta(key, value)``
    table). With `stamp` (what its rows were read with: a schema and masks version, a setting they depend on), the
    store is emptied when the stamp changed: each `emptied` table's rows deleted, each `fts` index cleared, and
    `on_emptied(connection)` called, in one transaction, the new stamp recorded."""
    import sqlite3

    folder.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(folder / name, timeout=30, check_same_thread=False)
    connection.row_factory = sqlite3.Row
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.executescript(schema)
    if stamp is None:
        return connection
    row = connection.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
    if row is None or row[0] != stamp:
        with connection:
            for table in emptied:
                connection.execute(f"DELETE FROM {table}")  # noqa: S608 (the plugin's own table names)
            for index in fts:
                connection.execute(f"INSERT INTO {index}({index}) VALUES('delete-all')")  # noqa: S608
            if on_emptied is not None:
                on_emptied(connection)
            connection.execute("INSERT OR REPLACE INTO meta VALUES('version', ?)", (stamp,))
    return connection
