"""Issue 13: an event ActivityWatch records while a real `gateway serve` is connected is in the next query_events,
found in ActivityWatch's own default place (both server flavours), with no import run."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest

from gateway.testing import serve_client, write_config
from tests.plugins.timeline.timeline_awdb import WINDOW, AWDatabase
from tests.plugins.timeline.timeline_helpers import gateway_config

DEFAULT_PLACES = {
    "rust": Path(".local/share/activitywatch/aw-server-rust/sqlite.db"),
    "peewee": Path(".local/share/activitywatch/aw-server/peewee-sqlite.v2.db"),
}


def aw_database(home: Path, flavour: str) -> AWDatabase:
    path = home / DEFAULT_PLACES[flavour]
    path.parent.mkdir(parents=True, exist_ok=True)
    return AWDatabase(path, flavour)


@pytest.mark.parametrize("flavour", ["rust", "peewee"])
def test_an_event_recorded_while_connected_is_in_the_next_query(gateway_home, flavour):
    home = gateway_home
    write_config(home, gateway_config())
    database = aw_database(home, flavour)
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30)
    database.add(WINDOW, [(start, 60, {"app": "Code", "title": "orchard.py"})])
    titles: list[list[str]] = []

    async def session() -> None:
        async with serve_client(home) as client:
            for step in range(2):
                if step == 1:
                    database.add(WINDOW, [(start + timedelta(minutes=5), 60, {"app": "Firefox", "title": "Quince"})])
                result = await client.call_tool("query_events", {"since": "1h"})
                assert not result.is_error, result.content
                titles.append(sorted(json.dumps(e) for e in result.structured_content["events"]))

    anyio.run(session)
    database.close()
    assert len(titles[0]) == 1 and "orchard.py" in titles[0][0]
    assert len(titles[1]) == 2 and any("Quince" in t for t in titles[1])
