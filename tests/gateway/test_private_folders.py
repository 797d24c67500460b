"""A plugin's data, state and cache folders are made readable by the person alone when it loads."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from gateway.api.context import Folders


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_missing_folders_are_made_private_and_open_ones_closed(gateway_home: Path) -> None:
    folders = Folders.from_environment()
    (folders.state / "plugins" / "demo").mkdir(parents=True, mode=0o755)
    (folders.state / "plugins" / "demo").chmod(0o755)
    folders.make_private("demo")
    for base in (folders.data, folders.state, folders.cache):
        for folder in (base, base / "plugins", base / "plugins" / "demo"):
            assert folder.is_dir() and mode(folder) == 0o700, folder
    folders.make_private("demo")  # again: nothing changes
    assert mode(folders.data / "plugins" / "demo") == 0o700


def test_a_file_where_a_folder_goes_is_refused(gateway_home: Path) -> None:
    folders = Folders.from_environment()
    (folders.cache / "plugins").mkdir(parents=True)
    (folders.cache / "plugins" / "demo").write_text("not a folder")
    with pytest.raises(FileExistsError):
        folders.make_private("demo")
