"""Papers, contracts and letters: a documents folder (PDFs' text layer, scans with their text, plain text files, a
paperless-ngx export), searched and read by agents under the consent gate, masked and framed.
"""

from __future__ import annotations

from pathlib import Path

from gateway import hookimpl

__version__ = "0.1.0"

@hookimpl
def register_settings(gateway):  # noqa: ANN001, ANN201 (the hook's documented shape)
    from gateway_papers.settings import PapersSettings

    return PapersSettings


@hookimpl
def register_tools(gateway):  # noqa: ANN001, ANN201
    from gateway_papers.tools import TOOLS

    return TOOLS


@hookimpl
def register_refresh(gateway):  # noqa: ANN001, ANN201
    from gateway import Refresh

    return [Refresh(run=_refresh, stale=_stale, sources=_sources)]


@hookimpl
def traits_of(gateway, address):  # noqa: ANN001, ANN201
    from gateway_papers.described import traits_of as described

    return described(gateway, address)


@hookimpl
def census(gateway):  # noqa: ANN001, ANN201
    from gateway_papers.described import census as described

    return described(gateway)


# The folder's signature as the last refresh left the store, per store: a call whose folder did not change reads
# nothing. Where the kernel's file notifications work (gateway.api.changes), a call made when no folder of the documents
# folder had an event does not even walk it.
_seen: dict[str, tuple] = {}
_changes: dict[str, object] = {}


def _changes_of(ctx):  # noqa: ANN001, ANN202
    from gateway import Changes

    key = f"{ctx.folders.cache}|{ctx.settings.get('folder')}"
    found = _changes.get(key)
    if found is None:
        found = _changes[key] = Changes()
    return found


def _settle(changes, token: int, root: Path | None, folders: tuple[str, ...]) -> None:  # noqa: ANN001
    from gateway import merged, toward

    watched = [(folder, None) for folder in folders]
    if root is not None:
        watched.append(toward(root))  # the folder itself, or the way to it when it is not there yet
    changes.settle(token, merged(watched))


def _stale(ctx) -> bool:  # noqa: ANN001
    from gateway_papers import store

    changes = _changes_of(ctx)
    if changes.quiet():
        return False
    token = changes.begin()  # before the walk: a write made during it leaves an event for the next call
    settings = store.Settings.of(ctx)
    signature, folders = store.signature(settings)
    if _seen.get(str(ctx.folders.cache)) != signature:
        return True
    _settle(changes, token, settings.root, folders)
    return False


def _refresh(ctx):  # noqa: ANN001, ANN202
    """Read the new and changed files into the store, on the core's refresh thread (a first read of many papers
    goes on while calls answer from the store and say that more is being read)."""
    from gateway import Refreshed
    from gateway_papers import store

    changes = _changes_of(ctx)
    token = changes.begin()  # before the walk: a write made during the reading leaves an event for the next call
    settings = store.Settings.of(ctx)
    connection = store.connect(Path(ctx.folders.cache), settings)
    try:
        done = store.refresh(settings, connection)
    finally:
        connection.close()
    # The folder as the walk saw it: a file changed after its stat is seen by the next call's walk or event.
    _seen[str(ctx.folders.cache)] = done.signature
    _settle(changes, token, settings.root, done.folders)
    return Refreshed(added=done.read)


@hookimpl
def shutdown(gateway):  # noqa: ANN001, ANN201
    for changes in _changes.values():
        changes.close()  # type: ignore[attr-defined]
    _changes.clear()


def _sources(ctx):  # noqa: ANN001, ANN202
    from gateway import Source

    folder = ctx.path_setting("folder")
    named = "[plugins.papers] folder" if ctx.plugin_settings("papers").get("folder") else ""
    return [Source("documents folder (papers, contracts, letters)", folder, folder is not None and folder.is_dir(),
                   setting=named, unreadable="; ".join(_unreadable(ctx)))]


def _unreadable(ctx) -> list[str]:  # noqa: ANN001
    """Every file the store could not read, or read in part, each with why (for the person: doctor names all)."""
    from gateway_papers import store

    connection = store.reader_of(Path(ctx.folders.cache))
    if connection is None:
        return []
    try:
        said = [f"{Path(path).name}: {why}" for path, why, _what in store.problems(connection)]
        return [*filter(None, [store.truncated(connection)]), *said]
    finally:
        connection.close()
