"""Call-time refresh: a plugin's store brought up to date from its sources before its tools answer, under a budget.

A plugin registers a :class:`Refresh` (hook ``register_refresh``). Before each of its tool calls and resource reads
the core runs it on a thread of its own and waits at most ``[gateway] refresh_budget_ms``; past that the call
answers from the store with one line saying newer things are still being read, and the refresh goes on so that
the next call has them. One refresh per plugin runs at a time in a process; across processes the plugin's own
lock (or SQLite's) keeps two from importing one file at once.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from attrs import field, frozen

from gateway.engine.faults import plugin_failed
from gateway.engine.log import get_logger

if TYPE_CHECKING:
    from gateway.api.context import Context

log = get_logger("gateway.api.refresh")

DEFAULT_BUDGET_MS = 300
STILL_READING = (
    "Newer things are still being read into the {plugin} store: this answer is from what was stored; "
    "ask again in a moment for the rest."
)


def _owner_sets(sets: Any) -> tuple[frozenset[str], ...]:
    return tuple(dict.fromkeys(frozenset(owners) for owners in sets))


@frozen
class Refreshed:
    """What one refresh brought in: `added` new things (the resource list changed), `changed` resources' URIs, and
    `owners`: where the added things belong, one set of project ids per distinct place (an empty set: in no
    project). Hosts hear that the list changed only when one of these is readable when they are told (the gate as
    it is then); a refresh that names no owners tells no one, so a plugin that cannot say where its things belong
    does not tell of a closed project's. A refresh may leave out the places its gate kept back, and stop at the
    first readable one."""

    added: int = 0
    changed: tuple[str, ...] = ()
    owners: tuple[frozenset[str], ...] = field(default=(), converter=_owner_sets)

    def __bool__(self) -> bool:
        return bool(self.added or self.changed)


@frozen
class Source:
    """A place a plugin reads from, for `gateway doctor` and `gateway watch`: what, where, found or not, why it is
    stale ("" when the store has all of it), and what of it could not be read ("" when everything could: files
    from strangers that the plugin read only in part, said by doctor as a warning)."""

    what: str
    path: Path
    found: bool
    stale: str = ""
    # The config key that names this source ("[plugins.mail] accounts"), when the person set it: a named source
    # that does not exist is a problem for doctor (exit 1), never a quiet "nothing found".
    setting: str = ""
    unreadable: str = ""


@frozen
class Refresh:
    """A plugin's refresh: `run(ctx)` imports what changed in its sources (cheap when nothing did, read-only on the
    sources), `sources(ctx)` says where they are (for doctor and watch; it may walk). `stale(ctx)`, when given,
    says in a few stats whether `run` has anything to do: it runs on the caller's thread, sparing a call whose
    sources did not change the hand-off to the refresh's thread."""

    run: Callable[[Context], Refreshed]
    sources: Callable[[Context], list[Source]] = field(default=lambda ctx: [])
    stale: Callable[[Context], bool] | None = None
    plugin: str = ""


class Refreshing:
    """The refreshes in flight in this process, one per plugin, and who hears of what they brought in."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, threading.Event] = {}
        self.listeners: list[Callable[[str, Refreshed], None]] = []

    def start(self, plugin: str, refresh: Refresh, ctx: Context) -> threading.Event:
        """The event set when the plugin's refresh is done: the one running, else a new one."""
        with self._lock:
            running = self._running.get(plugin)
            if running is not None and not running.is_set():
                return running
            done = self._running[plugin] = threading.Event()
        # A daemon thread: a server told to stop does not wait for an import, whose transactions roll back whole.
        threading.Thread(target=self._run, args=(plugin, refresh, ctx, done), name=f"refresh-{plugin}",
                         daemon=True).start()
        return done

    def running(self, plugin: str) -> bool:
        running = self._running.get(plugin)
        return running is not None and not running.is_set()

    def run_now(self, plugin: str, refresh: Refresh, ctx: Context) -> Refreshed:
        """Run a refresh on this thread (`gateway watch`, tests), telling the listeners."""
        done = threading.Event()
        with self._lock:
            self._running[plugin] = done
        return self._run(plugin, refresh, ctx, done)

    def _run(self, plugin: str, refresh: Refresh, ctx: Context, done: threading.Event) -> Refreshed:
        result = Refreshed()
        started = time.perf_counter()
        try:
            result = refresh.run(ctx) or Refreshed()
        except BaseException as error:  # a plugin's sys.exit() too (gateway.engine.faults)
            if not plugin_failed(error):
                raise
            log.error("refresh failed", plugin=plugin, traceback=traceback.format_exc())
        finally:
            done.set()
        if result:
            log.info("refreshed", plugin=plugin, added=result.added, changed=len(result.changed),
                     ms=round((time.perf_counter() - started) * 1000, 1))
            for listener in list(self.listeners):
                try:
                    listener(plugin, result)
                except Exception:
                    log.error("refresh listener failed", traceback=traceback.format_exc())
        return result

    async def before(self, plugin: str, refresh: Refresh, ctx: Context, budget_ms: float) -> str | None:
        """Run the plugin's refresh and wait for it at most `budget_ms`; the sentence to add to the answer when the
        budget ran out (None when the store is up to date)."""
        if refresh.stale is not None and not self.running(plugin):
            try:
                if not refresh.stale(ctx):
                    return None
            except BaseException as error:
                if not plugin_failed(error):
                    raise
                log.error("refresh's stale check failed", plugin=plugin, traceback=traceback.format_exc())
        done = self.start(plugin, refresh, ctx)
        if done.wait(0.0005):  # nothing changed: done before a thread hand-off would be
            return None
        finished = await anyio.to_thread.run_sync(done.wait, budget_ms / 1000, abandon_on_cancel=True)
        return None if finished else STILL_READING.format(plugin=plugin)


def watched_signature(paths: list[Path]) -> tuple[Any, ...]:
    """(size, mtime) of each path, None for a missing one: what a refresh compares to know nothing changed."""
    found: list[Any] = []
    for path in paths:
        try:
            status = path.stat()
        except OSError:
            found.append(None)
            continue
        found.append((status.st_size, status.st_mtime_ns))
    return tuple(found)
