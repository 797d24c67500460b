"""End to end: a real `gateway serve` subprocess, and the SDK's own client, for each tool, the resources and
the prompt; and the closed project's canary through that same session."""

from __future__ import annotations

import http.server
import json
import threading
from datetime import timedelta
from pathlib import Path

import anyio
from gateway_timeline.store import Store

from gateway.testing import serve_client, write_config
from tests.plugins.timeline.test_timeline_privacy import CANARY, VAULT, vault_events
from tests.plugins.timeline.timeline_helpers import fill, gateway_config, home_store, work_morning


def everything(result) -> str:
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {})


def resource_text(result) -> str:
    return "\n".join(getattr(content, "text", "") for content in result.contents)


def test_each_tool_resource_and_the_prompt_through_a_real_server(gateway_home: Path, now) -> None:
    fill(home_store(gateway_home), work_morning(now - timedelta(minutes=50)) + vault_events(now))
    write_config(gateway_home, gateway_config(), projects=VAULT)

    async def session() -> None:
        seen: list[str] = []
        async with serve_client(gateway_home) as client:
            tools = await client.list_tools()
            assert [t.name for t in tools.tools] == ["get_timeline", "query_events", "get_status"]
            assert all(t.annotations.read_only_hint for t in tools.tools)

            timeline = await client.call_tool("get_timeline", {"since": "1h"})
            assert not timeline.is_error
            assert timeline.structured_content["format"] == "markdown"
            assert "## " in timeline.structured_content["content"]
            assert timeline.structured_content["left_out"] == 4

            structured = await client.call_tool("get_timeline", {"since": "1h", "format": "structured"})
            assert [s["app"] for s in structured.structured_content["sessions"]][:3] == ["Code", "Firefox", "Slack"]

            events = await client.call_tool("query_events", {"since": "1h", "types": ["browser.*"]})
            assert events.structured_content["count"] == 2
            assert events.structured_content["events"][0]["type"] == "browser.navigate"
            narrowed = await client.call_tool("query_events", {"since": "1h", "app": "Vault App"})
            assert narrowed.structured_content["count"] == 0 and narrowed.structured_content["left_out"] == 4

            status = await client.call_tool("get_status", {})
            assert status.structured_content["running"] is False
            assert json.loads(status.content[0].text) == status.structured_content

            bad = await client.call_tool("query_events", {"since": "next tuesday"})
            assert bad.is_error and "15m, 2h, 3d" in bad.content[0].text
            unknown = await client.call_tool("query_events", {"app_name": "Code"})
            assert unknown.is_error and "app_name" in unknown.content[0].text

            listed = await client.list_resources()
            uris = {str(r.uri) for r in listed.resources}
            assert {"timeline://recent", "timeline://config"} <= uris
            recent = await client.read_resource("timeline://recent")
            config = await client.read_resource("timeline://config")
            assert "## " in resource_text(recent) and "Kept for: 168 hours" in resource_text(config)

            refused = None
            try:
                refused = await client.read_resource("timeline://events/evt_vault_page")
            except Exception as error:  # the SDK may raise the error rather than return it
                seen.append(str(error))
                assert "closed to AI agents" in str(error)
            if refused is not None:
                assert "closed to AI agents" in resource_text(refused)
                seen.append(resource_text(refused))

            prompts = await client.list_prompts()
            assert [p.name for p in prompts.prompts] == ["resume_my_work"]
            prompt = await client.get_prompt("resume_my_work", {"focus": "the gateway"})
            text = prompt.messages[0].content.text
            assert "get_timeline" in text and "1h" in text and "the gateway" in text

            for result in (timeline, structured, events, narrowed, status, bad):
                seen.append(everything(result))
            seen += [resource_text(recent), resource_text(config), text]
        for answer in seen:
            assert CANARY not in answer and "vault.example.com" not in answer

    anyio.run(session)


# A module Python imports at start-up (first `sitecustomize` on the path): every socket connection the server
# process attempts to an IP address is written down, one line each, in the file named by GATEWAY_TEST_CONNECTS.
RECORD_CONNECTS = '''
import os, socket

_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex
open(os.environ["GATEWAY_TEST_CONNECTS"] + ".loaded", "w").close()  # the recorder is in place


def _note(sock, address):
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        with open(os.environ["GATEWAY_TEST_CONNECTS"], "a") as handle:
            handle.write(repr(address) + "\\n")


def connect(self, address):
    _note(self, address)
    return _connect(self, address)


def connect_ex(self, address):
    _note(self, address)
    return _connect_ex(self, address)


socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
'''


class _ActivityWatchInfo(http.server.BaseHTTPRequestHandler):
    """Answers as a live ActivityWatch server does, and counts who asked."""

    asked = 0

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        type(self).asked += 1
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b'{"hostname": "desk", "version": "v0.13"}')

    def log_message(self, *args: object) -> None:
        pass


def test_get_status_asks_no_server_and_an_empty_store_is_not_running(gateway_home: Path, tmp_path: Path) -> None:
    """The status comes from the store and the importers' records only: with ActivityWatch's port answering (when
    this machine lets the test take it) and the old probe setting on, a real server connects to nothing, and an
    empty store says not running."""
    with Store.open(home_store(gateway_home)):
        pass  # an empty store: no event, no heartbeat
    write_config(gateway_home, {"gateway": {"plugins": ["timeline"]},
                                "plugins": {"timeline": {"timezone": "UTC", "probe_activitywatch": True}}})
    site, connects = tmp_path / "site", tmp_path / "connects.txt"
    site.mkdir()
    (site / "sitecustomize.py").write_text(RECORD_CONNECTS)
    connects.write_text("")
    try:
        listener = http.server.HTTPServer(("127.0.0.1", 5600), _ActivityWatchInfo)
    except OSError:  # the port is someone else's here: the recorded connections alone tell
        listener = None
    if listener is not None:
        threading.Thread(target=listener.serve_forever, daemon=True).start()

    async def session() -> dict:
        env = {"PYTHONPATH": str(site), "GATEWAY_TEST_CONNECTS": str(connects)}
        async with serve_client(gateway_home, extra_env=env) as client:
            status = await client.call_tool("get_status", {})
            config = await client.read_resource("timeline://config")
            assert "Recording now: no" in resource_text(config)
            return status.structured_content

    try:
        status = anyio.run(session)
    finally:
        if listener is not None:
            listener.shutdown()
            listener.server_close()
    assert status["running"] is False and "last_event_ts" not in status
    assert Path(f"{connects}.loaded").exists(), "the recorder was not loaded by the server"
    assert connects.read_text() == "", "the server connected to the network"
    assert _ActivityWatchInfo.asked == 0
