"""Whether anything happened in a few folders since a plugin last looked, from the kernel's file notifications.

A refresh's ``stale(ctx)`` asks :meth:`Changes.quiet` before stat'ing its sources: when the folders it watches got
no event since its last stat pass, nothing changed and no stat is needed (one non-blocking read of an inotify
descriptor, a few microseconds). Otherwise it does its stat pass as it would without notifications, the same way::

    changes = Changes()                      # one per plugin and store, kept for the process's life

    def stale(ctx):
        if changes.quiet():
            return False                     # no event since the last settle: not a single stat
        token = changes.begin()              # takes in what came so far: BEFORE the stat pass
        behind = stat_pass(ctx)              # the stat-based check, exact on its own
        if not behind:
            changes.settle(token, watched_folders(ctx))
        return behind

and the refresh does ``begin()``, its stat pass and import, then ``settle(token, folders)``. Exactness: the kernel
queues an event when a write happens, so a write made before a call either is seen by a stat pass that began after
``begin()``, or leaves an event that makes the next ``quiet()`` false. ``settle`` trusts the folders only when no
event came and no other ``begin`` happened since its token, and every folder is watched from before that stat
pass (a folder watched just now is trusted from the next stat pass on, as a file written between the walk that
found it and its watch left no event). After ``begin()``, ``heard()`` names the paths events named since the last
settle, or None when that is not known: a stat pass may then stat just those (one changed file, not every source).

Events watched in each folder (a file is watched through its folder, filtered by name): ``IN_MODIFY`` (appended or
truncated in place), ``IN_ATTRIB`` (its time set, ``touch``), ``IN_CREATE`` (a new file or folder), ``IN_MOVED_TO``
(an atomic replace: written aside, renamed over), ``IN_MOVED_FROM`` and ``IN_DELETE`` (gone), and on the folder
itself ``IN_DELETE_SELF``/``IN_MOVE_SELF`` (with the kernel's ``IN_IGNORED``: its watch is gone, it is watched
again after the next stat pass). Opens and reads are not watched: the importers' own reads make no event.

Never "nothing changed" on a doubt: a queue overflow (``IN_Q_OVERFLOW``), a watch that cannot be added (``ENOSPC``,
the per-user limit), no inotify instance (``EMFILE``, not Linux, ``inotify_simple`` missing, or
``GATEWAY_FILE_NOTIFICATIONS=0`` in the environment) each make ``quiet()`` false, so the plugin stats as without
notifications. Besides, ``quiet()`` is false once every ``recheck_s`` seconds (a stat pass then), for what inotify
does not see: a network file system written from another machine, a transcript that is a link to a file elsewhere.

One inotify descriptor serves the process (``IN_CLOEXEC``: not passed to programs run; a forked child drops its
copy and makes its own on first use); it is closed when the last :class:`Changes` is closed (a plugin's shutdown).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from gateway.engine.log import get_logger

log = get_logger("gateway.api.changes")

RECHECK_S = 10.0
DISABLE = "GATEWAY_FILE_NOTIFICATIONS"  # "0": stat as without notifications (a test, a file system that lies)

# IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF, and
# IN_ONLYDIR: a folder is what is watched (the kernel adds IN_IGNORED, IN_Q_OVERFLOW, IN_UNMOUNT of itself).
MASK = 0x2 | 0x4 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800 | 0x01000000
_OVERFLOW, _IGNORED = 0x4000, 0x8000

Names = frozenset[str] | None  # the entries of a folder that matter; None: all of them


class _Hub:
    """The process's one inotify instance and who hears each of its watches."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.inotify = None
        self.unavailable = ""  # why there is no instance ("" while none was tried)
        self.heard: dict[int, dict[Changes, dict[str, Names]]] = {}  # watch -> who, for which folders, which names
        self.users: set[Changes] = set()

    def instance(self):
        if self.inotify is None and not self.unavailable:
            if os.environ.get(DISABLE) == "0":
                self.unavailable = f"{DISABLE}=0"
            elif not sys.platform.startswith("linux"):
                self.unavailable = "not Linux"
            else:
                try:
                    from inotify_simple import INotify

                    self.inotify = INotify()  # not inheritable: IN_CLOEXEC
                except (ImportError, OSError) as error:  # EMFILE: the per-user number of instances reached
                    self.unavailable = f"no inotify: {error}"
            if self.unavailable:
                log.info("file notifications unavailable: refreshes stat their sources", why=self.unavailable)
        return self.inotify

    def pump(self) -> None:
        """Read every queued event (one ioctl when there is none) and tell whoever watches its folder."""
        if self.inotify is None:
            return
        with self.lock:
            inotify = self.inotify
            if inotify is None:  # closed meanwhile (the last watcher's shutdown)
                return
            try:
                events = inotify.read(timeout=0)
            except (OSError, ValueError) as error:  # the descriptor broke: nothing it said can be trusted any more
                self._drop(f"inotify read failed: {error}")
                return
            for event in events:
                if event.mask & _OVERFLOW:
                    for user in self.users:
                        user._moved(None)
                    continue
                for user, folders in list(self.heard.get(event.wd, {}).items()):
                    if event.mask & _IGNORED:  # the folder deleted or moved away: its watch is gone
                        user._lost(event.wd)
                    elif not event.name:  # the folder itself
                        user._moved(None)
                    else:
                        paths = [os.path.join(folder, event.name) for folder, names in folders.items()
                                 if names is None or event.name in names]
                        if paths:
                            user._moved(paths)
                if event.mask & _IGNORED:
                    self.heard.pop(event.wd, None)

    def _drop(self, why: str) -> None:
        if self.inotify is not None:
            with contextlib.suppress(OSError):
                self.inotify.close()
        self.inotify, self.unavailable, self.heard = None, why, {}
        for user in self.users:
            user._watches.clear()
            user._moved(None)

    def forget_after_fork(self) -> None:
        # The child holds a copy of the parent's descriptor: reading it would take the parent's events.
        if self.inotify is not None:
            with contextlib.suppress(OSError):
                self.inotify.close()  # the child's copy only: the parent's stays open
        self.lock = threading.RLock()
        self.inotify, self.unavailable, self.heard = None, "", {}
        for user in self.users:
            user._watches.clear()
            user._moved(None)


