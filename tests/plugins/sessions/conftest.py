"""Fixtures for the sessions plugin's tests: a home holding the fixture transcripts, imported, and a gateway on it."""

from __future__ import annotations

from pathlib import Path

import gateway_sessions
import pytest

from gateway.testing import make_gateway
from tests.plugins.sessions.sessions_helpers import CLOSED_VAULT, import_all, place_fixtures


@pytest.fixture
def imported_home(gateway_home: Path) -> Path:
    place_fixtures(gateway_home)
    import_all(gateway_home)
    return gateway_home


@pytest.fixture
def sessions_gateway(imported_home: Path):
    return make_gateway(plugins=[gateway_sessions], projects=CLOSED_VAULT, home=imported_home,
                        config={"plugins": {"sessions": {"refresh": False}}})  # the store as imported above
