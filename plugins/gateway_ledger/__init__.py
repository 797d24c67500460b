"""Budgets and bank accounts: plain-text accounting journals (beancount, hledger and ledger) for agents to read.

On when the plugin is enabled, as mail is: its tools are listed, and answer from the journals named in
`[plugins.ledger] journals`; with none named they say which setting to write. Nothing is ever written to a
journal: the plugin reads, and moves no money.
"""

from __future__ import annotations

from pathlib import Path

from gateway import hookimpl

__version__ = "0.1.0"


@hookimpl
def register_settings(gateway):  # noqa: ANN001, ANN201 (the hook's documented shape)
    from gateway_ledger.settings import LedgerSettings

    return LedgerSettings


@hookimpl
def register_tools(gateway):  # noqa: ANN001, ANN201
    from gateway_ledger.tools import TOOLS

    return TOOLS


@hookimpl
def register_refresh(gateway):  # noqa: ANN001, ANN201
    from gateway import Refresh

    return [Refresh(run=_refresh, stale=_stale, sources=_sources)]


# Per store file: the journals' signatures as the last refresh left them, and the files each journal's read used
# (the journal and what it includes). A call whose files did not change reads nothing (a stat per file).
_seen: dict[str, tuple] = {}
_files: dict[str, dict[str, list[str]]] = {}


def _store_key(ctx) -> str:  # noqa: ANN001
    return str(Path(ctx.folders.cache) / "ledger.sqlite3")


def _signature(ctx) -> tuple:  # noqa: ANN001
    from gateway_ledger import store

    files = _files.get(_store_key(ctx), {})
    return tuple((str(p), store.signature(files.get(str(p)) or [str(p)])) for p in store.journals_of(ctx))


def _stale(ctx) -> bool:  # noqa: ANN001
    key = _store_key(ctx)
    return key not in _seen or _seen[key] != _signature(ctx)


def _refresh(ctx):  # noqa: ANN001, ANN202
    """Read the journals that changed into the store, on the core's refresh thread."""
    import json

    from gateway import Refreshed
    from gateway_ledger import store
    from gateway_ledger.journals import Bounds

    settings = ctx.settings
    bounds = Bounds(int(settings["max_file_mb"]) << 20, float(settings["max_seconds"]),
                    int(settings["max_transactions"]))
    connection = store.connect(ctx)
    try:
        read = store.refresh(ctx, connection, bounds)
        key = _store_key(ctx)
        _files[key] = {row["path"]: [f for f, _s in json.loads(row["signature"])]
                       for row in connection.execute("SELECT path, signature FROM journals")}
        _seen[key] = _signature(ctx)
    finally:
        connection.close()
    return Refreshed(added=read)


def _sources(ctx):  # noqa: ANN001, ANN202
    from gateway import Source
    from gateway_ledger import store

    said = _said(ctx)
    sources = []
    for path in store.journals_of(ctx):
        error, *warnings = said.get(str(path), ("",))
        lines = ([f"not read: {error}"] if error else []) + warnings
        sources.append(Source("ledger journal", path, path.is_file(), setting="[plugins.ledger] journals",
                              unreadable="; ".join(lines)))
    return sources


def _said(ctx) -> dict[str, tuple[str, ...]]:  # noqa: ANN001
    """Per journal, why it could not be read and what its tool warned of (nothing when there is no store yet)."""
    import sqlite3

    from gateway_ledger import store

    path = Path(ctx.folders.cache) / store.STORE_FILE
    if not path.exists():
        return {}
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        connection.row_factory = sqlite3.Row
        try:
            return store.per_journal(connection, store.journals_of(ctx))
        finally:
            connection.close()
    except sqlite3.Error:
        return {}


@hookimpl
def traits_of(gateway, address: str):  # noqa: ANN001, ANN201
    from gateway_ledger.described import traits_of as described

    return described(gateway, address)


@hookimpl
def census(gateway):  # noqa: ANN001, ANN201
    from gateway_ledger.described import census as described

    return described(gateway)
