"""Every message a real `gateway serve` sends validates against the specification's own JSON Schema of the revision
it negotiated (tests/data/mcp-schema, vendored unchanged): for each revision from 2024-11-05 to 2026-07-28, a
client written here speaks raw JSON-RPC on stdio, lists and calls every tool of every built-in (arguments made
from each tool's input schema), reads every listed resource and gets every prompt; each response and notification
is checked against the envelope and against the result type of its method."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from queue import Empty, Queue
from typing import Any

import jsonschema
import pytest
from gateway_mail.demo import write_maildir, write_organizer

from gateway.api.context import home_environment
from gateway.testing import write_config
from tests.forkserver import gateway_command

SCHEMAS = Path(__file__).resolve().parents[1] / "data" / "mcp-schema"
REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
MODERN = "2026-07-28"
RESULT_OF = {"initialize": "InitializeResult", "server/discover": "DiscoverResult", "ping": "EmptyResult",
             "tools/list": "ListToolsResult", "tools/call": "CallToolResult", "resources/list": "ListResourcesResult",
             "resources/templates/list": "ListResourceTemplatesResult", "resources/read": "ReadResourceResult",
             "prompts/list": "ListPromptsResult", "prompts/get": "GetPromptResult"}

CACHEABLE = {"server/discover", "tools/list", "resources/list", "resources/templates/list", "resources/read",
             "prompts/list"}

CORE_TASKS = "2025-11-25"
TASK_RESULT_OF = {"tasks/get": "GetTaskResult", "tasks/list": "ListTasksResult", "tasks/cancel": "CancelTaskResult",
                  "tasks/result": "GetTaskPayloadResult"}
EXTENSION_SCHEMA = "ext-tasks-2026-07-28"  # the tasks extension's definitions (see the README beside the schemas)


@functools.cache
def _schema(revision: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / f"{revision}.json").read_text())


@functools.cache  # one validator a definition: it keeps the references it has resolved
def validator(revision: str, definition: str) -> jsonschema.protocols.Validator:
    schema = _schema(revision)
    defs = "$defs" if "$defs" in schema else "definitions"
    assert definition in schema[defs], f"{definition} is not in the {revision} schema"
    root = {**schema, "$ref": f"#/{defs}/{definition}"}
    cls = jsonschema.validators.validator_for(schema)
    return cls(root)


def problems(revision: str, definition: str, value: Any) -> list[str]:
    return [f"{definition} at {'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator(revision, definition).iter_errors(value)]


class RawClient:
    """JSON-RPC on a `gateway serve` subprocess's stdin/stdout, one message a line, every message kept."""

    def __init__(self, home: Path, revision: str, capabilities: dict[str, Any] | None = None) -> None:
        env = {"PATH": os.environ.get("PATH", ""), **home_environment(home)}
        self.capabilities = capabilities or {}  # the client's, sent with each 2026-07-28 request
        self.process = subprocess.Popen(gateway_command("serve"), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.revision = revision
        self.messages: Queue[dict[str, Any]] = Queue()
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.messages.put(json.loads(line))

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        params = dict(params or {})
        if self.revision == MODERN:
            params["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                               "io.modelcontextprotocol/clientInfo": {"name": "schema-check", "version": "1"},
                               "io.modelcontextprotocol/clientCapabilities": self.capabilities}
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()
        while True:
            try:
                answer = self.messages.get(timeout=60)
            except Empty:
                raise AssertionError(f"no answer to {method} in 60 s") from None
            self.seen.append((method, answer))
            if answer.get("id") == self.next_id:
                return answer

    def notify(self, method: str) -> None:
        self.process.stdin.write((json.dumps({"jsonrpc": "2.0", "method": method}) + "\n").encode())
        self.process.stdin.flush()

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


def _value(schema: dict[str, Any], name: str) -> Any:
    """A plausible value for a required argument, from its schema alone."""
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind is None and "anyOf" in schema:
        return _value(next(s for s in schema["anyOf"] if s.get("type") != "null"), name)
    if kind == "integer":
        return max(schema.get("minimum", 1), 1)
    if kind == "number":
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    if kind == "object":
        return {}
    return {"address": "sioul:project/garden", "query": "compost", "title": "Water the beds", "text": "A note.",
            "label": "ham", "to": "sioul:project/garden", "path": "~/Notes", "start": "today",
            "body": "Thanks."}.get(name, "garden")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("schema") / "home"
    home.mkdir()
    write_maildir(home / "Mail" / "demo", datetime.now(UTC).timestamp())
    table = write_organizer(home, datetime.now(UTC))
    write_config(home, {"gateway": {"plugins": ["sessions", "cron", "timeline", "mail", "spam", "hello"]},
                        "plugins": {"mail": {**table, "accounts": [{"name": "demo", "maildir": str(home / "Mail" / "demo"),
                                                                   "addresses": ["pat@example.org"]}]}}},
                 projects=[{"id": "garden", "name": "Community garden", "ai": True, "paths": ["~/Notes/garden"]},
                           {"id": "lawsuit", "ai": False, "senders": ["@law.example.net"]}])
    return home


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_message_validates_against_the_revisions_schema(home: Path, revision: str) -> None:
    client = RawClient(home, revision)
    try:
        if revision == MODERN:
            client.request("server/discover")
        else:
            started = client.request("initialize", {"protocolVersion": revision, "capabilities": {},
                                                    "clientInfo": {"name": "schema-check", "version": "1"}})
            assert started["result"]["protocolVersion"] == revision
            client.notify("notifications/initialized")
            client.request("ping")
        tools = client.request("tools/list")["result"]["tools"]
        assert len(tools) > 30
        for tool in tools:
            schema = tool["inputSchema"]
            arguments = {name: _value(schema.get("properties", {}).get(name, {}), name)
                         for name in schema.get("required", [])}
            client.request("tools/call", {"name": tool["name"], "arguments": arguments})
        resources = client.request("resources/list")["result"]["resources"]
        for resource in resources[:25]:
            client.request("resources/read", {"uri": resource["uri"]})
        client.request("resources/templates/list")
        for prompt in client.request("prompts/list")["result"]["prompts"]:
            arguments = {a["name"]: "garden" for a in prompt.get("arguments", []) if a.get("required")}
            client.request("prompts/get", {"name": prompt["name"], "arguments": arguments})
        client.request("tools/call", {"name": "no_such_tool", "arguments": {}})  # an error, in the schema's shape
    finally:
        client.close()
    found = []
    for method, message in client.seen:
        envelope = "JSONRPCMessage"
        found += problems(revision, envelope, message)
        if "result" in message and method in RESULT_OF:
            found += [f"{method}: {p}" for p in problems(revision, RESULT_OF[method], message["result"])]
    assert not found, f"{len(found)} messages break the {revision} schema:\n" + "\n".join(found[:20])
    if revision == MODERN:
        # The person's data: a cache keeps it for the same authorization only, and nothing is promised fresh.
        hints = {(method, message["result"].get("cacheScope"), message["result"].get("ttlMs"))
                 for method, message in client.seen if "result" in message and method in CACHEABLE}
        assert {method for method, _, _ in hints} == CACHEABLE
        assert {(scope, ttl) for _, scope, ttl in hints} == {("private", 0)}


def test_a_wrong_answer_is_caught_by_the_check() -> None:
    malformed = {"contents": [{"text": "no uri here"}]}  # a resource's contents without its uri
    assert problems("2025-06-18", "ReadResourceResult", malformed)
    assert problems(MODERN, "ListToolsResult", {"tools": [{"name": "t"}]})  # a tool with no input schema
    assert not problems("2025-06-18", "ReadResourceResult", {"contents": [{"uri": "x:y", "text": "z"}]})


def _task_body(result: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 task message without the revision's result envelope, which the extension's closed objects omit."""
    return {key: value for key, value in result.items() if key not in ("resultType", "_meta")}


@pytest.mark.parametrize("revision", [CORE_TASKS, MODERN])
def test_task_messages_validate_against_the_revisions_schema(tmp_path: Path, revision: str) -> None:
    from gateway.wire.tasks import EXTENSION

    home = tmp_path / "home"
    write_config(home, {"gateway": {"plugins": ["conformance"]}, "plugins": {"conformance": {"enabled": True}}})
    client = RawClient(home, revision, {"extensions": {EXTENSION: {}}})
    checked: list[tuple[str, dict[str, Any]]] = []  # (definition, value), beside the envelope of every message
    try:
        if revision == MODERN:
            client.request("server/discover")
            created = client.request("tools/call", {"name": "test_slow_work", "arguments": {"steps": 15}})["result"]
            assert created["resultType"] == "task"
            checked.append((f"{EXTENSION_SCHEMA}:Task", _task_body(created)))
            working = client.request("tasks/get", {"taskId": created["taskId"]})["result"]
            checked.append((f"{EXTENSION_SCHEMA}:DetailedTask", _task_body(working)))
            for method in ("tasks/update", "tasks/cancel"):
                params = {"taskId": created["taskId"], **({"inputResponses": {}} if method == "tasks/update" else {})}
                acknowledged = client.request(method, params)["result"]
                assert not _task_body(acknowledged), f"{method} is answered with an empty result"
                checked.append(("Result", acknowledged))
            while (ended := client.request("tasks/get", {"taskId": created["taskId"]})["result"])["status"] in (
                    "working", "input_required"):
                time.sleep(0.1)  # the call's deadline ends it whatever happens
            checked.append((f"{EXTENSION_SCHEMA}:DetailedTask", _task_body(ended)))
            done = client.request("tools/call", {"name": "test_slow_work", "arguments": {"steps": 12}})["result"]
            while (finished := client.request("tasks/get", {"taskId": done["taskId"]})["result"])["status"] == "working":
                time.sleep(0.1)
            assert finished["status"] == "completed"
            checked += [(f"{EXTENSION_SCHEMA}:DetailedTask", _task_body(finished)),
                        ("CallToolResult", finished["result"])]
            checked += [("Result", message["result"]) for method, message in client.seen
                        if method.startswith("tasks/") or "resultType" in message.get("result", {})]
        else:
            client.request("initialize", {"protocolVersion": revision, "capabilities": {},
                                          "clientInfo": {"name": "schema-check", "version": "1"}})
            client.notify("notifications/initialized")
            created = client.request("tools/call", {"name": "test_slow_work", "arguments": {"steps": 3},
                                                    "task": {"ttl": 30_000},
                                                    "_meta": {"progressToken": "schema-1"}})["result"]
            checked.append(("CreateTaskResult", created))
            task_id = created["task"]["taskId"]
            client.request("tasks/get", {"taskId": task_id})
            client.request("tasks/list")
            answer = client.request("tasks/result", {"taskId": task_id})["result"]
            checked.append(("CallToolResult", answer))
            other = client.request("tools/call", {"name": "test_slow_work", "arguments": {"steps": 30},
                                                  "task": {}})["result"]["task"]["taskId"]
            client.request("tasks/cancel", {"taskId": other})
            checked += [(TASK_RESULT_OF[method], message["result"]) for method, message in client.seen
                        if method in TASK_RESULT_OF and "result" in message]
            checked += [("ProgressNotification", message) for _method, message in client.seen
                        if message.get("method") == "notifications/progress"]
    finally:
        client.close()
    assert {definition for definition, _value in checked} >= (
        {"CreateTaskResult", "ProgressNotification", *TASK_RESULT_OF.values()} if revision == CORE_TASKS
        else {f"{EXTENSION_SCHEMA}:Task", f"{EXTENSION_SCHEMA}:DetailedTask", "Result", "CallToolResult"})
    found = [problem for _method, message in client.seen for problem in problems(revision, "JSONRPCMessage", message)]
    for definition, value in checked:
        schema, _, name = definition.rpartition(":")
        found += problems(schema or revision, name, value)
    assert not found, f"{len(found)} task messages break the {revision} schema:\n" + "\n".join(found[:20])


def test_a_wrong_task_is_caught_by_the_check() -> None:
    task = {"taskId": "t", "status": "working", "createdAt": "2026-12-01T10:00:00Z",
            "lastUpdatedAt": "2026-12-01T10:00:00Z"}
    assert problems(CORE_TASKS, "CreateTaskResult", {"task": task})  # no ttl
    assert not problems(CORE_TASKS, "CreateTaskResult", {"task": {**task, "ttl": 1000}})
    assert problems(EXTENSION_SCHEMA, "DetailedTask", {**task, "ttlMs": 1000, "status": "completed"})  # no result
    assert not problems(EXTENSION_SCHEMA, "DetailedTask", {**task, "ttlMs": 1000})
