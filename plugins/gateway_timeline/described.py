"""What the person asks of the timeline's gate: an event's traits (`gateway access why timeline://events/ID`) and
every kept event's (`gateway access list`, `gateway doctor`), described as the gating describes them."""

from __future__ import annotations

from collections.abc import Iterator

from gateway import PluginHost, Traits
from gateway_timeline import settings
from gateway_timeline.gating import Gatekeeper
from gateway_timeline.resources import EVENT_TEMPLATE

_PREFIX = EVENT_TEMPLATE.split("{", 1)[0]


def _store(gateway: PluginHost):  # noqa: ANN202 - the store's reader, imported late as the tools import it
    from gateway_timeline.store import Store

    path = settings.store_path(gateway)
    return Store.reader(path) if path.exists() else None


def traits_of(gateway: PluginHost, address: str) -> Traits | None:
    """The traits of the event at `timeline://events/ID`; None when not ours or not stored."""
    if not address.startswith(_PREFIX):
        return None
    store = _store(gateway)
    if store is None:
        return None
    try:
        found = store.event_by_id(address[len(_PREFIX):])
    finally:
        store.close()
    if found is None or found.private:
        return None
    return Gatekeeper(gateway.gate).described(found.app, found.url, found.path, found.label)


def census(gateway: PluginHost) -> Iterator[tuple[str, Traits]]:
    """(`timeline events`, traits) for every event kept (within the retention period), one per event."""
    import time

    keeper = Gatekeeper(gateway.gate)
    now_ms = int(time.time() * 1000)
    store = _store(gateway)
    if store is None:
        return
    try:
        groups = store.owner_groups(now_ms - settings.retention_ms(gateway.settings), now_ms + 60_000)
    finally:
        store.close()
    for app, url, path, label, count in groups:
        traits = keeper.described(app, url, path, label)
        for _event in range(count):
            yield "timeline events", traits
