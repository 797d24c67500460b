"""Fixtures for the timeline plugin's tests."""

from __future__ import annotations

from datetime import datetime

import pytest

from tests.plugins.timeline.timeline_helpers import minute_now


@pytest.fixture
def now() -> datetime:
    """The start of the current minute, UTC (events are placed relative to it)."""
    return minute_now()
