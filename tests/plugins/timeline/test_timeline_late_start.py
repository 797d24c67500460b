"""Issue 9: a window event that starts late in a minute and goes on into the next keeps its title.

ActivityWatch's window events are back to back with durations; one that starts at :42 holds most of the next
minute, whose session is then its app's while the event's own summary row sits in the minute before.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from gateway_timeline import queries
from gateway_timeline.gating import Gatekeeper
from gateway_timeline.importers.activitywatch import import_database
from gateway_timeline.store import Store

from gateway import Gate
from gateway.gate.access import Manifest
from tests.plugins.timeline.timeline_awdb import WINDOW, AWDatabase, window_events
from tests.plugins.timeline.timeline_helpers import WEEK_MS

FIVE = [
    ("Firefox", "Stripe Dashboard — Mozilla Firefox"),
    ("Thunderbird", "Inbox — ada@example.com — Mozilla Thunderbird"),
    ("Code", "settings.py — shop — Visual Studio Code"),
    ("gnome-terminal-server", "ada@desk: ~/shop"),
    ("Firefox", "Orders — Shop admin — Mozilla Firefox"),
]


SPACING = timedelta(minutes=20)  # between the starts of two runs of five: each run is its own range


def headings_by_second(tmp_path: Path, minute: datetime, minutes: list[float]) -> list[list[str]]:
    """For each second of a minute, the markdown headings of the five window events imported from ActivityWatch,
    back to back from that second (one import of sixty runs, one range per run)."""
    aw = AWDatabase(tmp_path / "aw.db", "rust")
    spans = [(m, app, title) for m, (app, title) in zip(minutes, FIVE, strict=True)]
    for second in range(60):
        aw.add(WINDOW, window_events(minute + second * SPACING + timedelta(seconds=second), spans))
    aw.close()
    with Store.open(tmp_path / "timeline.db") as store:
        import_database(tmp_path / "aw.db", store, retention_ms=WEEK_MS)
    reader = Store.reader(tmp_path / "timeline.db")
    assert reader is not None
    found = []
    try:
        for second in range(60):
            since = minute + second * SPACING - timedelta(minutes=5)
            result = queries.timeline(
                reader, Gatekeeper(Gate(Manifest.from_dict({"project": []}))), int(since.timestamp() * 1000),
                int((since + SPACING).timestamp() * 1000), oldest_ms=0, zone=UTC, max_tokens=32000,
            )
            found.append([line for line in result["content"].splitlines() if line.startswith("## ")])
    finally:
        reader.close()
    return found


@pytest.mark.parametrize("minutes", [[1.5, 1.5, 1.5, 1.5, 1.5], [2, 1, 3, 2, 1], [1, 1, 1, 1, 1]])
def test_every_session_keeps_its_title_whatever_second_its_events_start(tmp_path: Path, minutes) -> None:
    minute = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(days=1)
    titles = {title for _app, title in FIVE}
    for second, found in enumerate(headings_by_second(tmp_path, minute, minutes)):
        assert found, second
        for heading in found:
            # "## HH:MM-HH:MM App — title": the app as the watcher named it, and one of the windows' titles.
            app, _, title = heading.split(" ", 2)[2].partition(" — ")
            assert title in titles, (second, found)
            assert app in {app for app, _title in FIVE}, (second, found)
