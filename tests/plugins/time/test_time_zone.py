"""Days counted in the computer's zone (no `timezone` setting) are cut at their own midnight in winter and in
summer alike: the zone is taken by its name, not by the offset it has on the day of the call."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import gateway_time
import pytest
from gateway_time import sample

from gateway.testing import make_gateway

# 23:30 to 00:30 in Paris on a winter night (+01:00) and on a summer night (+02:00): whatever the season of the
# day the test runs, one of the two nights has another offset than today.
NIGHTS = {
    ("2026-01-16", "2026-01-17"): (datetime(2026, 1, 16, 22, 30, tzinfo=UTC), datetime(2026, 1, 16, 23, 30, tzinfo=UTC)),
    ("2026-07-16", "2026-07-17"): (datetime(2026, 7, 16, 21, 30, tzinfo=UTC), datetime(2026, 7, 16, 22, 30, tzinfo=UTC)),
}


@pytest.fixture
def in_paris(computer_zone_is) -> None:  # noqa: ANN001
    """The computer's zone is Europe/Paris, for this test alone."""
    computer_zone_is("Europe/Paris")


def test_a_night_across_midnight_is_cut_at_the_persons_midnight_in_winter_and_in_summer(
        gateway_home: Path, in_paris: None) -> None:
    db, folder = gateway_home / "timewarrior", gateway_home / "Invoices"
    (db / "data").mkdir(parents=True)
    folder.mkdir()
    for start, end in NIGHTS.values():
        with (db / "data" / f"{start:%Y-%m}.data").open("a") as handle:
            handle.write(sample.interval_line(start, end, ["night shift"]))
    gateway = make_gateway([gateway_time], home=gateway_home, projects=[], config={
        "gateway": {"plugins": ["time"]}, "plugins": {"time": {"timewarrior": str(db), "invoices": str(folder)}}})
    for (first, second), _night in NIGHTS.items():
        answer = gateway.call("time_spent", {"since": first, "until": second, "by": "day"})
        assert not answer.is_error, answer.text
        assert {d["day"]: d["hours"] for d in answer.data["days"]} == {first: 0.5, second: 0.5}, answer.text
        assert "(Europe/Paris)" in answer.text.splitlines()[0]
