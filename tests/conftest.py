"""Fixtures for the whole suite: the fork server that starts `gateway serve` for the tests (tests/forkserver)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import forkserver


@pytest.fixture(scope="session", autouse=True)
def gateway_fork_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One fork server per pytest process; GATEWAY_TEST_LAUNCHER points `python -m gateway` starts at it.

    GATEWAY_FORK_SERVER=0 turns it off (every start is then a real exec).
    """
    if os.environ.get("GATEWAY_FORK_SERVER", "1") == "0":
        yield
        return
    folder = tmp_path_factory.getbasetemp()
    if len(str(folder / "forkserver.sock")) > 100:  # a Unix socket's path has room for about 107 bytes
        folder = Path(tempfile.mkdtemp(prefix="gw-fork-"))
    path = folder / "forkserver.sock"
    process = forkserver.start(path, folder / "forkserver.log")
    if process is None:
        yield
        return
    os.environ[forkserver.VARIABLE] = forkserver.launcher_prefix(path)
    try:
        yield
    finally:
        os.environ.pop(forkserver.VARIABLE, None)
        forkserver.stop(process)


@pytest.fixture
def real_exec(monkeypatch: pytest.MonkeyPatch) -> None:
    """For tests about start-up itself: `gateway` is started by a real exec, never by the fork server."""
    monkeypatch.delenv(forkserver.VARIABLE, raising=False)
