"""A home shared by the tests of a module that only read from it, for a fixture of module scope: made once in the
run's temporary folder, with HOME and XDG_* pointed into it while it is made and while each test runs (as the
`gateway_home` fixture does for a home of a test's own). A test that writes to its home, its config or its files
keeps a home of its own."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from gateway.api.context import home_environment


def new_home(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """An empty home folder of its own in the run's temporary folder."""
    home = tmp_path_factory.mktemp(name) / "home"
    home.mkdir()
    return home


@contextmanager
def living_in(home: Path) -> Iterator[Path]:
    """HOME and XDG_* pointing into `home` (and no GATEWAY_CONFIG) for as long as the block lasts."""
    with pytest.MonkeyPatch.context() as patch:
        for key, value in home_environment(home).items():
            patch.setenv(key, value)
        patch.delenv("GATEWAY_CONFIG", raising=False)
        yield home


def shared_gateway(name: str, make: Callable[[Path], tuple[Any, Any]]):
    """The two fixtures of a module whose read-only tests share one home and one gateway: `_shared` (module scope:
    the home, and what `make(home)` gives, (made, gateway), made once while living in it) and `read_only` (each test
    living in that home, given (made, gateway)). Assign both in the module: `_shared, read_only = shared_gateway(...)`.
    """

    @pytest.fixture(scope="module")
    def _shared(tmp_path_factory: pytest.TempPathFactory):
        home = new_home(tmp_path_factory, name)
        with living_in(home):
            return home, *make(home)

    @pytest.fixture
    def read_only(_shared):
        home, made, gateway = _shared
        with living_in(home):
            yield made, gateway

    return _shared, read_only
