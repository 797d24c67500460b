"""For `gateway demo`: the last hour of an invented person's activity, as a recorder would have written it."""

from __future__ import annotations

import json
import time
from pathlib import Path

from gateway import PluginHost
from gateway_timeline import settings
from gateway_timeline.importers.jsonl import ingest_lines
from gateway_timeline.store import Store

# (minutes ago, type, app, window title, data)
ACTIVITY = [
    (55, "app.focus", "Firefox", "Compost rota - Garden board",
     {"url": "https://garden.example.org/board/compost", "tab_title": "Compost rota - Garden board"}),
    (50, "browser.navigate", "Firefox", "Seed order - Garden board",
     {"url": "https://garden.example.org/board/seeds", "tab_title": "Seed order - Garden board"}),
    (44, "app.focus", "Terminal", "~/projects/garden: pytest", {}),
    (38, "browser.navigate", "Firefox", "Reply to the fence letter - Law office",
     {"url": "https://law.example.net/cases/fence", "tab_title": "Reply to the fence letter"}),
    (30, "app.focus", "Mail", "Your verification code is 482913 - Mail", {}),
    (24, "app.focus", "Garden Planner", "Spring beds", {}),
    (12, "browser.navigate", "Firefox", "Rain forecast - Weather",
     {"url": "https://weather.example.com/lyon?session_token=abc123def456ghi789", "tab_title": "Rain forecast"}),
    (5, "app.focus", "Garden Planner", "Spring beds", {}),
]


def make_demo(host: PluginHost) -> list[tuple[str, dict]]:
    now_ms = int(time.time() * 1000)
    lines = []
    for index, (minutes_ago, kind, app, title, data) in enumerate(ACTIVITY):
        moment = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now_ms / 1000 - minutes_ago * 60))
        lines.append(json.dumps({
            "v": 1, "id": f"evt_demo_{index}", "ts": moment, "mono_ns": index, "source": "demo.recorder",
            "type": kind, "app": {"name": app, "bundle_id": None, "pid": 100 + index},
            "window": {"title": title, "id": index}, "element": None, "data": data,
            "redaction": {"applied": False, "rules": []},
        }))
    lines.append(json.dumps({"v": 1, "id": "evt_demo_beat", "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ"),
                             "source": "demo.recorder", "type": "recorder.heartbeat",
                             "data": {"capture": {"sources": ["app", "window", "browser"], "text_content": False}}}))
    path = settings.store_path(host)
    with Store.open(path, own_folder=path.parent == Path(host.folders.data)) as store:
        ingest_lines(lines, store, retention_ms=settings.retention_ms(host.settings), now_ms=now_ms)
    return [
        ("get_status", {}),
        ("get_timeline", {"since": "1h"}),
        ("query_events", {"since": "1h", "types": ["browser.*"], "limit": 5}),
    ]
