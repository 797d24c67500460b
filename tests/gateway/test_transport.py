"""gateway.wire.transport: the stdio framing rules, end of input, and a fuzz run, against a real subprocess.

The server under test is tests/gateway/echo_server.py (a bare SDK `Server` with an `echo` tool) served
through `stdio_transport`; most tests speak raw lines to it, two use the SDK's own client.
"""

from __future__ import annotations

import io
import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import mcp.types as t
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.server import Server

from gateway.wire.transport import stdio_transport
from tests.forkserver import script_command

ECHO_SERVER = Path(__file__).with_name("echo_server.py")
BATCH_MESSAGE = "Invalid Request: batches are not supported (one JSON-RPC message per line)"
MIB = 1024 * 1024


def line(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


# Seconds a test waits for a frame before it fails: a guard against a hang (the calls these tests expect never
# to be waited for sleep 60 s), generous because a loaded machine can take seconds to start a server.
PATIENCE = 45


def echo_call(request_id: Any, text: str = "hi", **extra: Any) -> dict[str, Any]:
    arguments = {"text": text, **extra}
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": arguments},
    }


def nested(depth: int) -> str:
    """A JSON array nested `depth` levels deep."""
    return "[" * depth + "]" * depth


def inherited_environment() -> dict[str, str]:
    """The test's environment without its locale, as the suite's `gateway` starts have it: the fork server
    (tests/forkserver) stands for the interpreter only when their encodings agree. The frames are bytes."""
    return {key: value for key, value in os.environ.items() if key != "LANG" and not key.startswith("LC_")}


