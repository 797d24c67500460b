"""The three tools, called as a host would (argument checks, gate, masks, audit) through make_gateway."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import gateway_timeline
import pytest

from gateway.testing import make_gateway
from tests.plugins.timeline.timeline_helpers import (
    envelope,
    fill,
    gateway_config,
    home_store,
    iso,
    work_morning,
)


@pytest.fixture
def morning(gateway_home: Path, now):
    start = now - timedelta(minutes=50)
    fill(home_store(gateway_home), work_morning(start))
    return make_gateway([gateway_timeline], config=gateway_config(), home=gateway_home), start


def test_the_tools_are_listed_read_only_in_order(gateway_home: Path) -> None:
    gateway = make_gateway([gateway_timeline], config=gateway_config(), home=gateway_home)
    assert gateway.list_tools() == ["get_timeline", "query_events", "get_status"]
    tools = {t.name: t.tool for t in gateway.catalogue().tools}
    assert all(tool.read_only for tool in tools.values())
    assert set(tools["query_events"].input_schema["properties"]) == {
        "since",
        "until",
        "types",
        "app",
        "bundle_id",
        "limit",
        "order",
    }
    assert set(tools["get_timeline"].input_schema["properties"]) == {"since", "until", "format", "max_tokens"}


def test_timeline_groups_the_morning_into_sessions_with_headings_and_bullets(morning) -> None:
    gateway, start = morning
    answer = gateway.call("get_timeline", {"since": "1h"})
    assert not answer.is_error, answer.text
    data = answer.data
    assert data["format"] == "markdown" and data["truncated"] is False
    assert data["range"]["since"].endswith("Z") and data["range"]["until"].endswith("Z")
    content = data["content"]
    headings = [line for line in content.splitlines() if line.startswith("## ")]
    assert headings == [
        f"## {start:%H:%M}-{start + timedelta(minutes=12):%H:%M} Code — store.py — gateway",
        f"## {start + timedelta(minutes=12):%H:%M}-{start + timedelta(minutes=25):%H:%M} Firefox — PR #42 — Mozilla Firefox",
        f"## {start + timedelta(minutes=25):%H:%M}-{start + timedelta(minutes=35):%H:%M} Slack — general — Example Team",
    ]
    assert "- Files: store.py" in content
    assert "hint" not in data  # nothing to say: the store is there
    assert "- Visited 2 pages on github.example.com, docs.example.org: PR #42; WAL mode" in content
    assert "- 30 events: 30 input.key" in content and "- 20 events: 20 ui.click" in content
    assert data["token_estimate"] == -(-len(content) // 4)
    assert json.loads(answer.text)["content"] == content  # the frame's lines are inside the JSON string
    assert content.startswith("<<<data ") and content.count(gateway_timeline_mark(content)) == 2


def gateway_timeline_mark(text: str) -> str:
    first = next(line for line in text.splitlines() if line.startswith("<<<data "))
    return first.split()[1].rstrip(":")


def test_idle_time_ends_a_session(morning) -> None:
    gateway, start = morning
    content = gateway.call("get_timeline", {"since": "1h"}).data["content"]
    idle_start = start + timedelta(minutes=35)
    assert f"-{idle_start:%H:%M} Slack" in content


def test_structured_format_gives_a_sessions_array(morning) -> None:
    gateway, start = morning
    data = gateway.call("get_timeline", {"since": "1h", "format": "structured"}).data
    assert data["format"] == "structured" and "content" not in data
    sessions = data["sessions"]
    assert [s["app"] for s in sessions] == ["Code", "Firefox", "Slack"]
    assert sessions[0]["start"] == iso(start) and sessions[0]["files"] == ["/home/ada/src/gateway/store.py"]
    assert sessions[1]["pages"][0] == {
        "title": "PR #42",
        "url": "https://github.example.com/ada/gateway/pull/42",
    }
    assert sessions[0]["bundle_id"] == "com.microsoft.VSCode"
    assert data["token_estimate"] > 0


def test_over_max_tokens_the_oldest_sessions_are_cut(gateway_home: Path, now) -> None:
    start = now - timedelta(minutes=90)
    events = []
    for index in range(30):  # thirty three-minute sessions, alternating between two apps
        app = "Code" if index % 2 else "Terminal"
        events.append(
            envelope(
                start + timedelta(minutes=3 * index), "app.focus", app, f"task number {index} of the day"
            )
        )
    fill(home_store(gateway_home), events)
    gateway = make_gateway([gateway_timeline], config=gateway_config(), home=gateway_home)
    whole = gateway.call("get_timeline", {"since": "2h"}).data
    small = gateway.call("get_timeline", {"since": "2h", "max_tokens": 200}).data
    assert whole["truncated"] is False and whole["content"].count("## ") == 30
    assert small["truncated"] is True and small["token_estimate"] <= 200
    assert "task number 29 of the day" in small["content"]
    assert "task number 0 of the day" not in small["content"]
    assert "older sessions cut to stay under max_tokens" in small["content"]
    structured = gateway.call("get_timeline", {"since": "2h", "max_tokens": 200, "format": "structured"}).data
    assert structured["truncated"] is True and structured["token_estimate"] <= 200
    assert structured["sessions"][-1]["title"] == "task number 29 of the day"
    assert len(structured["sessions"]) < 30


def test_query_events_gives_envelopes_filtered_by_type_prefix_app_and_bundle(morning) -> None:
    gateway, start = morning
    data = gateway.call("query_events", {"since": "1h", "types": ["browser.*"]}).data
    assert data["count"] == 2 and data["truncated"] is False
    assert {e["type"] for e in data["events"]} == {"browser.navigate"}
    event = data["events"][0]
    assert list(event) == [
        "v",
        "id",
        "ts",
        "mono_ns",
        "source",
        "type",
        "app",
        "window",
        "element",
        "data",
        "redaction",
    ]
    assert gateway.call("query_events", {"since": "1h", "types": ["app.focus"]}).data["count"] == 3
    assert gateway.call("query_events", {"since": "1h", "app": "firefox"}).data["count"] == 23
    assert (
        gateway.call("query_events", {"since": "1h", "bundle_id": "com.tinyspeck.slackmacgap"}).data["count"]
        == 1
    )
    mixed = gateway.call("query_events", {"since": "1h", "types": ["app.focus", "user.*"]}).data
    assert mixed["count"] == 5


def test_query_events_limit_truncates_but_counts_everything(morning) -> None:
    gateway, start = morning
    data = gateway.call("query_events", {"since": "1h", "types": ["input.key"], "limit": 5}).data
    assert data["count"] == 30 and data["truncated"] is True and len(data["events"]) == 5
    newest = gateway.call(
        "query_events", {"since": "1h", "types": ["input.key"], "limit": 5, "order": "newest_first"}
    ).data["events"]
    assert newest[0]["ts"] > newest[-1]["ts"] > data["events"][-1]["ts"]
    over = gateway.call("query_events", {"since": "1h", "limit": 5000})
    assert over.is_error and "limit" in over.text


def test_query_events_range_is_the_one_asked(morning) -> None:
    gateway, start = morning
    since, until = start + timedelta(minutes=12), start + timedelta(minutes=13)
    data = gateway.call("query_events", {"since": iso(since), "until": iso(until)}).data
    assert data["range"] == {
        "since": since.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "until": until.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    assert all(iso(since) <= e["ts"] < iso(until) for e in data["events"])
    assert data["count"] == len(data["events"]) == 4


@pytest.mark.parametrize("tool", ["get_timeline", "query_events"])
@pytest.mark.parametrize(("argument", "value"), [("since", "tomorrow"), ("until", "5x"), ("since", "")])
def test_a_bad_time_expression_is_an_error_naming_the_forms(
    morning, tool: str, argument: str, value: str
) -> None:
    gateway, _start = morning
    answer = gateway.call(tool, {argument: value})
    assert answer.is_error
    assert answer.text.startswith(argument) and "15m, 2h, 3d" in answer.text and "yesterday" in answer.text


def test_a_bad_type_pattern_is_refused(morning) -> None:
    gateway, _start = morning
    answer = gateway.call("query_events", {"types": ["browser*"]})
    assert answer.is_error and "browser.*" in answer.text


def test_an_empty_store_answers_nothing_and_says_how_to_fill_it(gateway_home: Path) -> None:
    gateway = make_gateway([gateway_timeline], config=gateway_config(), home=gateway_home)
    timeline = gateway.call("get_timeline", {})
    events = gateway.call("query_events", {})
    assert not timeline.is_error and not events.is_error
    assert timeline.data["content"] == "" and events.data["count"] == 0
    # The sentence for the person is a field of the object (and so of the text, which is its JSON).
    for answer in (timeline, events):
        assert "gateway timeline import activitywatch" in answer.data["hint"]
        assert json.loads(answer.text)["hint"] == answer.data["hint"]


def test_events_beyond_the_retention_are_not_served(gateway_home: Path, now) -> None:
    fill(
        home_store(gateway_home),
        [
            envelope(now - timedelta(hours=5), "app.focus", "Code", "old"),
            envelope(now - timedelta(minutes=5), "app.focus", "Code", "new"),
        ],
    )
    gateway = make_gateway([gateway_timeline], config=gateway_config(retention_hours=2), home=gateway_home)
    data = gateway.call("query_events", {"since": "1d"}).data
    assert [e["window"]["title"] for e in data["events"]] == ["new"]
    assert "old" not in gateway.call("get_timeline", {"since": "1d"}).data["content"]


def test_status_is_running_only_with_a_fresh_heartbeat(gateway_home: Path, now) -> None:
    path = home_store(gateway_home)
    fill(
        path,
        [
            envelope(now - timedelta(minutes=5), "app.focus", "Code", "a"),
            envelope(
                now - timedelta(minutes=4),
                "recorder.heartbeat",
                data={"capture": {"sources": ["app", "window"], "text_content": False}},
            ),
        ],
    )
    gateway = make_gateway([gateway_timeline], config=gateway_config(), home=gateway_home)
    stale = gateway.call("get_status").data
    assert stale["running"] is False
    fill(path, [envelope(now, "recorder.heartbeat", data={"paused": False, "events_dropped": 2})])
    fresh = gateway.call("get_status")
    assert fresh.data["running"] is True and json.loads(fresh.text)["running"] is True
    assert fresh.data["events_dropped"] == 2
    assert fresh.data["last_event_ts"] == (now - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert fresh.data["retention_hours"] == 168
    assert set(fresh.data) == {
        "running",
        "paused",
        "last_event_ts",
        "events_dropped",
        "degraded",
        "retention_hours",
        "oldest_event_ts",
        "capture",
        "permissions_ok",
    }


def test_status_without_any_store_says_nothing_is_recorded(gateway_home: Path) -> None:
    gateway = make_gateway([gateway_timeline], config=gateway_config(), home=gateway_home)
    answer = gateway.call("get_status")
    # No event: the times are absent (not null, which the output schema keeps out for every host's validator).
    assert answer.data["running"] is False and "last_event_ts" not in answer.data
    assert json.loads(answer.text)["running"] is False
    assert "store" in answer.data["degraded"]
    assert "gateway timeline import activitywatch" in answer.data["hint"]


def test_calls_are_audited_with_the_addresses_given(morning, audit_lines) -> None:
    gateway, _start = morning
    data = gateway.call("query_events", {"since": "1h", "types": ["browser.*"]}).data
    entry = audit_lines()[-1]
    assert entry["tool"] == "query_events"
    assert entry["given"] == [f"timeline://events/{e['id']}" for e in data["events"]]
    assert json.dumps(entry).count("PR #42") == 0


def test_an_unreadable_store_is_said_not_crashed_on(gateway_home: Path, now) -> None:
    path = fill(home_store(gateway_home), [envelope(now - timedelta(minutes=5), "app.focus", "Code", "a")])
    path.write_bytes(b"this is not a database at all " * 200)
    gateway = make_gateway([gateway_timeline], config=gateway_config(), home=gateway_home)
    for tool in ("get_timeline", "query_events"):
        answer = gateway.call(tool, {})
        assert answer.is_error and "cannot be read" in answer.text and "plugin_failed" not in answer.text
    status = gateway.call("get_status")
    assert not status.is_error
    assert status.data["permissions_ok"] is False and "cannot be read" in status.data["degraded"]["store"]
