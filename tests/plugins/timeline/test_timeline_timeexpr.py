"""Time expressions: every accepted form, and every bad form answered with the list of forms."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from gateway_timeline.timeexpr import FORMS, parse, resolve_range

from gateway import ToolError

NOW = datetime(2026, 8, 16, 9, 30, 15, tzinfo=UTC)
PARIS = ZoneInfo("Europe/Paris")  # UTC+2 in August


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("now", NOW),
        ("NOW", NOW),
        ("15m", NOW - timedelta(minutes=15)),
        ("2h", NOW - timedelta(hours=2)),
        ("3d", NOW - timedelta(days=3)),
        (" 2 h ", NOW - timedelta(hours=2)),
        ("2026-08-16T08:00:00Z", datetime(2026, 8, 16, 8, 0, tzinfo=UTC)),
        ("2026-08-16T08:00:00+02:00", datetime(2026, 8, 16, 6, 0, tzinfo=UTC)),
        ("2026-08-16T08:00", datetime(2026, 8, 16, 6, 0, tzinfo=UTC)),  # local (Paris) when no zone
        ("2026-08-16 08:00:30", datetime(2026, 8, 16, 6, 0, 30, tzinfo=UTC)),
        ("2026-08-16", datetime(2026, 8, 15, 22, 0, tzinfo=UTC)),  # local midnight
        ("today", datetime(2026, 8, 15, 22, 0, tzinfo=UTC)),
        ("yesterday", datetime(2026, 8, 14, 22, 0, tzinfo=UTC)),
    ],
)
def test_each_accepted_form_resolves_to_utc(expression: str, expected: datetime) -> None:
    assert parse(expression, NOW, PARIS) == expected


def test_today_follows_the_local_zone_not_utc() -> None:
    late_evening_utc = datetime(2026, 8, 16, 23, 0, tzinfo=UTC)  # already the 17th in Paris
    assert parse("today", late_evening_utc, PARIS) == datetime(2026, 8, 16, 22, 0, tzinfo=UTC)
    assert parse("today", late_evening_utc, ZoneInfo("UTC")) == datetime(2026, 8, 16, 0, 0, tzinfo=UTC)


def test_local_midnight_on_a_daylight_saving_day_uses_that_days_offset() -> None:
    after_change = datetime(2026, 10, 25, 12, 0, tzinfo=UTC)  # Paris went back to UTC+1 that night
    assert parse("today", after_change, PARIS) == datetime(2026, 10, 24, 22, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "expression",
    [
        "",
        "   ",
        "tomorrow",
        "last week",
        "15",
        "15x",
        "-15m",
        "15 minutes",
        "1.5h",
        "2026-13-01",
        "2026-08-32T08:00",
        "16/08/2026",
        "08:00",
        "yesterday 10:00",
        "now-1h",
    ],
)
def test_each_bad_form_is_refused_with_the_forms_taken(expression: str) -> None:
    with pytest.raises(ToolError) as refused:
        parse(expression, NOW, PARIS, "since")
    message = str(refused.value)
    assert message.startswith("since ")
    assert FORMS in message
    for form in ("ISO-8601", "now", "today", "yesterday", "15m", "2h", "3d"):
        assert form in message


def test_a_pair_may_mix_forms() -> None:
    assert resolve_range("yesterday", "today", NOW, PARIS) == (
        datetime(2026, 8, 14, 22, 0, tzinfo=UTC),
        datetime(2026, 8, 15, 22, 0, tzinfo=UTC),
    )
    assert resolve_range("2026-08-16T08:00:00Z", "15m", NOW, PARIS) == (
        datetime(2026, 8, 16, 8, 0, tzinfo=UTC),
        NOW - timedelta(minutes=15),
    )


def test_until_names_itself_when_it_is_the_bad_one() -> None:
    with pytest.raises(ToolError, match=r"^until 'soon'"):
        resolve_range("1h", "soon", NOW, PARIS)


@pytest.mark.parametrize(("since", "until"), [("now", "1h"), ("today", "today"), ("1h", "2h")])
def test_a_range_that_ends_before_it_starts_is_refused(since: str, until: str) -> None:
    with pytest.raises(ToolError, match="must come before until"):
        resolve_range(since, until, NOW, PARIS)
