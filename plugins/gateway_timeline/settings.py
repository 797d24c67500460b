"""The keys of the `[plugins.timeline]` table, their defaults, and where they point."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from gateway import Context, PluginHost

RETENTION_HOURS = 168  # a week: "resume my work" on a Monday must still see Friday
RUNNING_WITHIN_SECONDS = 120

PATH = {"format": "path"}  # a path setting: kept as written ("" for the default), read with path_setting


class TimelineSettings(BaseModel):
    store: str = Field("", description="the event store's SQLite file (default: timeline.db in the plugin's data "
                       "folder)", json_schema_extra=PATH)
    retention_hours: float = Field(float(RETENTION_HOURS), ge=1, description="events older than this many hours are "
                                   "never served, and the importers delete them")
    activitywatch: str = Field("", description="the ActivityWatch database to import (default: the first found of "
                               "aw-server-rust's sqlite.db and aw-server's peewee-sqlite.v2.db in the usual places)",
                               json_schema_extra=PATH)
    running_within_seconds: float = Field(float(RUNNING_WITHIN_SECONDS), ge=1, description="get_status says running "
                                          "when a recorder's heartbeat is at most this old")
    # Accepted so that a config naming it still loads; the plugin never asks the network (get_status reads the
    # store and the importers' records only).
    probe_activitywatch: bool = Field(False, description="no longer used: get_status never asks a server, whatever "
                                      "this says")
    timezone: str = Field("", description="the person's zone for today, yesterday and HH:MM (default: the system's)")


def store_path(holder: PluginHost | Context) -> Path:
    """The event store: the `store` setting (``~`` and relative paths as the core resolves them), else the default."""
    found = holder.path_setting("store", Path(holder.folders.data) / "timeline.db")
    assert found is not None  # a default was given
    return found


# The settings are checked at load (a number, at least 1): what the tools see is already right.
def retention_ms(settings: Mapping[str, Any]) -> int:
    return int(float(settings.get("retention_hours", RETENTION_HOURS)) * 3_600_000)


def running_within_ms(settings: Mapping[str, Any]) -> int:
    return int(float(settings.get("running_within_seconds", RUNNING_WITHIN_SECONDS)) * 1000)


def activitywatch_candidates(home: Path | None = None) -> list[Path]:
    """Where ActivityWatch keeps its database on Linux, macOS and Windows, the Rust server's first."""
    import os
    import sys

    home = home or Path.home()
    roots = []
    if sys.platform == "darwin":
        roots.append(home / "Library" / "Application Support" / "activitywatch")
    elif sys.platform == "win32":
        roots.append(Path(os.environ.get("LOCALAPPDATA", home / "AppData" / "Local")) / "activitywatch")
        roots.append(Path(os.environ.get("LOCALAPPDATA", home / "AppData" / "Local")) / "activitywatch" / "activitywatch")
        roots.append(Path(os.environ.get("APPDATA", home / "AppData" / "Roaming")) / "activitywatch")
    roots.append(Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share") / "activitywatch")
    found = []
    for root in roots:
        found.append(root / "aw-server-rust" / "sqlite.db")
        found.append(root / "aw-server" / "peewee-sqlite.v2.db")
    return found


def activitywatch_path(holder: PluginHost | Context) -> Path | None:
    configured = holder.path_setting("activitywatch")
    if configured is not None:
        return configured
    return next((p for p in activitywatch_candidates() if p.exists()), None)
