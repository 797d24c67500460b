"""How sessions are cut from the minute summary, and what a session says: tested on rows made by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import gateway_timeline
from gateway_timeline import sessions

from gateway.testing import make_gateway
from tests.plugins.timeline.timeline_helpers import envelope, fill, gateway_config, home_store

T0 = int(datetime(2026, 8, 16, 8, 0, tzinfo=UTC).timestamp() * 1000)
MIN = 60_000


def row(minute: int, kind: str, app: str | None, label: str | None = None, n: int = 1, *, first: int = 0,
        last: int | None = None, url: str | None = None, path: str | None = None) -> tuple:
    """A summary row `minute` minutes after T0; first/last in seconds after that minute's start."""
    start = T0 + minute * MIN
    return (start // MIN, kind, app, None, label, url, path, n, start + first * 1000,
            start + (first if last is None else last) * 1000, 0 if last is None else 1)


def test_an_activitywatch_event_with_a_long_duration_holds_its_minutes() -> None:
    rows = [row(0, "app.focus", "Code", "a.py", last=25 * 60), row(25, "app.focus", "Slack", "general", last=60)]
    found = sessions.build(rows, T0, T0 + 40 * MIN)
    assert [(s.app, (s.start_ms - T0) // MIN, (s.end_ms - T0) // MIN) for s in found] == [("Code", 0, 25),
                                                                                          ("Slack", 25, 26)]


def test_a_point_focus_event_holds_until_another_app_or_half_an_hour() -> None:
    rows = [row(0, "app.focus", "Code", "a.py"), row(10, "app.focus", "Slack", "general")]
    found = sessions.build(rows, T0, T0 + 60 * MIN)
    assert [(s.app, (s.end_ms - T0) // MIN) for s in found] == [("Code", 10), ("Slack", 40)]


def test_idle_ends_a_session_whether_marked_or_with_a_duration() -> None:
    marked = [row(0, "app.focus", "Code", "a"), row(5, "user.idle", None), row(20, "user.active", None),
              row(20, "input.key", "Code", "a")]
    spans = [(s.start_ms - T0) // MIN for s in sessions.build(marked, T0, T0 + 22 * MIN)]
    assert spans == [0, 20]
    timed = [row(0, "app.focus", "Code", "a", last=30 * 60), row(5, "user.idle", None, last=10 * 60)]
    found = sessions.build(timed, T0, T0 + 30 * MIN)
    assert [((s.start_ms - T0) // MIN, (s.end_ms - T0) // MIN) for s in found] == [(0, 5), (15, 30)]


def test_a_one_minute_switch_is_folded_into_the_session_around_it() -> None:
    rows = [row(0, "app.focus", "Code", "a.py", last=59)] + [row(m, "input.key", "Code", "a.py", 30) for m in range(1, 5)]
    rows += [row(5, "app.focus", "Slack", "ping", last=50)] + [row(m, "input.key", "Code", "a.py", 30) for m in range(6, 9)]
    (session,) = sessions.build(rows, T0, T0 + 9 * MIN)
    assert session.app == "Code" and session.also == ["Slack"]


def test_the_same_app_under_different_watcher_names_is_one_session() -> None:
    rows = [row(0, "app.focus", "Google-chrome", "PR — Google Chrome", last=600),
            row(1, "browser.navigate", "Google Chrome", "PR", url="https://git.example.com/pr/1", last=300)]
    (session,) = sessions.build(rows, T0, T0 + 10 * MIN)
    assert session.pages == {"https://git.example.com/pr/1": ("PR", session.pages["https://git.example.com/pr/1"][1])}
    assert sessions.app_key("chrome.exe") == sessions.app_key("Google Chrome") == sessions.app_key("Google-chrome")


def test_the_title_is_the_one_seen_longest() -> None:
    rows = [row(0, "app.focus", "Code", "short.py", last=60), row(1, "window.focus", "Code", "long.py", last=8 * 60)]
    (session,) = sessions.build(rows, T0, T0 + 9 * MIN)
    assert session.title == "long.py"


def test_headings_use_the_configured_zone(gateway_home: Path) -> None:
    start = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=30)
    fill(home_store(gateway_home), [envelope(start, "app.focus", "Code", "zoned.py"),
                                    envelope(start + timedelta(minutes=10), "app.focus", "Slack", "chat")])
    gateway = make_gateway([gateway_timeline], config=gateway_config(timezone="Asia/Tokyo"), home=gateway_home)
    content = gateway.call("get_timeline", {"since": "1h"}).data["content"]
    tokyo = start + timedelta(hours=9)
    assert f"## {tokyo:%H:%M}-{tokyo + timedelta(minutes=10):%H:%M} Code — zoned.py" in content
    bad = make_gateway([gateway_timeline], config=gateway_config(timezone="Mars/Olympus"), home=gateway_home)
    answer = bad.call("get_timeline", {})
    assert answer.is_error and "timezone" in answer.text
