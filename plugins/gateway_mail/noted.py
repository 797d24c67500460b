"""A look at a store's files (a stat, a read of what changes when they change) that the kernel's file notifications
stand in for while the store's folder has been quiet: the core's `Changes`, as the mail index's no-change look uses it.

    noted = Noted((path, Path(f"{path}-wal")))
    value = noted.seen()                  # what the last look found, when nothing happened to the files since
    if value is None:
        value = noted.look(read)          # the look itself (read() stats or reads the files), then trusted

Exact as `Changes` is: `look` takes in the events so far (`begin`) before `read` runs, so a write made before a call
either is seen by that read or leaves an event that makes the next `seen()` None. Trusted only where every edit
of the files must make an event in their folder: the folder reached without links, each file absent or a plain
file of one name (an edit through a link's target or a hard link's other name, elsewhere, makes none); else every
call looks, as without notifications. Never for longer than `Changes`' recheck time.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from gateway import Changes, files_folders


class Noted:
    """The files of one store and what the last look at them found, while notifications may stand in for it."""

    def __init__(self, files: tuple[Path, ...]) -> None:
        self.files = files
        self.changes = Changes()
        self._seen: Any = None

    def seen(self) -> Any:
        """What the last trusted look found, when no event came for the files since; else None."""
        if self._seen is not None and self.changes.quiet():
            return self._seen
        return None

    def look(self, read: Callable[[], Any], trusted: Callable[[Any], bool] = lambda _value: True) -> Any:
        """`read()` (the look itself), its value kept for `seen` when `trusted(value)` and the files can be watched
        so (see the module's docstring). `read` returns None for "nothing to keep"."""
        self._seen = None
        token = self.changes.begin()  # before the look: a write during it leaves an event for the next call
        value = read()
        if value is not None and trusted(value):
            folders = files_folders(self.files)
            if folders is not None and self.changes.settle(token, folders):
                self._seen = value
        return value

    def close(self) -> None:
        self._seen = None
        self.changes.close()


def noted_in(kept: dict[str, Noted], files: tuple[Path, ...], at_most: int = 8) -> Noted:
    """The `Noted` of `files` in `kept` (keyed by the first file), made when missing; at most `at_most` kept."""
    key = str(files[0])
    noted = kept.get(key)
    if noted is None:
        if len(kept) >= at_most:
            for old in kept.values():
                old.close()
            kept.clear()
        noted = kept[key] = Noted(files)
    return noted