class Raw:
    """The echo server as a subprocess, spoken to in raw bytes; every stdout line is checked to be a frame."""

    def __init__(
        self, tmp_path: Path, *args: str, env: dict[str, str] | None = None, stdin: Any = None
    ) -> None:
        self.stderr_path = tmp_path / f"stderr-{time.monotonic_ns()}.txt"
        self.stderr_file = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(
            script_command(ECHO_SERVER, *args),
            stdin=stdin if stdin is not None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr_file,
            env={**inherited_environment(), **(env or {})},
            bufsize=0,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.held: list[dict[str, Any]] = []
        self.next_id = 1_000_000
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(raw)
        self.lines.put(None)

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)

    def recv(self, timeout: float = PATIENCE) -> dict[str, Any] | None:
        """The next frame, None at end of output; fails on anything that is not one JSON-RPC object per line."""
        raw = self.lines.get(timeout=timeout)
        if raw is None:
            return None
        assert raw.endswith(b"\n"), raw[:200]
        frame = json.loads(raw)
        assert isinstance(frame, dict) and frame.get("jsonrpc") == "2.0", raw[:200]
        return frame

    def answer(self, request_id: Any, timeout: float = PATIENCE) -> dict[str, Any]:
        """The answer to `request_id`, holding back any other frame that arrives first."""
        for i, frame in enumerate(self.held):
            if frame.get("id") == request_id:
                return self.held.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            frame = self.recv(max(0.1, deadline - time.monotonic()))
            assert frame is not None, f"server ended before answering {request_id!r}"
            if frame.get("id") == request_id and ("result" in frame or "error" in frame):
                return frame
            self.held.append(frame)

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(line(message))
        return self.answer(self.next_id)

    def handshake(self) -> Raw:
        reply = self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        )
        assert reply["result"]["protocolVersion"] == "2025-06-18"
        self.send(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        return self

    def assert_alive(self) -> None:
        assert self.request("ping") == {"jsonrpc": "2.0", "id": self.next_id, "result": {}}
        reply = self.request("tools/call", {"name": "echo", "arguments": {"text": "still here"}})
        assert reply["result"]["content"][0]["text"] == "still here"
        assert self.proc.poll() is None

    def close(self, timeout: float = 30) -> int:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        code = self.proc.wait(timeout=timeout)
        self.stderr_file.close()
        return code

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def memory_kib(self, field: str) -> int:
        """A field of the server's /proc status: the test asks for the real exec (`real_exec`), since a server
        forked by the suite's fork server is not the launcher's pid."""
        command = Path(f"/proc/{self.proc.pid}/cmdline").read_bytes().split(b"\0")
        assert command[1] == str(ECHO_SERVER).encode(), command
        for entry in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if entry.startswith(field + ":"):
                return int(entry.split()[1])
        raise AssertionError(field)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One server for the rule tests: each rule must leave it serving for the next."""
    server = Raw(tmp_path_factory.mktemp("shared")).handshake()
    yield server
    assert server.proc.poll() is None, "an input made the shared server exit"
    assert server.close() == 0


def refusal(server: Raw, data: bytes) -> dict[str, Any]:
    server.send(data)
    frame = server.recv()
    assert frame is not None and "error" in frame, frame
    assert set(frame) == {"jsonrpc", "id", "error"}
    assert set(frame["error"]) == {"code", "message"}
    server.assert_alive()
    return frame


# -- framing ------------------------------------------------------------------------------------


def test_stdout_carries_frames_only_even_when_a_handler_prints(shared: Raw) -> None:
    shared.send(line(echo_call("p1", "quiet", print="STRAY OUTPUT")))
    # recv() fails on any line that is not a JSON-RPC object; the print must not reach stdout at all.
    assert shared.answer("p1")["result"]["content"][0]["text"] == "quiet"
    shared.assert_alive()
    deadline = time.monotonic() + PATIENCE
    while "STRAY OUTPUT" not in shared.stderr() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "STRAY OUTPUT" in shared.stderr()


def test_crlf_line_endings_are_accepted(shared: Raw) -> None:
    shared.send(line(echo_call("crlf", "windows"))[:-1] + b"\r\n")
    assert shared.answer("crlf")["result"]["content"][0]["text"] == "windows"
    shared.assert_alive()


def test_empty_and_whitespace_lines_are_ignored(shared: Raw) -> None:
    shared.send(b"\n\n   \n\t\r\n\r\n \t \n")
    shared.send(line({"jsonrpc": "2.0", "id": "after-blank", "method": "ping"}))
    # The very next frame is the ping's answer: the blank lines produced nothing.
    assert shared.recv() == {"jsonrpc": "2.0", "id": "after-blank", "result": {}}
    shared.assert_alive()


def test_a_line_split_across_writes_is_one_message(shared: Raw) -> None:
    data = line(echo_call("split", "in pieces"))
    for i in range(0, len(data), 7):
        shared.send(data[i : i + 7])
        time.sleep(0.001)
    assert shared.answer("split")["result"]["content"][0]["text"] == "in pieces"


# -- parse errors (-32700) ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"hello, world\n", "invalid JSON"),
        (b'{"jsonrpc":"2.0","id":5,"method":"ping"\n', "invalid JSON"),
        (b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":NaN}}\n', "invalid JSON"),
        (b"\xff\xfe\xfd\x80\x81\n", "invalid UTF-8"),
        (b'{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":"A\xff\xfeB"}}\n', "invalid UTF-8"),
        (b'{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":"\xed\xa0\x80"}}\n', "invalid UTF-8"),
        (line(echo_call(7, "\ud800")), "surrogate"),
    ],
    ids=[
        "text",
        "truncated",
        "nan",
        "binary",
        "bad-byte-in-string",
        "encoded-surrogate",
        "lone-surrogate-escape",
    ],
)
def test_unparsable_line_gets_parse_error(shared: Raw, data: bytes, reason: str) -> None:
    frame = refusal(shared, data)
    assert frame["id"] is None
    assert frame["error"]["code"] == -32700
    assert frame["error"]["message"].startswith("Parse error: ")
    assert reason in frame["error"]["message"]


@pytest.mark.parametrize("depth", [65, 300, 100_000])
def test_json_nested_too_deep_gets_parse_error(shared: Raw, depth: int) -> None:
    # Nested inside a well-formed call: the SDK's own parser would drop this without a word.
    data = (
        b'{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"x":' + nested(depth - 2).encode() + b"}}\n"
    )
    frame = refusal(shared, data)
    assert frame["id"] is None
    assert frame["error"] == {"code": -32700, "message": "Parse error: nested deeper than 64"}


def test_json_nested_exactly_at_the_limit_is_served(shared: Raw) -> None:
    # message (1) > params (2) > arguments (3) > 61 nested arrays: 64 levels in all.
    call = echo_call("at-limit", "deep enough", extra=json.loads(nested(61)))
    shared.send(line(call))
    assert shared.answer("at-limit")["result"]["content"][0]["text"] == "deep enough"


def test_line_over_max_line_gets_parse_error_and_the_next_line_is_served(shared: Raw) -> None:
    # 9 MiB of a well-formed call: the limit is on the line, whatever it carries.
    big = line(echo_call("huge", "x" * (9 * MIB)))
    shared.send(big + line(echo_call("next", "after the flood")))
    frame = shared.recv(timeout=30)
    assert frame == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": f"Parse error: line longer than {8 * MIB} bytes"},
    }
    assert shared.answer("next")["result"]["content"][0]["text"] == "after the flood"
    shared.assert_alive()


@pytest.mark.usefixtures("real_exec")  # reads the server's /proc
def test_line_over_max_line_is_never_buffered_whole(tmp_path: Path) -> None:
    # With a 1 MiB limit, a 9 MiB line must cost about 1 MiB of memory, not 9.
    server = Raw(tmp_path, "--max-line", str(MIB)).handshake()
    try:
        server.assert_alive()
        before = server.memory_kib("VmHWM")
        server.send(b'{"text":"' + b"y" * (9 * MIB) + b'"}\n')
        frame = server.recv(timeout=PATIENCE)
        assert frame is not None and frame["error"]["code"] == -32700
        server.assert_alive()
        grown_mib = (server.memory_kib("VmHWM") - before) / 1024
        assert grown_mib < 4, f"peak memory grew by {grown_mib:.1f} MiB"
    finally:
        assert server.close() == 0


def test_line_of_exactly_max_line_bytes_is_served(tmp_path: Path) -> None:
    limit = 4096
    server = Raw(tmp_path, "--max-line", str(limit)).handshake()
    try:
        head = line(echo_call("fits", ""))[:-1]
        fits = line(echo_call("fits", "z" * (limit - len(head))))
        assert len(fits) == limit + 1
        server.send(fits)
        assert server.answer("fits")["result"]["content"][0]["text"] == "z" * (limit - len(head))
        too_long = line(echo_call("over", "z" * (limit - len(head) + 1)))
        frame = refusal(server, too_long)
        assert frame["error"] == {"code": -32700, "message": f"Parse error: line longer than {limit} bytes"}
    finally:
        assert server.close() == 0


# -- invalid requests (-32600) ------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]\n', b"[]\n"],
    ids=["two-pings", "empty"],
)
def test_batch_gets_invalid_request(shared: Raw, data: bytes) -> None:
    frame = refusal(shared, data)
    assert frame == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": BATCH_MESSAGE}}


@pytest.mark.parametrize("bad_id", [None, True, False, {"a": 1}, [1]], ids=repr)
def test_bad_id_gets_invalid_request_with_null_id(shared: Raw, bad_id: Any) -> None:
    frame = refusal(shared, line({"jsonrpc": "2.0", "id": bad_id, "method": "ping"}))
    assert frame["id"] is None
    assert frame["error"] == {"code": -32600, "message": "Invalid Request: id must be a string or a number"}


def test_an_id_too_large_for_a_number_is_refused(shared: Raw) -> None:
    # 1e400 parses as infinity, which cannot be echoed back as JSON.
    frame = refusal(shared, b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}\n')
    assert frame["id"] is None
    assert frame["error"]["message"] == "Invalid Request: id must be a string or a number"


@pytest.mark.parametrize("fraction", [1.5, -0.25, 3.141592653589793])
def test_fractional_id_is_served_and_echoed_as_given(shared: Raw, fraction: float) -> None:
    # MCP's RequestId is any string or number; the SDK takes only int or str, so the transport carries it.
    shared.send(line(echo_call(fraction, "half")))
    frame = shared.answer(fraction)
    assert frame["result"]["content"][0]["text"] == "half"
    assert isinstance(frame["id"], float)


def test_fractional_ids_do_not_collide_with_the_clients_strings(shared: Raw) -> None:
    shared.send(line(echo_call(2.5, "number", sleep=0.3)))
    shared.send(line(echo_call("gateway-fractional-id-1", "string")))
    shared.send(line(echo_call("gateway-fractional-id-2", "string 2")))
    assert shared.answer("gateway-fractional-id-1")["result"]["content"][0]["text"] == "string"
    assert shared.answer("gateway-fractional-id-2")["result"]["content"][0]["text"] == "string 2"
    assert shared.answer(2.5)["result"]["content"][0]["text"] == "number"


def test_a_fractional_id_call_can_be_cancelled(tmp_path: Path) -> None:
    server = Raw(tmp_path).handshake()
    server.send(line(echo_call(7.25, "never", sleep=60)))
    server.send(line(echo_call("quick", "done")))
    assert server.answer("quick")["result"]["content"][0]["text"] == "done"
    server.send(line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7.25}}))
    server.proc.stdin.close()  # type: ignore[union-attr]
    assert server.recv(timeout=PATIENCE) is None  # cancelled under its alias: never answered, nothing waits on it
    assert server.close() == 0


def test_integral_number_id_is_served_as_an_integer(shared: Raw) -> None:
    shared.send(b'{"jsonrpc":"2.0","id":77.0,"method":"ping"}\n')
    assert shared.answer(77) == {"jsonrpc": "2.0", "id": 77, "result": {}}


@pytest.mark.parametrize(
    "message",
    [
        {"id": "v1", "method": "ping"},
        {"jsonrpc": "1.0", "id": "v1", "method": "ping"},
        {"jsonrpc": 2, "id": "v1"},
    ],
    ids=["missing", "1.0", "number"],
)
def test_missing_or_wrong_jsonrpc_gets_invalid_request(shared: Raw, message: dict[str, Any]) -> None:
    if "method" not in message:
        message = {**message, "method": "ping"}
    frame = refusal(shared, line(message))
    assert frame["id"] == "v1"
    assert frame["error"] == {"code": -32600, "message": 'Invalid Request: "jsonrpc" must be "2.0"'}


@pytest.mark.parametrize("params", [[1, 2], "text", 3, None], ids=repr)
def test_params_not_an_object_gets_invalid_request(shared: Raw, params: Any) -> None:
    frame = refusal(shared, line({"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": params}))
    assert frame["id"] == 41
    assert frame["error"] == {"code": -32600, "message": "Invalid Request: params must be an object"}


@pytest.mark.parametrize("method", [5, None, ["ping"], {"m": 1}], ids=repr)
def test_method_not_a_string_gets_invalid_request(shared: Raw, method: Any) -> None:
    frame = refusal(shared, line({"jsonrpc": "2.0", "id": "m1", "method": method}))
    assert frame["id"] == "m1"
    assert frame["error"] == {"code": -32600, "message": "Invalid Request: method must be a string"}


@pytest.mark.parametrize(
    ("message", "echo"),
    [({"jsonrpc": "2.0", "id": "n1"}, "n1"), ({"jsonrpc": "2.0", "params": {}}, None), ({}, None)],
    ids=["id-only", "params-only", "empty-object"],
)
def test_object_without_method_or_result_gets_invalid_request(
    shared: Raw, message: dict[str, Any], echo: Any
) -> None:
    frame = refusal(shared, line(message))
    assert frame["id"] == echo
    assert frame["error"] == {
        "code": -32600,
        "message": "Invalid Request: neither a method nor a result or error",
    }


def test_method_together_with_result_gets_invalid_request(shared: Raw) -> None:
    frame = refusal(shared, line({"jsonrpc": "2.0", "id": "both", "method": "ping", "result": {}}))
    assert frame["id"] == "both"
    assert frame["error"]["code"] == -32600


@pytest.mark.parametrize("scalar", [b"42", b'"hello"', b"null", b"true", b"-1.5e3"])
def test_json_scalar_gets_invalid_request(shared: Raw, scalar: bytes) -> None:
    frame = refusal(shared, scalar + b"\n")
    assert frame == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid Request: not a JSON object"},
    }


def test_replies_from_the_client_are_never_answered(shared: Raw) -> None:
    # A reply to nothing, and a broken reply: both dropped without a word (answering replies can loop).
    shared.send(line({"jsonrpc": "2.0", "id": 999, "result": {}}))
    shared.send(line({"jsonrpc": "2.0", "id": True, "error": {"code": 1, "message": "x"}}))
    shared.send(line({"jsonrpc": "2.0", "id": "after-replies", "method": "ping"}))
    assert shared.recv() == {"jsonrpc": "2.0", "id": "after-replies", "result": {}}
    shared.assert_alive()


def test_sdk_errors_still_come_through(shared: Raw) -> None:
    shared.send(line({"jsonrpc": "2.0", "id": "nf", "method": "no/such/method"}))
    assert shared.answer("nf")["error"]["code"] == -32601


def test_refused_frames_are_logged_without_their_contents(tmp_path: Path) -> None:
    server = Raw(tmp_path, env={"GATEWAY_LOG_LEVEL": "debug"}).handshake()
    try:
        secret = "hunter2-do-not-log"
        refusal(server, f"not json {secret}\n".encode())
        refusal(server, line({"jsonrpc": "1.0", "id": secret, "method": secret}))
    finally:
        assert server.close() == 0
    err = server.stderr()
    assert err.count("stdio_frame_refused") == 2
    assert secret not in err


# -- end of input -------------------------------------------------------------------------------


def test_eof_with_three_slow_calls_in_flight_answers_all_then_exits_0(tmp_path: Path) -> None:
    server = Raw(tmp_path).handshake()
    for n in range(3):
        server.send(line(echo_call(f"slow{n}", f"slow {n}", sleep=1.0)))
    started = time.monotonic()
    server.proc.stdin.close()  # type: ignore[union-attr]
    frames = []
    while (frame := server.recv(timeout=PATIENCE)) is not None:
        frames.append(frame)
    assert sorted(f["id"] for f in frames) == ["slow0", "slow1", "slow2"]
    assert all(f["result"]["content"][0]["text"] == f"slow {f['id'][-1]}" for f in frames)
    assert server.close() == 0
    assert time.monotonic() - started < PATIENCE


def test_eof_does_not_wait_for_a_call_the_client_cancelled(tmp_path: Path) -> None:
    server = Raw(tmp_path).handshake()
    server.send(line(echo_call("forever", "never", sleep=60)))
    server.send(line(echo_call("quick", "done")))
    assert server.answer("quick")["result"]["content"][0]["text"] == "done"
    server.send(
        line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "forever"}})
    )
    started = time.monotonic()
    server.proc.stdin.close()  # type: ignore[union-attr]
    assert server.recv(timeout=PATIENCE) is None  # a cancelled request is never answered
    assert server.close() == 0
    assert time.monotonic() - started < PATIENCE


def test_eof_wait_is_capped(tmp_path: Path) -> None:
    server = Raw(tmp_path, "--drain-timeout", "1").handshake()
    server.send(line(echo_call("stuck", "late", sleep=60)))
    time.sleep(0.2)
    started = time.monotonic()
    server.proc.stdin.close()  # type: ignore[union-attr]
    frame = server.recv(timeout=PATIENCE)
    # The SDK answers the call it had to cancel; what matters is that nothing hangs.
    assert frame is not None and frame["id"] == "stuck" and frame["error"]["code"] == -32000
    assert server.recv(timeout=PATIENCE) is None
    assert server.close() == 0
    assert time.monotonic() - started < PATIENCE


def test_last_line_without_newline_is_served_and_fds_are_restored(tmp_path: Path) -> None:
    server = Raw(tmp_path, "--after", "BACK ON STDOUT").handshake()
    server.send(line(echo_call("last", "no newline"))[:-1])
    server.proc.stdin.close()  # type: ignore[union-attr]
    assert server.answer("last")["result"]["content"][0]["text"] == "no newline"
    # After the transport exits, fd 1 is the real stdout again.
    assert server.lines.get(timeout=PATIENCE) == b"BACK ON STDOUT\n"
    assert server.close() == 0


def test_stdin_from_a_regular_file_uses_the_thread_fallback(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_bytes(
        line(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "f", "version": "1"},
                },
            }
        )
        + line({"jsonrpc": "2.0", "method": "notifications/initialized"})
        + b"garbage\n"
        + b"".join(line(echo_call(n, f"file {n}", sleep=0.2)) for n in range(1, 4))
    )
    with script.open("rb") as stdin:
        server = Raw(tmp_path, stdin=stdin)
        frames = []
        while (frame := server.recv(timeout=PATIENCE)) is not None:
            frames.append(frame)
    assert server.close() == 0
    by_id = {f["id"]: f for f in frames}
    assert by_id[None]["error"]["code"] == -32700
    assert [by_id[n]["result"]["content"][0]["text"] for n in (1, 2, 3)] == ["file 1", "file 2", "file 3"]


# -- in process: explicit descriptors and file objects ------------------------------------------


def _echo_server() -> Server[Any]:
    async def call_tool(ctx: Any, params: t.CallToolRequestParams) -> t.CallToolResult:
        text = str((params.arguments or {}).get("text", ""))
        return t.CallToolResult(content=[t.TextContent(type="text", text=text)])

    return Server("inproc", on_call_tool=call_tool)


HANDSHAKE = line(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "i", "version": "1"},
        },
    }
) + line({"jsonrpc": "2.0", "method": "notifications/initialized"})


def test_in_process_with_file_objects() -> None:
    stdin = io.BytesIO(HANDSHAKE + b"[]\n" + line(echo_call(1, "from a file object")))
    stdout = io.BytesIO()

    async def main() -> None:
        server = _echo_server()
        async with stdio_transport(stdin, stdout) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
    frames = [json.loads(raw) for raw in stdout.getvalue().splitlines()]
    by_id = {f["id"]: f for f in frames}
    assert by_id[None]["error"]["message"] == BATCH_MESSAGE
    assert by_id[1]["result"]["content"][0]["text"] == "from a file object"


def test_in_process_with_pipe_descriptors() -> None:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    received: list[bytes] = []

    def drain() -> None:
        with os.fdopen(out_r, "rb") as out:
            received.extend(out)

    reader = threading.Thread(target=drain)
    reader.start()

    async def main() -> None:
        server = _echo_server()
        async with stdio_transport(in_r, out_w) as (read_stream, write_stream):
            with os.fdopen(in_w, "wb") as feed:
                feed.write(HANDSHAKE + b"".join(line(echo_call(n, f"pipe {n}")) for n in range(1, 51)))
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
    # The transport does not own descriptors it was given: they are still open and usable.
    os.fstat(in_r)
    os.close(in_r)
    os.close(out_w)
    reader.join(timeout=10)
    frames = [json.loads(raw) for raw in received]
    assert sorted(f["id"] for f in frames) == list(range(51))


def _lone_calls(monkeypatch, preempted_seconds: float, calls: int) -> tuple[list[dict[str, Any]], list[bytes]]:
    """A client that waits for each answer before it asks again, over a pipe: the answers it read, and what the
    server handed to its writer thread (with `_PREEMPTED_SECONDS` set to `preempted_seconds`)."""
    from gateway.wire import descriptors

    monkeypatch.setattr(descriptors, "_PREEMPTED_SECONDS", preempted_seconds)
    handed: list[bytes] = []
    real_put = descriptors._Writer.put
    monkeypatch.setattr(descriptors._Writer, "put", lambda self, data: (handed.append(data), real_put(self, data)))
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    answers: list[dict[str, Any]] = []

    def client() -> None:
        with os.fdopen(in_w, "wb", buffering=0) as feed, os.fdopen(out_r, "rb") as out:
            feed.write(HANDSHAKE)
            assert json.loads(out.readline())["id"] == 0
            for n in range(1, calls + 1):
                feed.write(line(echo_call(n, f"turn {n}")))
                answers.append(json.loads(out.readline()))

    talker = threading.Thread(target=client)
    talker.start()

    async def main() -> None:
        server = _echo_server()
        async with stdio_transport(in_r, out_w) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
    talker.join(timeout=30)
    os.close(in_r)
    os.close(out_w)
    assert [(a["id"], a["result"]["content"][0]["text"]) for a in answers] == [
        (n, f"turn {n}") for n in range(1, calls + 1)]  # each whole and in its turn
    return answers, handed


def test_a_lone_answer_is_written_by_the_loop_as_it_goes_to_sleep_not_by_the_writer_thread(monkeypatch) -> None:
    """Every answer to a client that waits for each leaves from the event loop's own thread just before it sleeps:
    none is handed to the writer thread."""
    _answers, handed = _lone_calls(monkeypatch, 3600.0, 20)  # no write counts as taken off its core
    assert handed == []


def test_on_a_machine_so_busy_that_a_write_was_taken_off_its_core_the_writer_thread_writes_lone_answers(
        monkeypatch) -> None:
    """A write of a held answer that took long (the client it woke took the loop's core) sends the lone answers after
    it to the writer thread for a while."""
    _answers, handed = _lone_calls(monkeypatch, -1.0, 10)  # every write counts as taken off its core
    assert len(handed) == 10  # the first answer (the handshake's) was held and written; every one after, the thread's


def test_reading_pauses_while_max_in_flight_requests_are_unanswered() -> None:
    """Back-pressure: past `max_in_flight` unanswered requests nothing more is read; one answer lets one more in,
    and notifications never count."""
    from anyio import wait_all_tasks_blocked
    from mcp.shared.message import SessionMessage

    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    os.write(in_w, b"".join(line(echo_call(n)) for n in range(1, 6)) + line(notification))
    os.close(in_w)

    async def main() -> list[Any]:
        forwarded: list[Any] = []
        async with stdio_transport(in_r, out_w, max_in_flight=2) as (read_stream, write_stream):
            for _ in range(2):
                forwarded.append((await read_stream.receive()).message.id)
            await wait_all_tasks_blocked()
            with pytest.raises(anyio.WouldBlock):
                read_stream.receive_nowait()  # the third request waits for an answer
            answer = t.JSONRPCResponse(jsonrpc="2.0", id=1, result={})
            await write_stream.send(SessionMessage(answer))
            forwarded.append((await read_stream.receive()).message.id)
            await wait_all_tasks_blocked()
            with pytest.raises(anyio.WouldBlock):
                read_stream.receive_nowait()
            for request_id in (2, 3):
                await write_stream.send(SessionMessage(t.JSONRPCResponse(jsonrpc="2.0", id=request_id, result={})))
            forwarded.append((await read_stream.receive()).message.id)
            forwarded.append((await read_stream.receive()).message.id)
            forwarded.append(getattr((await read_stream.receive()).message, "method", None))
            for request_id in (4, 5):
                await write_stream.send(SessionMessage(t.JSONRPCResponse(jsonrpc="2.0", id=request_id, result={})))
        return forwarded

    try:
        assert anyio.run(main) == [1, 2, 3, 4, 5, "notifications/initialized"]
    finally:
        os.close(in_r)
        os.close(out_w)
        os.close(out_r)


# -- the SDK's own client -----------------------------------------------------------------------


def _client(mode: str) -> Client:
    command = script_command(ECHO_SERVER)
    parameters = StdioServerParameters(command=command[0], args=command[1:])
    return Client(parameters, mode=mode)  # type: ignore[arg-type]


def test_sdk_client_legacy_session() -> None:
    async def main() -> None:
        async with _client("legacy") as client:
            assert client.protocol_version == "2025-11-25"
            tools = await client.list_tools()
            assert [tool.name for tool in tools.tools] == ["echo"]
            result = await client.call_tool("echo", {"text": "legacy"})
            assert result.content[0].text == "legacy"  # type: ignore[union-attr]

    anyio.run(main)


def test_sdk_client_auto_mode_negotiates_the_2026_era() -> None:
    async def main() -> None:
        async with _client("auto") as client:
            assert client.protocol_version == "2026-07-28"
            results = []

            async def call(n: int) -> None:
                results.append((await client.call_tool("echo", {"text": f"modern {n}"})).content[0].text)  # type: ignore[union-attr]

            async with anyio.create_task_group() as tg:
                for n in range(20):
                    tg.start_soon(call, n)
            assert sorted(results) == sorted(f"modern {n}" for n in range(20))

    anyio.run(main)


# -- fuzz ---------------------------------------------------------------------------------------

# What a frame should draw: ("id", id, code) for one answer to that id (code None for a result),
# ("null", code) for one error with a null id, or None for no answer at all.
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
JUNK = st.binary(max_size=60).map(lambda b: b.replace(b"\n", b""))
_ids = iter(range(10**9))


def _fresh_id(draw: st.DrawFn) -> int | str:
    n = next(_ids)
    return n if draw(st.booleans()) else f"f-{n}"


@st.composite
def frames(draw: st.DrawFn) -> tuple[bytes, list[Any]]:
    """Bytes of one line (newline included) and what it should draw."""
    kind = draw(
        st.sampled_from(
            [
                "echo", "echo", "echo", "ping", "unknown-method", "notification", "not-json", "binary",
                "batch", "bad-id", "bad-jsonrpc", "params-array", "method-number", "scalar", "deep",
                "oversize", "blank", "stray-reply", "crlf-echo", "no-method",
            ]
        )
    )  # fmt: skip
    if kind in ("echo", "crlf-echo"):
        rid = _fresh_id(draw)
        data = line(echo_call(rid, draw(TEXT)))
        if kind == "crlf-echo":
            data = data[:-1] + b"\r\n"
        return data, [("id", rid, None)]
    if kind == "ping":
        rid = _fresh_id(draw)
        return line({"jsonrpc": "2.0", "id": rid, "method": "ping"}), [("id", rid, None)]
    if kind == "unknown-method":
        rid = _fresh_id(draw)
        return line({"jsonrpc": "2.0", "id": rid, "method": "fuzz/none"}), [("id", rid, -32601)]
    if kind == "notification":
        method = draw(
            st.sampled_from(["notifications/initialized", "notifications/fuzz", "notifications/cancelled"])
        )
        params = {"requestId": "no-such-request"} if method == "notifications/cancelled" else {}
        return line({"jsonrpc": "2.0", "method": method, "params": params}), [None]
    if kind == "not-json":
        return b"#" + draw(TEXT).replace("\n", " ").encode() + b"\n", [("null", -32700)]
    if kind == "binary":
        return b"\xff" + draw(JUNK) + b"\n", [("null", -32700)]
    if kind == "batch":
        return b"[" + line({"jsonrpc": "2.0", "id": 1, "method": "ping"})[:-1] + b"]\n", [("null", -32600)]
    if kind == "bad-id":
        bad = draw(st.sampled_from([None, True, False, {"n": 1}, [2]]))
        return line({"jsonrpc": "2.0", "id": bad, "method": "ping"}), [("null", -32600)]
    if kind == "bad-jsonrpc":
        rid = _fresh_id(draw)
        return line({"jsonrpc": draw(st.sampled_from(["1.0", "2", 2.0])), "id": rid, "method": "ping"}), [
            ("id", rid, -32600)
        ]
    if kind == "params-array":
        rid = _fresh_id(draw)
        return line({"jsonrpc": "2.0", "id": rid, "method": "ping", "params": [1]}), [("id", rid, -32600)]
    if kind == "method-number":
        rid = _fresh_id(draw)
        return line({"jsonrpc": "2.0", "id": rid, "method": 12}), [("id", rid, -32600)]
    if kind == "no-method":
        rid = _fresh_id(draw)
        return line({"jsonrpc": "2.0", "id": rid, "params": {}}), [("id", rid, -32600)]
    if kind == "scalar":
        return draw(st.sampled_from([b"1", b'"s"', b"null", b"false", b"-2.5"])) + b"\n", [("null", -32600)]
    if kind == "deep":
        depth = draw(st.integers(66, 3000))
        rid = _fresh_id(draw)
        body = line(echo_call(rid, "deep"))[:-2] + b',"x":' + nested(depth).encode() + b"}\n"
        return body, [("null", -32700)]
    if kind == "oversize":
        return b'{"pad":"' + b"o" * draw(st.integers(4100, 20000)) + b'"}\n', [("null", -32700)]
    if kind == "blank":
        return draw(st.sampled_from([b"\n", b"  \n", b"\t\r\n", b"\r\n"])), [None]
    assert kind == "stray-reply"
    return line({"jsonrpc": "2.0", "id": f"nobody-{next(_ids)}", "result": {}}), [None]


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, list[Any]]:
    """Many frames in one blob; some frames are glued to junk that has no newline of its own."""
    blob = bytearray()
    expected: list[Any] = []
    for _ in range(draw(st.integers(50, 400))):
        data, expect = draw(frames())
        if draw(st.integers(0, 15)) == 0:
            # Bytes with no newline run into the next line, which then parses as nothing: one error for both.
            data = b"\xff" + draw(JUNK) + data
            expect = [("null", -32700)]
        blob += data
        expected.extend(expect)
    return bytes(blob), expected


class FuzzServers:
    """One server for many examples, replaced after an example that failed: its leftovers would mislead the next."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.server: Raw | None = None
        self.clean = False

    def get(self) -> Raw:
        if self.server is None or not self.clean or self.server.proc.poll() is not None:
            if self.server is not None:
                self.server.proc.kill()
                self.server.close()
            self.server = Raw(self.tmp_path, "--max-line", "4096", "--chunk", "1000").handshake()
        self.clean = False  # until this example passes
        return self.server


@pytest.fixture(scope="module")
def fuzz_servers(tmp_path_factory: pytest.TempPathFactory) -> Any:
    servers = FuzzServers(tmp_path_factory.mktemp("fuzz"))
    yield servers
    assert servers.server is not None
    assert servers.server.proc.poll() is None, "fuzz input made the server exit"
    assert servers.server.close() == 0


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    # Each failing run costs seconds of waiting, so a failure is reported as found, not shrunk.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(stream=streams())
def test_fuzz_every_frame_gets_exactly_its_answer(
    fuzz_servers: FuzzServers, stream: tuple[bytes, list[Any]]
) -> None:
    blob, expected = stream
    server = fuzz_servers.get()
    want_ids = {e[1]: e[2] for e in expected if e and e[0] == "id"}
    want_nulls: dict[int, int] = {}
    for e in expected:
        if e and e[0] == "null":
            want_nulls[e[1]] = want_nulls.get(e[1], 0) + 1
    got_ids: dict[Any, dict[str, Any]] = {}
    got_nulls: dict[int, int] = {}

    def take(frame: dict[str, Any]) -> None:
        if frame["id"] is None:
            code = frame["error"]["code"]
            got_nulls[code] = got_nulls.get(code, 0) + 1
        else:
            assert frame["id"] not in got_ids, f"two answers for {frame['id']!r}"
            assert frame["id"] in want_ids, f"an answer for {frame['id']!r}, which wanted none"
            got_ids[frame["id"]] = frame

    def next_frame() -> dict[str, Any]:
        try:
            frame = server.recv(timeout=PATIENCE)
        except queue.Empty:
            missing = [rid for rid in want_ids if rid not in got_ids]
            raise AssertionError(
                f"silence: {len(missing)} ids unanswered (first {missing[:5]!r}), null errors {got_nulls} of {want_nulls}"
            ) from None
        assert frame is not None, "the server exited"
        return frame

    server.send(blob)  # in one go
    while len(got_ids) < len(want_ids) or sum(got_nulls.values()) < sum(want_nulls.values()):
        take(next_frame())
    # Anything extra would arrive before the answer to a ping sent now.
    server.next_id += 1
    sentinel = server.next_id
    server.send(line({"jsonrpc": "2.0", "id": sentinel, "method": "ping"}))
    while (frame := next_frame())["id"] != sentinel:
        take(frame)

    assert got_nulls == want_nulls
    for rid, code in want_ids.items():
        frame = got_ids[rid]
        if code is None:
            assert "result" in frame, frame
        else:
            assert frame["error"]["code"] == code, frame
    assert server.proc.poll() is None
    fuzz_servers.clean = True
