"""What the person asks of the sessions' gate: a session's traits (`gateway access why`) and every session's
(`gateway access list`, `gateway doctor`), read from the store as the tools read it."""

from __future__ import annotations

from collections.abc import Iterator

from gateway import PluginHost, Traits
from gateway_sessions import store
from gateway_sessions.defaults import default_path
from gateway_sessions.tools import URI, traits

_PREFIX = URI.split("{", 1)[0]


def _reader(gateway: PluginHost) -> store.Reader | None:
    found = store.reader(gateway.path_setting("store", default_path(gateway.folders.data)))
    return found if found is not None and found.has_sessions_table() else None


def traits_of(gateway: PluginHost, address: str) -> Traits | None:
    """The traits of the session at `rousseau://sessions/ID` (or named by its bare id); None when not ours."""
    if address.startswith(_PREFIX):
        session_id = address[len(_PREFIX):]
    elif ":" in address or "/" in address:
        return None  # another plugin's address
    else:
        session_id = address
    if not session_id:
        return None
    reader = _reader(gateway)
    if reader is None:
        return None
    with reader.snapshot():
        row = reader.find(session_id)
        return traits(reader, row) if row is not None else None


def census(gateway: PluginHost) -> Iterator[tuple[str, Traits]]:
    """(`sessions of <agent>`, traits) for every session of the store."""
    reader = _reader(gateway)
    if reader is None:
        return
    with reader.snapshot():
        rows = [store.Row(*row) for row in reader.connection.execute(
            f"SELECT {store._SESSION_COLUMNS} FROM sessions AS s")]
        for row in rows:
            yield f"sessions of {row.agent}", traits(reader, row)
