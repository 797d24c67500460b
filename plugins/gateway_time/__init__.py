"""Time and invoices: the hours tracked with timewarrior, and a folder of Factur-X / ZUGFeRD invoice PDFs.

`time_spent` sums timewarrior's intervals per tag (in total or per day), `invoices` lists the invoices unpaid,
overdue or paid. Both read through the plugin's store (SQLite in its cache folder), brought up to date by the
core's refresh: only new or changed files are read.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from gateway import PluginHost, Traits, hookimpl

__version__ = "0.1.0"


@hookimpl
def register_settings(gateway):  # noqa: ANN001, ANN201 (the hook's documented shape)
    from gateway_time.settings import TimeSettings

    return TimeSettings


@hookimpl
def register_tools(gateway):  # noqa: ANN001, ANN201
    from gateway_time.tools import TOOLS

    return TOOLS


@hookimpl
def register_refresh(gateway):  # noqa: ANN001, ANN201
    from gateway import Refresh

    return [Refresh(run=_refresh, stale=_stale, sources=_sources)]


# The files' signature as the last refresh left the store, per store file: a call whose files did not change reads
# nothing. With the kernel's file notifications on the folders (`gateway.Changes`), it does not even stat them.
_seen: dict[str, tuple] = {}
_changes: dict[str, object] = {}


def _store_key(ctx) -> str:  # noqa: ANN001
    return str(Path(ctx.folders.cache) / "time.sqlite3")


def _changes_of(ctx):  # noqa: ANN001, ANN202
    from gateway import Changes

    key = (_store_key(ctx), str(ctx.settings.get("timewarrior")), str(ctx.settings.get("invoices")))
    found = _changes.get(key)
    if found is None:
        found = _changes[key] = Changes()
    return found


def _settle(ctx, changes, token: int) -> None:  # noqa: ANN001
    """Watch the timewarrior data folder and every folder of invoices (or the way to them while they are not there)."""
    import os

    from gateway import merged, toward
    from gateway_time import timewarrior

    folders = []
    data = timewarrior.data_folder(timewarrior.database(ctx.path_setting("timewarrior")))
    folders.append((str(data), None) if data.is_dir() else toward(data))
    invoices = ctx.path_setting("invoices")
    if invoices is not None and invoices.is_dir():
        for root, dirs, _names in os.walk(invoices):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            folders.append((root, None))
    elif invoices is not None:
        folders.append(toward(invoices))
    changes.settle(token, merged(folders))


def _stale(ctx) -> bool:  # noqa: ANN001
    from gateway_time import store

    changes = _changes_of(ctx)
    if changes.quiet():
        return False
    token = changes.begin()  # before the stats: a write made during them leaves an event for the next call
    behind = _seen.get(_store_key(ctx)) != store.signature(ctx)
    if not behind:
        _settle(ctx, changes, token)
    return behind


def _refresh(ctx):  # noqa: ANN001, ANN202
    """Read the new and changed files into the store, on the core's refresh thread."""
    from gateway import Refreshed
    from gateway_time import store

    changes = _changes_of(ctx)
    token = changes.begin()
    before = store.signature(ctx)
    connection = store.connect(ctx)
    try:
        read = store.refresh(ctx, connection)
    finally:
        connection.close()
    _seen[_store_key(ctx)] = before
    _settle(ctx, changes, token)
    return Refreshed(added=read)


def _sources(ctx):  # noqa: ANN001, ANN202
    from gateway import Source
    from gateway_time import store, timewarrior

    named = ctx.plugin_settings("time")
    db = timewarrior.database(ctx.path_setting("timewarrior"))
    folder = ctx.path_setting("invoices")
    problems = _problems(ctx)
    time_problems = "; ".join(text for kind, text in problems if kind == "time")
    pdf_problems = "; ".join(text for kind, text in problems if kind == "invoice")
    return [
        Source("timewarrior data", timewarrior.data_folder(db), bool(store.time_files(ctx)),
               setting="[plugins.time] timewarrior" if named.get("timewarrior") else "", unreadable=time_problems),
        Source("invoices folder", folder, folder is not None and folder.is_dir(),
               setting="[plugins.time] invoices" if named.get("invoices") else "", unreadable=pdf_problems),
    ]


def _problems(ctx) -> list[tuple[str, str]]:  # noqa: ANN001
    """What the store could not read, each with why (none when there is no store yet)."""
    import sqlite3

    from gateway_time import store

    path = Path(ctx.folders.cache) / store.STORE_FILE
    if not path.exists():
        return []
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        connection.row_factory = sqlite3.Row
        try:
            return store.problems(connection)
        finally:
            connection.close()
    except sqlite3.Error:
        return []


@hookimpl
def traits_of(gateway: PluginHost, address: str) -> Traits | None:
    """An interval's or an invoice's traits, for `gateway access why time:interval/<start>` or `time:invoice/<id>`."""
    from gateway_time import described

    return described.traits_of(gateway, address)


@hookimpl
def census(gateway: PluginHost) -> Iterator[tuple[str, Traits]]:
    """Every interval and every invoice in the store, for `gateway access list`."""
    from gateway_time import described

    yield from described.census(gateway)