def toward(path: Path) -> tuple[str, frozenset[str]]:
    """The folder to watch for `path` (a file, or a folder not there yet): the nearest folder of it that exists, and
    the name in it that leads to `path`, for :meth:`Changes.settle` (stats the folders on the way)."""
    child, parent = path, path.parent
    while parent != parent.parent and not parent.is_dir():
        child, parent = parent, parent.parent
    return str(parent), frozenset({child.name})


def merged(folders: Iterable[tuple[str, Names]]) -> dict[str, Names]:
    """Several (folder, names) for :meth:`Changes.settle`, one entry a folder (None, all names, wins)."""
    found: dict[str, Names] = {}
    for folder, names in folders:
        known = found.get(folder, frozenset())
        found[folder] = None if names is None or known is None else known | names
    return found


def files_folders(files: Iterable[Path]) -> dict[str, Names] | None:
    """The folders to watch for `files` (stamped files whose stat notifications stand in for), merged for
    :meth:`Changes.settle`; None when an edit of one could make no event in them: a folder reached through a link,
    or a file that is a link, not a plain file, or a plain file with another name (a hard link edited under its
    other name elsewhere). Such files are stat'ed on every call. An absent file is watched for in its folder."""
    watched = []
    for path in files:
        folder, names = toward(path)
        if os.path.realpath(folder) != folder or not _alone_or_absent(path):
            return None
        watched.append((folder, names))
    return merged(watched)


def _alone_or_absent(path: Path) -> bool:
    """Whether `path` is absent, or a plain file with no other name."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_nlink == 1


_hub = _Hub()


def availability() -> str:
    """Why file notifications cannot serve this process ("" when they can), for `gateway doctor`."""
    with _hub.lock:
        _hub.instance()
        return _hub.unavailable


def watch_limit() -> int | None:
    """The kernel's per-user limit on watched folders (None when it cannot be read)."""
    try:
        return int(Path("/proc/sys/fs/inotify/max_user_watches").read_text().strip())
    except (OSError, ValueError):
        return None
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _hub.forget_after_fork())


