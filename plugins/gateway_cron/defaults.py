"""Where the jobs are by default, known without importing the store (which registering the plugin does not need)."""

from __future__ import annotations

from pathlib import Path


def default_path(data_folder: Path) -> Path:
    """The sessions plugin's store: ``<data>/gateway/plugins/sessions/sessions.db`` (this plugin's data folder is
    ``<data>/gateway/plugins/cron``)."""
    return data_folder.parent / "sessions" / "sessions.db"
