"""Tool calls run as tasks through a real `gateway serve`, spoken to in raw JSON-RPC (the SDK's client takes a
tools/call answer for a CallToolResult, which a task is not): 2025-11-25's core tasks (`task` in the call,
tasks/get, tasks/result, tasks/list, tasks/cancel), 2026-07-28's tasks extension (a task when the host names the
extension and the call outlasts a second; tasks/get carries its answer; tasks/update and tasks/cancel
acknowledged), and the revisions without tasks, which neither declare nor serve them. A task's call is a call like
any other: its audit line, its gate; a task belongs to the HTTP session that started it, and is bounded in number.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest

from gateway.testing import read_audit, write_config
from gateway.wire import tasks as tasking
from tests.conformance.test_official_suite import served_over_http
from tests.gateway.test_spec_schema import MODERN, RawClient

CORE = "2025-11-25"
EXTENSION = {"extensions": {tasking.EXTENSION: {}}}
POLL_LIMIT = 120.0  # seconds a poll loop may wait for a task to end before the test fails (never a timing check)


def fixtures_on(home: Path, outside_projects: bool = True, call_timeout: float = 30) -> None:
    write_config(home, {"gateway": {"plugins": ["conformance"], "call_timeout": call_timeout},
                        "plugins": {"conformance": {"enabled": True}},
                        "access": {"outside_projects": outside_projects}})


def started(home: Path, revision: str, capabilities: dict[str, Any] | None = None) -> RawClient:
    client = RawClient(home, revision, capabilities)
    if revision == MODERN:
        client.request("server/discover")
    else:
        answer = client.request("initialize", {"protocolVersion": revision, "capabilities": {},
                                               "clientInfo": {"name": "task-host", "version": "1"}})
        assert answer["result"]["protocolVersion"] == revision
        client.notify("notifications/initialized")
    return client


def ended(client: RawClient, task_id: str) -> dict[str, Any]:
    """tasks/get until the task is in a terminal state; its last answer."""
    give_up = time.monotonic() + POLL_LIMIT
    while True:
        answer = client.request("tasks/get", {"taskId": task_id})["result"]
        if answer["status"] in tasking.TERMINAL:
            return answer
        assert time.monotonic() < give_up, f"the task is still {answer['status']} after {POLL_LIMIT} s"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("tasks") / "home"
    home.mkdir()
    fixtures_on(home)
    return home


def test_core_tasks_are_declared_created_at_once_polled_listed_and_answered(home: Path) -> None:
    client = started(home, CORE)
    try:
        capabilities = client.seen[0][1]["result"]["capabilities"]
        assert capabilities["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        tools = client.request("tools/list")["result"]["tools"]
        assert {tool["execution"]["taskSupport"] for tool in tools} == {"optional"}
        created = client.request("tools/call", {"name": "test_slow_work", "arguments": {"steps": 5},
                                                "task": {"ttl": 60_000},
                                                "_meta": {"progressToken": "garden-1"}})["result"]
        task = created["task"]
        assert task["status"] == "working" and task["ttl"] == 60_000 and len(task["taskId"]) >= 20
        listed = client.request("tasks/list")["result"]["tasks"]
        assert [t["taskId"] for t in listed] == [task["taskId"]]
        answer = client.request("tasks/result", {"taskId": task["taskId"]})["result"]  # waits for the end
        assert answer["content"] == [{"type": "text", "text": "Did 5 steps."}] and not answer["isError"]
        assert answer["_meta"][tasking.RELATED_TASK] == {"taskId": task["taskId"]}
        done = client.request("tasks/get", {"taskId": task["taskId"]})["result"]
        assert done["status"] == "completed"
        assert "4111" not in done["statusMessage"] and done["statusMessage"].startswith("5 of 5")  # masked progress
        told = [message["params"] for _method, message in client.seen
                if message.get("method") == "notifications/progress"]
        assert told and told[-1]["progress"] == 5 and told[-1]["total"] == 5  # the token holds for the task
        assert all(p["progressToken"] == "garden-1" and "4111" not in p["message"] for p in told)
        assert all(p["_meta"][tasking.RELATED_TASK] == {"taskId": task["taskId"]} for p in told)
        unknown = client.request("tasks/get", {"taskId": "not-a-task"})["error"]
        assert unknown["code"] == -32602
    finally:
        client.close()
    lines = [line for line in read_audit(home) if line.get("tool") == "test_slow_work"]
    assert [line["outcome"] for line in lines] == ["ok"] and lines[0]["client"] == "task-host"


def test_core_tasks_are_bounded_in_number_and_a_cancelled_one_has_no_result(home: Path) -> None:
    client = started(home, CORE)
    try:
        ids = [client.request("tools/call", {"name": "test_slow_work", "arguments": {"steps": 40},
                                             "task": {}})["result"]["task"]["taskId"]
               for _ in range(tasking.MAX_RUNNING)]
        over = client.request("tools/call", {"name": "test_slow_work", "arguments": {"steps": 40}, "task": {}})
        assert over["error"]["code"] == -32600 and "cancel one" in over["error"]["message"]
        cancelled = client.request("tasks/cancel", {"taskId": ids[0]})["result"]
        assert cancelled["status"] == "cancelled"
        refused = client.request("tasks/result", {"taskId": ids[0]})["error"]
        assert refused["code"] == -32602 and "cancelled" in refused["message"]
        again = client.request("tasks/cancel", {"taskId": ids[0]})["error"]
        assert again["code"] == -32602 and "cancelled already" in again["message"]
        for task_id in ids[1:]:
            client.request("tasks/cancel", {"taskId": task_id})
        room = client.request("tools/call", {"name": "test_slow_work", "arguments": {"steps": 1}, "task": {}})
        assert ended(client, room["result"]["task"]["taskId"])["status"] == "completed"
    finally:
        client.close()
    # A cancelled call is still written down: one line per task cancelled, none given anything.
    cancelled_lines = [line for line in read_audit(home) if line.get("outcome") == "cancelled"]
    assert len(cancelled_lines) == tasking.MAX_RUNNING
    assert all(line["tool"] == "test_slow_work" and line["given"] == [] for line in cancelled_lines)


def test_a_tasks_call_keeps_the_gate_and_the_deadline_of_a_direct_call(tmp_path: Path) -> None:
    home = tmp_path / "home"
    fixtures_on(home, outside_projects=False)  # the fixtures belong to no project: closed now
    client = started(home, CORE)
    try:
        task = client.request("tools/call", {"name": "test_slow_work", "arguments": {"steps": 2},
                                             "task": {}})["result"]["task"]
        answer = client.request("tasks/result", {"taskId": task["taskId"]})["result"]
        assert answer["isError"] and "Did 2 steps" not in json.dumps(answer)
        fixtures_on(home, call_timeout=1)  # read again by the next call: a second per call
        task = client.request("tools/call", {"name": "test_slow_work", "arguments": {"steps": 100},
                                             "task": {}})["result"]["task"]
        answer = client.request("tasks/result", {"taskId": task["taskId"]})["result"]
        assert answer["isError"] and "Did 100 steps" not in json.dumps(answer)
    finally:
        client.close()
    outcomes = [line["outcome"] for line in read_audit(home) if line.get("tool") == "test_slow_work"]
    assert outcomes == ["refused", "timeout"]


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-06-18"])
def test_revisions_before_tasks_neither_declare_nor_serve_them(home: Path, revision: str) -> None:
    client = started(home, revision)
    try:
        assert "tasks" not in client.seen[0][1]["result"]["capabilities"]
        assert not [t for t in client.request("tools/list")["result"]["tools"] if "execution" in t]
        answer = client.request("tools/call", {"name": "test_slow_work", "arguments": {"steps": 1}, "task": {}})
        assert answer["result"]["content"][0]["text"] == "Did 1 steps."  # the field unknown there: a direct call
        for method in sorted(tasking.CORE_METHODS | tasking.EXTENSION_METHODS):
            assert client.request(method, {"taskId": "x"})["error"]["code"] == -32601, method
    finally:
        client.close()


def test_the_extension_is_declared_a_long_call_becomes_a_task_and_one_can_be_cancelled(home: Path) -> None:
    client = started(home, MODERN, EXTENSION)
    try:
        capabilities = client.seen[0][1]["result"]["capabilities"]
        assert capabilities["extensions"][tasking.EXTENSION] == {} and "tasks" not in capabilities
        assert not [t for t in client.request("tools/list")["result"]["tools"] if "execution" in t]
        quick = client.request("tools/call", {"name": "test_slow_work", "arguments": {"steps": 1}})["result"]
        assert quick["resultType"] == "complete" and quick["content"][0]["text"] == "Did 1 steps."
        created = client.request("tools/call", {"name": "test_slow_work", "arguments": {"steps": 30}})["result"]
        assert created["resultType"] == "task" and created["status"] == "working"
        assert {"result", "error", "inputRequests"}.isdisjoint(created)
        assert client.request("tasks/update", {"taskId": created["taskId"], "inputResponses": {}})["result"]
        done = ended(client, created["taskId"])
        assert done["resultType"] == "complete" and done["status"] == "completed"
        assert done["result"]["content"][0]["text"] == "Did 30 steps."
        for method in ("tasks/result", "tasks/list"):  # the 2025-11-25 methods are not the extension's
            assert client.request(method, {"taskId": created["taskId"]})["error"]["code"] == -32601
        stopped = client.request("tools/call", {"name": "test_slow_work", "arguments": {"steps": 40}})["result"]
        acknowledged = client.request("tasks/cancel", {"taskId": stopped["taskId"]})["result"]
        assert set(acknowledged) <= {"resultType", "_meta"}
        assert ended(client, stopped["taskId"])["status"] == "cancelled"
        assert client.request("tasks/get", {"taskId": "another"})["error"]["code"] == -32602
    finally:
        client.close()


def test_a_host_that_does_not_name_the_extension_gets_its_answer_whatever_the_wait(home: Path) -> None:
    client = started(home, MODERN)
    try:
        answer = client.request("tools/call", {"name": "test_slow_work", "arguments": {"steps": 15}})["result"]
        assert answer["resultType"] == "complete" and answer["content"][0]["text"] == "Did 15 steps."
    finally:
        client.close()


# -- over HTTP: a task is its session's ----------------------------------------------------------------------


def _rpc(http: httpx2.Client, url: str, message: dict[str, Any], session: str | None) -> tuple[dict | None, str]:
    """One JSON-RPC message POSTed; (the answer, JSON or the first SSE data line, or None; the session id)."""
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": CORE}
    if session:
        headers["Mcp-Session-Id"] = session
    response = http.post(url, json=message, headers=headers)
    session = response.headers.get("mcp-session-id", session or "")
    if not response.content:
        return None, session
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        answers = [json.loads(each) for each in data if each]
        return next((a for a in answers if a.get("id") == message.get("id")), None), session
    return response.json(), session


def _http_session(http: httpx2.Client, url: str) -> str:
    _answer, session = _rpc(http, url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": CORE, "capabilities": {}, "clientInfo": {"name": "http-host", "version": "1"}}}, None)
    _rpc(http, url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    return session


def _modern(http: httpx2.Client, url: str, method: str, params: dict[str, Any], host: str) -> dict[str, Any]:
    """One 2026-07-28 request (no session: each POST alone), from a host naming the tasks extension."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": host, "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": EXTENSION}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MODERN,
               "Mcp-Method": method, "Mcp-Name": str(params.get("name") or params.get("taskId"))}
    response = http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": method,
                                    "params": {**params, "_meta": meta}}, headers=headers)
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return [json.loads(each) for each in data if each][-1]
    return response.json()