class Changes:
    """A set of watched folders, and whether anything happened in them since the last stat pass that settled."""

    def __init__(self, recheck_s: float = RECHECK_S) -> None:
        self.recheck_s = recheck_s
        self._watches: dict[str, int] = {}  # folder -> watch descriptor
        self._names: dict[str, Names] = {}
        self._generation = 0  # moves on every event heard and every begin()
        self._settled = False
        self._heard: set[str] | None = None  # what events named since the last settle (None: not known)
        self._until = 0.0
        self._broken = ""  # why this one stats for good (a watch refused for lack of room)
        _hub.users.add(self)

    def quiet(self) -> bool:
        """True when nothing happened in the watched folders since the last settle: the sources need no stat."""
        if not self._settled or time.monotonic() > self._until:
            return False
        _hub.pump()
        return self._settled

    def begin(self) -> int:
        """Take in what happened so far; call it BEFORE the stat pass, and give its token to :meth:`settle`."""
        with _hub.lock:
            _hub.pump()
            self._generation += 1
            self._settled = False
            return self._generation

    def heard(self) -> frozenset[str] | None:
        """The paths that events named since the last settle, after :meth:`begin`: only these can have changed
        (a stat pass may stat just them). None when that is not known: never settled, an overflow, an event on a
        watched folder itself, a folder watched anew, the recheck time passed, no notifications."""
        with _hub.lock:
            if self._heard is None or time.monotonic() > self._until:
                return None
            return frozenset(self._heard)

    def settle(self, token: int, folders: Mapping[str, Names] | Iterable[str]) -> bool:
        """After a stat pass begun with `token` found the sources up to date (or the refresh imported what it
        found): watch exactly `folders` (a folder's path, and the names of its entries that matter or None for
        all), and trust :meth:`quiet` again when each was watched before that stat pass and nothing came since."""
        wanted = dict(folders) if isinstance(folders, Mapping) else dict.fromkeys(folders)
        with _hub.lock:
            inotify = _hub.instance()
            if inotify is None or self._broken:
                return False
            _hub.pump()
            added = False
            for folder in [f for f in self._watches if f not in wanted]:
                self._unwatch(folder)
            for folder, names in wanted.items():
                names = None if names is None else frozenset(names)
                if folder in self._watches:
                    if self._names.get(folder) != names:
                        self._names[folder] = names
                        _hub.heard[self._watches[folder]][self][folder] = names
                    continue
                try:
                    descriptor = inotify.add_watch(folder, MASK)
                except OSError as error:
                    if error.errno == errno.ENOSPC:  # fs.inotify.max_user_watches reached: stat for good
                        self._broken = "no room for more watches (fs.inotify.max_user_watches)"
                        log.warning("file notifications: too many watches, this refresh stats its sources",
                                    folders=len(wanted))
                        self._clear()
                    return False  # gone meanwhile, or not readable: the next stat pass says
                self._watches[folder], self._names[folder] = descriptor, names
                _hub.heard.setdefault(descriptor, {}).setdefault(self, {})[folder] = names
                added = True
                self._heard = None  # what happened in it before it was watched was not heard
            if added or token != self._generation:
                return False  # a new folder is trusted from the next stat pass; an event came meanwhile
            self._settled = True
            self._heard = set()
            self._until = time.monotonic() + self.recheck_s
            return True

    @property
    def watching(self) -> int:
        """How many folders are watched (0 when notifications are unavailable)."""
        return len(self._watches)

    @property
    def unavailable(self) -> str:
        """Why `quiet()` cannot be trusted for good ("" when notifications work)."""
        return self._broken or _hub.unavailable

    def close(self) -> None:
        """Stop watching; the process's descriptor is closed with the last one."""
        with _hub.lock:
            self._clear()
            _hub.users.discard(self)
            if not _hub.users and _hub.inotify is not None:
                _hub.inotify.close()
                _hub.inotify, _hub.heard = None, {}

    def _clear(self) -> None:
        for folder in list(self._watches):
            self._unwatch(folder)
        self._settled = False
        self._heard = None

    def _unwatch(self, folder: str) -> None:
        descriptor = self._watches.pop(folder)
        self._names.pop(folder, None)
        mine = _hub.heard.get(descriptor, {}).get(self)
        if mine is not None:
            mine.pop(folder, None)
            if not mine:
                del _hub.heard[descriptor][self]
        if not _hub.heard.get(descriptor):
            _hub.heard.pop(descriptor, None)
            if _hub.inotify is not None:
                with contextlib.suppress(OSError):  # already gone with its folder
                    _hub.inotify.rm_watch(descriptor)

    # Called by the hub, under its lock.
    def _moved(self, paths: list[str] | None) -> None:
        self._generation += 1
        self._settled = False
        if paths is None:
            self._heard = None
        elif self._heard is not None:
            self._heard.update(paths)

    def _lost(self, descriptor: int) -> None:
        for folder in [f for f, d in self._watches.items() if d == descriptor]:
            del self._watches[folder]
            self._names.pop(folder, None)
        self._moved(None)
