"""Texts and calls: the phone's SMS, MMS and call log, from Android's "SMS Backup & Restore" XML exports.

Off until the person turns it on (`enabled = true` in `[plugins.texts]`): texts carry other people's words, often
more private than mail. Off, its tools are neither listed nor called (the core hides the tools of a plugin whose
declared `enabled` setting is false, and refuses them with a sentence saying how to turn it on).
"""

from __future__ import annotations

from pathlib import Path

from gateway import hookimpl

__version__ = "0.1.0"


@hookimpl
def register_settings(gateway):  # noqa: ANN001, ANN201 (the hook's documented shape)
    from gateway_texts.settings import TextsSettings

    return TextsSettings


@hookimpl
def register_tools(gateway):  # noqa: ANN001, ANN201
    from gateway_texts.tools import TOOLS

    return TOOLS


@hookimpl
def traits_of(gateway, address):  # noqa: ANN001, ANN201 (a Traits or None; the import stays lazy)
    from gateway_texts.described import traits_of as described

    return described(gateway, address)


@hookimpl
def census(gateway):  # noqa: ANN001, ANN201 (an iterator of (source, Traits))
    from gateway_texts.described import census as described

    return described(gateway)


@hookimpl
def register_refresh(gateway):  # noqa: ANN001, ANN201
    from gateway import Refresh

    return [Refresh(run=_refresh, stale=_stale, sources=_sources)]


# The exports' signature as the last refresh left the store, per store file: a call whose exports did not change
# reads nothing (one walk of the exports' folder).
_seen: dict[str, tuple] = {}


def _store_key(ctx) -> str:  # noqa: ANN001
    return str(Path(ctx.folders.cache) / "texts.sqlite3")


def _stale(ctx) -> bool:  # noqa: ANN001
    from gateway_texts import store

    return _seen.get(_store_key(ctx)) != (store.signature(ctx), _region(ctx))


def _region(ctx) -> str:  # noqa: ANN001
    return str(ctx.settings.get("region") or "").upper()


def _refresh(ctx):  # noqa: ANN001, ANN202
    """Read the new and changed exports into the store, on the core's refresh thread (the first read of a large
    export may take a minute: calls meanwhile answer from the store and say that more is being read)."""
    from gateway import Refreshed
    from gateway_texts import store
    from gateway_texts.exports import Bounds

    settings = ctx.settings
    bounds = Bounds(int(settings["max_file_mb"]) << 20, int(settings["max_elements"]), float(settings["max_seconds"]))
    before = store.signature(ctx)
    connection = store.connect(ctx)
    try:
        read = store.refresh(ctx, connection, bounds, str(settings.get("region") or ""))
    finally:
        connection.close()
    _seen[_store_key(ctx)] = (before, _region(ctx))
    return Refreshed(added=read)


def _sources(ctx):  # noqa: ANN001, ANN202
    from gateway import Source

    folder = ctx.path_setting("exports")
    # Named by the person, a missing folder is a problem for doctor; the default's absence is only said.
    named = "[plugins.texts] exports" if ctx.plugin_settings("texts").get("exports") else ""
    return [Source("SMS Backup & Restore exports", folder, folder is not None and folder.is_dir(), setting=named,
                   unreadable="; ".join(_unreadable(ctx)))]


def _unreadable(ctx) -> list[str]:  # noqa: ANN001
    """The exports the store could not read, each with why (none when there is no store yet)."""
    import sqlite3

    from gateway_texts import store

    path = Path(ctx.folders.cache) / store.STORE_FILE
    if not path.exists():
        return []
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        connection.row_factory = sqlite3.Row
        try:
            return list(store.found(connection).problems)
        finally:
            connection.close()
    except sqlite3.Error:
        return []
