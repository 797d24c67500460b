"""A job in the computer's zone (an empty `timezone`) keeps its hour past a change to or from summer time: the
zone is taken by its name, not by the offset it has on the day of the call."""

from __future__ import annotations

import datetime as dt

import pytest
from gateway_cron.schedule import next_run


@pytest.fixture
def in_paris(computer_zone_is) -> None:  # noqa: ANN001
    """The computer's zone is Europe/Paris, for this test alone."""
    computer_zone_is("Europe/Paris")


@pytest.mark.parametrize(("evening", "morning"), [
    # The Saturday evenings before the clocks go forward (March) and back (October) in 2026: whatever the season
    # of the day the test runs, one of the two mornings has another offset than today.
    (dt.datetime(2026, 3, 28, 20, 0, tzinfo=dt.UTC), "2026-03-29T07:00:00+02:00"),
    (dt.datetime(2026, 10, 24, 20, 0, tzinfo=dt.UTC), "2026-10-25T07:00:00+01:00"),
])
def test_the_next_run_in_the_computers_zone_keeps_its_hour_across_summer_time(
        in_paris: None, evening: dt.datetime, morning: str) -> None:
    assert next_run("0 7 * * *", "", now=evening) == morning
    assert next_run("0 7 * * *", "Europe/Paris", now=evening) == morning  # as with the zone named
