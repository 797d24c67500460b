"""What registering the plugin needs to know without opening the store (kept light: the store is imported when a
tool first runs, not when the gateway starts)."""

from __future__ import annotations

from pathlib import Path


def default_path(data_folder: Path) -> Path:
    """``<the plugin's data folder>/sessions.db``."""
    return data_folder / "sessions.db"
