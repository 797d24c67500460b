"""Fixtures for the timeline plugin's tests."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from timeline_helpers import minute_now  # noqa: E402


@pytest.fixture
def now() -> datetime:
    """The start of the current minute, UTC (events are placed relative to it)."""
    return minute_now()
