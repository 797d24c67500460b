"""A folder of probe plugin packages, first on `sys.path` for one test, whose modules are forgotten after it.

A test module that writes a probe package names it once: ``site = site_fixture(PACKAGE)`` gives it the fixture
`site` (the folder), and ``forget(PACKAGE)`` forgets the package's modules, as a new process starts without them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


def forget(package: str) -> None:
    """Forget the package's modules (the package and everything under it), as a new process starts without them."""
    for name in [n for n in sys.modules if n == package or n.startswith(f"{package}.")]:
        del sys.modules[name]


def site_fixture(package: str) -> Callable[..., Iterator[Path]]:
    """The fixture `site`: an empty folder in the test's temporary folder, first on `sys.path` while the test runs;
    `package`'s modules are forgotten after it."""

    @pytest.fixture(name="site")
    def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
        folder = tmp_path / "site"
        folder.mkdir()
        monkeypatch.syspath_prepend(str(folder))
        yield folder
        forget(package)

    return site
