"""`gateway watch`: one process that keeps every plugin's store fresh without any call paying for it.

It runs each enabled plugin's refresh (gateway.api.refresh) whenever the operating system says one of their sources
changed (`watchfiles`, when installed: ``pip install 'mcp-gateway[watch]'``), and every few seconds besides, which
is all it does without watchfiles (polling: a stat per source folder and file). Each round it writes its heartbeat,
``watch.json`` in the gateway's state folder, for `gateway doctor`; a plugin's refresh writes its own (the
timeline's says whether recording is on, which get_status reads).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from gateway.api.refresh import Refresh
from gateway.engine.core import Caller, Gateway
from gateway.engine.faults import plugin_failed
from gateway.engine.log import get_logger

log = get_logger("gateway.commands.watch")

HEARTBEAT = "watch.json"
CALLER = Caller(client="gateway watch", transport="watch")


def heartbeat_path(gateway: Gateway) -> Path:
    return gateway.folders.state / HEARTBEAT


def read_heartbeat(gateway: Gateway) -> dict | None:
    """The last heartbeat `gateway watch` wrote (at_ms, pid, how), or None."""
    try:
        return json.loads(heartbeat_path(gateway).read_text())
    except (OSError, ValueError):
        return None


def _beat(gateway: Gateway, how: str) -> None:
    path = heartbeat_path(gateway)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps({"at_ms": int(time.time() * 1000), "pid": os.getpid(), "how": how}))
    os.replace(temporary, path)  # whole or not at all, for a reader at any moment


def refreshes(gateway: Gateway) -> list[tuple[str, Refresh]]:
    """Every enabled plugin's refreshes, in config order, keyed as the core keys them."""
    snapshot = gateway.snapshot()
    found = []
    for name in gateway.catalogue(snapshot).plugin_order:
        if not snapshot.config.refreshes(name):
            continue
        for i, refresh in enumerate(gateway.registry.get(name).refreshes):
            found.append((name if i == 0 else f"{name}/{i}", refresh))
    return found


def refresh_all(gateway: Gateway, say: Callable[[str], None], every_one: bool = False) -> int:
    """One round: every plugin's refresh in turn; how many new things they brought in. Each refresh that brought
    something is said; with `every_one` (`watch --once`), every refresh, with how long it took."""
    snapshot = gateway.snapshot()
    if snapshot.error is not None:
        say(f"the configuration is unusable: {snapshot.error}")
        return 0
    added = 0
    for key, refresh in refreshes(gateway):
        started = time.perf_counter()
        result = gateway.refreshing.run_now(key, refresh, gateway.context(refresh.plugin, snapshot, CALLER))
        took = (time.perf_counter() - started) * 1000
        if result or every_one:
            say(f"{time.strftime('%H:%M:%S')} {refresh.plugin}: {result.added} new, {len(result.changed)} changed "
                f"({took:,.0f} ms)")
        added += result.added
    return added


def watched_places(gateway: Gateway) -> list[Path]:
    """The folders to ask the operating system about: each found source's folder (a file's parent)."""
    snapshot = gateway.snapshot()
    places: set[Path] = set()
    for _key, refresh in refreshes(gateway):
        try:
            sources = refresh.sources(gateway.context(refresh.plugin, snapshot, CALLER))
        except BaseException as error:  # a plugin's sys.exit() too (gateway.engine.faults)
            if not plugin_failed(error):
                raise
            log.warning("sources unknown", plugin=refresh.plugin, error=str(error))
            continue
        for source in sources:
            if source.found:
                places.add(source.path if source.path.is_dir() else source.path.parent)
    return sorted(places)


def watch(
    gateway: Gateway,
    say: Callable[[str], None],
    *,
    every: float = 5.0,
    stop: threading.Event | None = None,
    polling: bool = False,
) -> None:
    """Refresh every plugin now, then on each change the system reports and every `every` seconds, until `stop`."""
    stop = stop or threading.Event()
    notify = None
    if not polling:
        try:
            import watchfiles as notify
        except ImportError:
            say("watchfiles is not installed (pip install 'mcp-gateway[watch]'): polling instead")
    how = "notifications" if notify is not None else "polling"
    refresh_all(gateway, say)
    _beat(gateway, how)
    while not stop.is_set():
        places = watched_places(gateway) if notify is not None else []
        if places:
            say(f"watching {len(places)} folders ({how}, and every {every:g}s)")
            # Rounds on a change and on each timeout (new sources, heartbeat); the places are looked at again
            # every minute or so, for a source that appeared meanwhile.
            changes = notify.watch(*places, stop_event=stop, rust_timeout=int(every * 1000),
                                   yield_on_timeout=True, debounce=200, raise_interrupt=False)
            for rounds, _changed in enumerate(changes, start=1):
                refresh_all(gateway, say)
                _beat(gateway, how)
                if rounds * every >= 60:
                    break
        else:
            stop.wait(every)
            if not stop.is_set():
                refresh_all(gateway, say)
                _beat(gateway, how)