def test_over_http_a_task_is_seen_by_whoever_started_it_and_no_other(tmp_path: Path) -> None:
    home = tmp_path / "home"
    fixtures_on(home)
    with served_over_http(home) as (port, token), httpx2.Client(
            headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        url = f"http://127.0.0.1:{port}/mcp"
        mine, other = _http_session(http, url), _http_session(http, url)
        assert mine and other and mine != other
        created, _ = _rpc(http, url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "test_slow_work", "arguments": {"steps": 20}, "task": {}}}, mine)
        task_id = created["result"]["task"]["taskId"]
        seen, _ = _rpc(http, url, {"jsonrpc": "2.0", "id": 3, "method": "tasks/get",
                                   "params": {"taskId": task_id}}, mine)
        assert seen["result"]["taskId"] == task_id
        stranger, _ = _rpc(http, url, {"jsonrpc": "2.0", "id": 4, "method": "tasks/get",
                                       "params": {"taskId": task_id}}, other)
        unknown, _ = _rpc(http, url, {"jsonrpc": "2.0", "id": 5, "method": "tasks/get",
                                      "params": {"taskId": "no-such-task"}}, other)
        assert stranger["error"]["code"] == unknown["error"]["code"] == -32602
        assert stranger["error"]["message"].replace(task_id, "ID") == unknown["error"]["message"].replace(
            "no-such-task", "ID")  # the same words as for an id that never was
        listed, _ = _rpc(http, url, {"jsonrpc": "2.0", "id": 6, "method": "tasks/list", "params": {}}, other)
        assert listed["result"]["tasks"] == []
        cancel, _ = _rpc(http, url, {"jsonrpc": "2.0", "id": 7, "method": "tasks/cancel",
                                     "params": {"taskId": task_id}}, other)
        assert cancel["error"]["code"] == -32602
        still, _ = _rpc(http, url, {"jsonrpc": "2.0", "id": 8, "method": "tasks/cancel",
                                    "params": {"taskId": task_id}}, mine)
        assert still["result"]["status"] == "cancelled"  # the stranger's cancel did nothing; its owner's does
        # 2026-07-28 has no sessions: a task is its token's, profile's and host's.
        created = _modern(http, url, "tools/call", {"name": "test_slow_work", "arguments": {"steps": 20}}, "ours")
        assert created["result"]["resultType"] == "task"
        task_id = created["result"]["taskId"]
        assert _modern(http, url, "tasks/get", {"taskId": task_id}, "ours")["result"]["taskId"] == task_id
        assert _modern(http, url, "tasks/get", {"taskId": task_id}, "theirs")["error"]["code"] == -32602
        assert "error" in _modern(http, url, "tasks/cancel", {"taskId": task_id}, "theirs")
        assert _modern(http, url, "tasks/cancel", {"taskId": task_id}, "ours")["result"] is not None
