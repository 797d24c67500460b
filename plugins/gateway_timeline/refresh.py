"""The event store kept fresh at call time (gateway.api.refresh): ActivityWatch's database stat'ed, what is new imported.

The database and its write-ahead log are stat'ed; only when either moved is the incremental import of
``gateway timeline import activitywatch`` run (read-only on ActivityWatch's file, a cursor per bucket, its
transaction BEGIN IMMEDIATE, so two gateways importing at once are taken in turn by SQLite and the second reads
from the first one's cursor). A database ActivityWatch is still writing to also marks recording as on (the
heartbeat get_status reads), as ``--watch`` does. Where the kernel's file notifications work (gateway.api.changes), the
database's folder is watched for those two names, and a call made when no event came since the last check stats
neither.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from gateway import Changes, Context, Refreshed, Source, merged, toward, watched_signature
from gateway_timeline import settings

RECENT_URI = "timeline://recent"

# Per (store, database): the signature the last import of this process saw.
_seen: dict[tuple[str, str], Any] = {}
_lock = threading.Lock()


def _watched(database: Path) -> list[Path]:
    return [database, database.with_name(database.name + "-wal")]


# Per place (the settings that say where the store and the database are): the file notifications on the database's
# folder, and on the way to the places it would be found when not configured.
_changes: dict[tuple, Changes] = {}


def _changes_of(ctx: Context) -> Changes:
    place = (ctx.settings.get("store"), ctx.settings.get("activitywatch"), str(ctx.folders.data),
             str(ctx.folders.config))
    found = _changes.get(place)
    if found is None:
        found = _changes[place] = Changes()
    return found


def _settle(ctx: Context, changes: Changes, token: int, database: Path | None) -> None:
    folders = []
    if database is not None:
        folders.append((str(database.parent), frozenset({database.name, database.name + "-wal"})))
    if ctx.path_setting("activitywatch") is None:  # found among the usual places: one of them may appear
        folders.extend(toward(candidate) for candidate in settings.activitywatch_candidates())
    changes.settle(token, merged(folders))


def stale(ctx: Context) -> bool:
    """Whether ActivityWatch wrote since the last import: no stat when its folder had no event since the last check,
    else two (three when looking for the database)."""
    changes = _changes_of(ctx)
    if changes.quiet():
        return False
    token = changes.begin()  # before the stats: a write made during them leaves an event for the next call
    database = settings.activitywatch_path(ctx)
    if database is not None:
        signature = watched_signature(_watched(database))
        if signature[0] is not None and _seen.get((str(settings.store_path(ctx)), str(database))) != signature:
            return True
    _settle(ctx, changes, token, database)
    return False


def refresh(ctx: Context) -> Refreshed:
    """Import what ActivityWatch recorded since the last refresh; two stats when it recorded nothing."""
    changes = _changes_of(ctx)
    token = changes.begin()
    database = settings.activitywatch_path(ctx)
    if database is None:
        _settle(ctx, changes, token, None)
        return Refreshed()
    store_file = settings.store_path(ctx)
    key = (str(store_file), str(database))
    signature = watched_signature(_watched(database))
    if _seen.get(key) == signature or signature[0] is None:
        _settle(ctx, changes, token, database)
        return Refreshed()
    with _lock:
        if _seen.get(key) == signature:
            return Refreshed()
        total, owners = _import(ctx, database, store_file)
        _seen[key] = signature  # a broken database is tried again when it changes, not on every call
    _settle(ctx, changes, token, database)
    # The recent hour is said to have changed only when something readable arrived: a closed project's activity
    # changes nothing a host may read, and telling it would tell when that project was worked on.
    return Refreshed(added=total, changed=(RECENT_URI,) if owners else (), owners=owners)


def close_watches() -> None:
    """Stop the file notifications (the plugin's shutdown); a later call stats and watches again."""
    for changes in _changes.values():
        changes.close()
    _changes.clear()


def _import(ctx: Context, database: Path, store_file: Path) -> tuple[int, tuple[frozenset[str], ...]]:
    """Import what is new; how many events, and where the first readable one belongs (none readable: ())."""
    from gateway_timeline.importers.activitywatch import ActivityWatchError, import_database
    from gateway_timeline.store import Store

    with Store.open(store_file, own_folder=store_file.parent == Path(ctx.folders.data)) as store:
        last_before, read_again = _before(store)
        try:
            report = import_database(database, store, retention_ms=settings.retention_ms(ctx.settings))
        except ActivityWatchError as error:
            store.set_meta("last_import_error", str(error))
            return 0, ()
        if store.meta("last_import_error"):
            store.set_meta("last_import_error", "")
        now_ms = int(time.time() * 1000)
        newest = report.newest_end_ms
        if newest is not None and now_ms - newest <= settings.running_within_ms(ctx.settings):
            store.set_meta("heartbeat", {"at_ms": now_ms, "source": "activitywatch"})
        return report.total, _owners_of_new(ctx, store, last_before, read_again) if report.total else ()


def _before(store: Any) -> tuple[int, str]:
    """The last event stored, and (as JSON) the ids of each source's last one: the importer reads each bucket's last
    row again (ActivityWatch extends it while the window stays), stored anew but not new."""
    last = store.db.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0]
    ids = [row[0] for row in store.db.execute(
        "SELECT id FROM events WHERE seq IN (SELECT MAX(seq) FROM events GROUP BY source)")]
    return last, json.dumps(ids)


def _owners_of_new(ctx: Context, store: Any, after: int, read_again: str) -> tuple[frozenset[str], ...]:
    """Where the events stored after `after` (but those `read_again`) belong, judged as the tools judge them (their
    app, URL, path and title's places, through `Gatekeeper.screen`, private windows dropped): the owners of the
    first the gate lets through, or () when it keeps every one back."""
    from gateway_timeline.gating import Gatekeeper

    groups = store.db.execute(
        "SELECT DISTINCT app, url, path, label FROM events WHERE seq > ? AND private = 0 "
        "AND id NOT IN (SELECT value FROM json_each(?))", (after, read_again)
    ).fetchall()
    keeper = Gatekeeper(ctx.gate)
    kept, _closed = keeper.screen(groups, lambda group: tuple(group))
    return (keeper.owners(*kept[0]),) if kept else ()


def sources(ctx: Context) -> list[Source]:
    """ActivityWatch's database where it was found (or the places looked at), and whether the store is behind."""
    database = settings.activitywatch_path(ctx)
    if database is None:
        return [Source("ActivityWatch database", path, False) for path in settings.activitywatch_candidates()]
    stale = ""
    if database.exists():
        store_file = settings.store_path(ctx)
        if not store_file.exists():
            stale = "never imported"
        elif database.stat().st_mtime > store_file.stat().st_mtime + 1:
            stale = "written since the last import"
    return [Source("ActivityWatch database", database, database.exists(), stale)]
