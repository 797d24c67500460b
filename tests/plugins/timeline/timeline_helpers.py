"""Helpers for the timeline plugin's tests: a hand-built Context, envelope lines, a filled store, a work morning."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from gateway_timeline.importers.jsonl import ingest_lines
from gateway_timeline.settings import RETENTION_HOURS
from gateway_timeline.store import Store

from gateway import Context, Folders, Gate
from gateway.gate.access import Manifest

WEEK_MS = RETENTION_HOURS * 3_600_000


def minute_now() -> datetime:
    return datetime.now(UTC).replace(second=0, microsecond=0)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def envelope(
    ts: datetime,
    kind: str,
    app: str | None = None,
    title: str | None = None,
    *,
    data: Mapping[str, Any] | None = None,
    bundle_id: str | None = None,
    event_id: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "v": 1,
        "ts": iso(ts),
        "mono_ns": 1000,
        "source": "test.recorder",
        "type": kind,
        "app": {"name": app, "bundle_id": bundle_id, "pid": 501} if app else None,
        "window": {"title": title, "id": 7} if title is not None else None,
        "element": None,
        "data": dict(data or {}),
        "redaction": {"applied": False, "rules": []},
        **extra,
    }
    if event_id:
        event["id"] = event_id
    return event


def lines_of(events: Iterable[Mapping[str, Any]]) -> list[str]:
    return [json.dumps(e) for e in events]


def fill(path: Path, events: Iterable[Mapping[str, Any]]) -> Path:
    """A store at `path` holding `events` (through the JSONL ingester, as a recorder's file would)."""
    with Store.open(path) as store:
        report = ingest_lines(lines_of(events), store, retention_ms=WEEK_MS)
    assert report.bad == 0, report.problems
    return path


def plugin_folders(home: Path) -> Folders:
    return Folders(home / "config", home / "data", home / "state", home / "cache").for_plugin("timeline")


def make_context(
    home: Path,
    settings: Mapping[str, Any] | None = None,
    projects: Sequence[Mapping[str, Any]] = (),
    outside_projects: bool = True,
) -> Context:
    base = {
        "store": "",
        "retention_hours": RETENTION_HOURS,
        "activitywatch": "",
        "running_within_seconds": 120,
        "probe_activitywatch": False,
        "timezone": "UTC",
    }
    return Context(
        plugin="timeline",
        settings={**base, **(settings or {})},
        folders=plugin_folders(home),
        gate=Gate(Manifest.from_dict({"project": list(projects)}), outside_projects=outside_projects),
    )


def store_path_of(home: Path) -> Path:
    return plugin_folders(home).data / "timeline.db"


def work_morning(start: datetime) -> list[dict[str, Any]]:
    """Forty minutes of invented work: an editor, a browser on two pages, a chat, key presses."""
    events = [
        envelope(start, "app.focus", "Code", "store.py — gateway", bundle_id="com.microsoft.VSCode"),
        envelope(
            start + timedelta(minutes=1),
            "editor.activity",
            "Code",
            None,
            data={"path": "/home/ada/src/gateway/store.py"},
        ),
    ]
    for second in range(0, 600, 20):
        events.append(
            envelope(
                start + timedelta(seconds=second + 5),
                "input.key",
                "Code",
                "store.py — gateway",
                bundle_id="com.microsoft.VSCode",
            )
        )
    browse = start + timedelta(minutes=12)
    events += [
        envelope(browse, "app.focus", "Firefox", "PR #42 — Mozilla Firefox", bundle_id="org.mozilla.firefox"),
        envelope(
            browse + timedelta(seconds=2),
            "browser.navigate",
            "Firefox",
            "PR #42 — Mozilla Firefox",
            bundle_id="org.mozilla.firefox",
            data={
                "url": "https://github.example.com/ada/gateway/pull/42",
                "tab_title": "PR #42",
                "mode": "normal",
            },
        ),
        envelope(
            browse + timedelta(minutes=6),
            "browser.navigate",
            "Firefox",
            "Docs — Mozilla Firefox",
            bundle_id="org.mozilla.firefox",
            data={"url": "https://docs.example.org/sqlite/wal", "tab_title": "WAL mode", "mode": "normal"},
        ),
    ]
    for second in range(0, 600, 30):
        events.append(
            envelope(
                browse + timedelta(seconds=second + 3),
                "ui.click",
                "Firefox",
                "PR #42 — Mozilla Firefox",
                bundle_id="org.mozilla.firefox",
            )
        )
    chat = start + timedelta(minutes=25)
    events += [
        envelope(chat, "app.focus", "Slack", "general — Example Team", bundle_id="com.tinyspeck.slackmacgap"),
        envelope(chat + timedelta(minutes=10), "user.idle"),
        envelope(chat + timedelta(minutes=15), "user.active"),
    ]
    return events


TEST_SETTINGS = {"probe_activitywatch": False, "timezone": "UTC"}


def gateway_config(**settings: Any) -> dict[str, Any]:
    """config.toml for a gateway serving only the timeline plugin, never probing a real ActivityWatch."""
    return {"gateway": {"plugins": ["timeline"]}, "plugins": {"timeline": {**TEST_SETTINGS, **settings}}}


def home_store(home: Path) -> Path:
    """Where the timeline plugin keeps its store in a gateway home (the default setting)."""
    from gateway.testing import folders_of

    return folders_of(home).for_plugin("timeline").data / "timeline.db"
