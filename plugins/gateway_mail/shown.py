"""How answers name the person's files and folders: as the person writes them, never with their home spelled out.

A leaf module (it imports nothing of the plugin), so that every part of the plugin may use it.
"""

from __future__ import annotations

from pathlib import Path


def shown_path(path: Path) -> str:
    """A path as the person writes it (`~/Mail/work`), never with their home folder (and user name) spelled out."""
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home):] if text == home or text.startswith(home + "/") else text
