"""No call can take the server down: a huge query, a slow tool, a flood of requests, idle connections and
sessions, each played against a real `gateway serve` (stdio or HTTP on loopback), memory read from /proc.

Bounded by counts, never by time: the few waits below are safety limits on a loop, not what is asserted.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import threading
import time
from pathlib import Path

import httpx2
import pytest

from gateway.api.context import home_environment
from gateway.testing import folders_of, write_config
from gateway.wire.http import MAX_CONNECTIONS, MAX_SESSIONS
from tests.forkserver import gateway_command

PEAK_LIMIT_MB = 200

SLOWPOKE = '''
"""Tools that take their time, for the flood tests."""
import sqlite3
import time
from pathlib import Path

from gateway import Tool, hookimpl


def wait_for(flag: str) -> str:
    """Waits until the file `flag` exists (at most two minutes), on a worker thread."""
    for _ in range(1200):
        if Path(flag).exists():
            return "released"
        time.sleep(0.1)
    return "never released"


def nap(seconds: float) -> str:
    """Sleeps, as a slow plugin would."""
    time.sleep(seconds)
    return "woke"


def crunch(ctx, report: str) -> str:
    """An SQLite query that never ends by itself; writes how it ended to `report`."""
    connection = sqlite3.connect(":memory:")
    try:
        with ctx.interruptible(connection):
            connection.execute(
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
            ).fetchone()
        outcome = "finished"
    except sqlite3.OperationalError as error:
        outcome = str(error)
    Path(report).write_text(outcome)
    return outcome


@hookimpl
def register_tools(gateway):
    return [Tool.from_function(f, read_only=True) for f in (wait_for, nap, crunch)]
'''


def install_slowpoke(site: Path) -> dict[str, str]:
    """The plugin installed as pip would leave it; the environment that makes `gateway serve` find it."""
    site.mkdir(exist_ok=True)
    (site / "gateway_slowpoke_fake.py").write_text(SLOWPOKE)
    info = site / "gateway_slowpoke_fake-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gateway-slowpoke-fake\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[gateway.plugins]\nslowpoke = gateway_slowpoke_fake\n")
    return {"PYTHONPATH": str(site)}


def served_itself(pid: int) -> int:
    """`pid`, once it is seen to be `python -m gateway` itself, not the suite's launcher standing for it: a
    test that reads the server's /proc asks for the real exec (the `real_exec` fixture)."""
    command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert command[1:3] == [b"-m", b"gateway"], command
    return pid


def peak_mb(pid: int) -> float:
    """The process's peak resident memory so far (VmHWM), in MB."""
    for line in Path(f"/proc/{served_itself(pid)}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc")


class Served:
    """A real `gateway serve` on pipes, spoken to line by line; answers read by a thread once `listen()` is called."""

    def __init__(self, home: Path, log: Path, extra_env: dict[str, str] | None = None) -> None:
        env = {"PATH": os.environ.get("PATH", ""), **home_environment(home), **(extra_env or {})}
        self.log = log.open("wb")
        self.process = subprocess.Popen(
            gateway_command("serve"),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env,
        )
        self.answers: queue.Queue[dict | None] = queue.Queue()
        self.reader: threading.Thread | None = None

    def listen(self) -> None:
        def read() -> None:
            for line in self.process.stdout:
                self.answers.put(json.loads(line))
            self.answers.put(None)

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()

    def send(self, message: dict) -> None:
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def answer(self) -> dict:
        found = self.answers.get(timeout=120)  # a safety limit only: a hung server fails the test, not the run
        assert found is not None, "the server closed its output"
        return found

    def start(self) -> Served:
        self.listen()
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "flood", "version": "1"}}})
        assert self.answer()["id"] == 0
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    def call(self, request_id: int | str, tool: str, arguments: dict) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}})

    def close(self) -> int:
        self.process.stdin.close()
        code = self.process.wait(60)
        self.log.close()
        return code


def text_of(answer: dict) -> str:
    return answer["result"]["content"][0]["text"]


@pytest.fixture
def sessions_home(gateway_home: Path) -> Path:
    """A home with the demo's three sessions imported, as `gateway sessions import` does."""
    from gateway_sessions.demo import write_transcripts

    write_transcripts(gateway_home)
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(gateway_home)}
    subprocess.run(gateway_command("sessions", "import"), env=env, check=True,
                   capture_output=True, timeout=120)
    write_config(gateway_home, {"gateway": {"plugins": ["sessions"]}})
    return gateway_home


@pytest.mark.usefixtures("real_exec")  # reads the server's /proc
def test_an_8_mb_query_is_refused_with_a_sentence_and_the_server_stays_small(sessions_home, tmp_path):
    served = Served(sessions_home, tmp_path / "stderr").start()
    phrase = '"' + "word " * 1_599_999 + 'word"'  # an 8,000,000-character phrase query
    served.call(1, "rousseau_search_sessions", {"query": phrase})
    refused = served.answer()
    assert refused["id"] == 1 and refused["result"]["isError"] is True
    sentence = text_of(refused)
    assert "over the limit of 2,000" in sentence and len(sentence) < 300
    served.call(2, "rousseau_search_sessions", {"query": " ".join(f"w{i}" for i in range(40))})
    assert "over the limit of 32" in text_of(served.answer())
    served.call(3, "rousseau_search_sessions", {"query": "compost"})
    assert "Compost rota" in text_of(served.answer())
    assert peak_mb(served.process.pid) < PEAK_LIMIT_MB
    assert served.close() == 0


def test_a_ping_is_answered_while_a_tool_runs(gateway_home, tmp_path):
    env = install_slowpoke(tmp_path / "site")
    write_config(gateway_home, {"gateway": {"plugins": ["slowpoke"]}})
    served = Served(gateway_home, tmp_path / "stderr", env).start()
    flag = tmp_path / "release"
    served.call(1, "wait_for", {"flag": str(flag)})
    served.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    # The tool cannot finish before the flag exists, and the flag is made only once the ping is answered.
    assert served.answer() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    flag.touch()
    released = served.answer()
    assert released["id"] == 1 and text_of(released) == "released"
    assert served.close() == 0


def test_a_client_whose_flood_of_calls_waits_is_told_and_its_ping_answered_at_once(gateway_home, tmp_path):
    """300 calls that cannot finish (more than the 64 in flight): the client's own ping is answered while every one
    of them still waits, a held call that asked for progress hears that it waits and behind how many, and all are
    answered once they can finish."""
    env = install_slowpoke(tmp_path / "site")
    write_config(gateway_home, {"gateway": {"plugins": ["slowpoke"]}})
    served = Served(gateway_home, tmp_path / "stderr", env).start()
    flag = tmp_path / "release"
    for n in range(1, 301):
        served.call(n, "wait_for", {"flag": str(flag)})
    served.send({"jsonrpc": "2.0", "id": 301, "method": "tools/call", "params": {
        "name": "wait_for", "arguments": {"flag": str(flag)}, "_meta": {"progressToken": "late"}}})
    served.send({"jsonrpc": "2.0", "id": "alive?", "method": "ping"})
    told = served.answer()
    assert told["method"] == "notifications/progress" and told["params"]["progressToken"] == "late"
    assert "waiting: 300 calls" in told["params"]["message"]
    # No call can finish before the flag exists, and the flag is made only once the ping is answered.
    assert served.answer() == {"jsonrpc": "2.0", "id": "alive?", "result": {}}
    flag.touch()
    answered = {served.answer()["id"] for _ in range(301)}
    assert answered == set(range(1, 302))
    assert served.close() == 0


def test_a_call_past_its_deadline_is_answered_and_the_server_keeps_serving(gateway_home, tmp_path):
    env = install_slowpoke(tmp_path / "site")
    write_config(gateway_home, {"gateway": {"plugins": ["slowpoke"], "call_timeout": 1}})
    served = Served(gateway_home, tmp_path / "stderr", env).start()
    served.call(1, "nap", {"seconds": 4})
    late = served.answer()
    assert late["id"] == 1 and late["result"]["isError"] is True
    assert "took longer than 1 s and was stopped" in text_of(late)
    report = tmp_path / "report"
    served.call(2, "crunch", {"report": str(report)})
    assert "took longer than 1 s" in text_of(served.answer())
    for _ in range(600):  # the query is interrupted, not left running on its worker
        if report.exists() and report.read_text():
            break
        time.sleep(0.1)
    assert report.read_text() == "interrupted"
    served.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    assert served.answer() == {"jsonrpc": "2.0", "id": 3, "result": {}}
    (tmp_path / "flag").touch()
    served.call(4, "wait_for", {"flag": str(tmp_path / "flag")})
    assert text_of(served.answer()) == "released"
    assert served.close() == 0


# Requests a client can write without reading before the server stops reading: those in flight (MAX_IN_FLIGHT),
# the answers queued and being written (about 2 x 256), those in the answers' pipe and the lines in the requests'
# pipe and in the read chunk (each at most a pipe's 64 KiB, some 500 lines). Measured: about 1,100 with the bound,
# 5,300 without it (7,400 when the transport's writer thread held up to 1 MB of answers).
FLOOD_STALLS_BEFORE = 3_000
# Twice FLOOD_STALLS_BEFORE and more than a server without the bound lets a writer write: such a server is caught
# (its writer gets past FLOOD_STALLS_BEFORE unread), and every call beyond it would only cost CPU (each is a whole
# call through the server; 12,000 of them were some 10 s of CPU for the same verdict).
FLOOD = 6_000


# 6,000 calls take about 6 s of CPU (client and server), much longer in wall time on two cores shared with the
# suite's other workers: the bound of 400 s is a safety limit, nothing is timed.
@pytest.mark.timeout(400)
@pytest.mark.usefixtures("real_exec")  # reads the server's /proc
def test_a_flood_written_without_reading_is_answered_whole_in_bounded_memory(gateway_home, tmp_path):
    write_config(gateway_home, {"gateway": {"plugins": ["hello"]}})
    served = Served(gateway_home, tmp_path / "stderr")
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "flood", "version": "1"}}}
    lines = [json.dumps(init), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})]
    lines += [
        json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                    "params": {"name": "hello", "arguments": {"name": f"Guest {i}"}}})
        for i in range(1, FLOOD + 1)
    ]
    written = 0

    def write() -> None:
        nonlocal written
        for line in lines:
            served.process.stdin.write(line.encode() + b"\n")
            served.process.stdin.flush()
            written += 1

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    # Nothing is read while the writer writes: with back-pressure the server stops reading once its answers fill
    # the pipe and MAX_IN_FLIGHT requests wait, so the writer stalls after a few thousand lines whatever the wait.
    writer.join(10)
    written_unread = written
    served.listen()
    seen: set[int] = set()
    for _ in range(FLOOD + 1):
        answer = served.answer()
        assert "result" in answer, answer
        seen.add(answer["id"])
    writer.join(60)
    assert seen == set(range(FLOOD + 1))
    assert written_unread < FLOOD_STALLS_BEFORE
    assert peak_mb(served.process.pid) < PEAK_LIMIT_MB
    assert served.close() == 0


# -- HTTP -------------------------------------------------------------------------------------------------------------

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "web-host", "version": "1"}}}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def http_server(gateway_home, tmp_path):
    write_config(gateway_home, {"gateway": {"plugins": ["hello"]}})
    port = free_port()
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(gateway_home)}
    log = (tmp_path / "stderr").open("wb")
    process = subprocess.Popen(gateway_command("serve", "--http", f"127.0.0.1:{port}"), env=env,
                               stdout=subprocess.DEVNULL, stderr=log)
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert process.poll() is None, (tmp_path / "stderr").read_text()
            time.sleep(0.1)
    token = (folders_of(gateway_home).state / "http-token").read_text().strip()
    yield f"http://127.0.0.1:{port}/mcp", token, process
    process.terminate()
    process.wait(10)
    log.close()


@pytest.mark.usefixtures("real_exec")  # reads the server's /proc
def test_idle_connections_do_not_keep_a_host_out(http_server):
    url, token, process = http_server
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(300)]
    try:
        headers = {**ACCEPT, "Authorization": f"Bearer {token}"}
        with httpx2.Client(headers=headers, timeout=30) as http:
            opened = http.post(url, json=INIT)
            assert opened.status_code == 200
            session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
            http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
            called = http.post(url, headers=session, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                                            "params": {"name": "hello", "arguments": {"name": "Ada"}}})
            assert called.status_code == 200 and "Hello, Ada!" in called.text
        # The server holds no more connections than its bound, whatever was opened.
        open_files = len(os.listdir(f"/proc/{served_itself(process.pid)}/fd"))
        assert open_files < MAX_CONNECTIONS + 64
    finally:
        for connection in idle:
            connection.close()


@pytest.mark.usefixtures("real_exec")  # reads the server's /proc
def test_sessions_are_bounded_and_a_refusal_says_why(http_server):
    url, token, process = http_server
    headers = {**ACCEPT, "Authorization": f"Bearer {token}"}
    statuses: list[int] = []
    refusal = ""
    opened: list[str] = []
    # Twice MAX_SESSIONS asked for: as many refused as allowed, every status counted (more would only repeat them).
    asked = 2 * MAX_SESSIONS
    with httpx2.Client(headers=headers, timeout=30) as http:
        for _ in range(asked):
            response = http.post(url, json=INIT)
            statuses.append(response.status_code)
            if response.status_code == 200:
                opened.append(response.headers["mcp-session-id"])
            else:
                refusal = response.json()["error"]["message"]
        assert statuses.count(200) == MAX_SESSIONS and statuses.count(503) == asked - MAX_SESSIONS
        assert f"already has {MAX_SESSIONS} MCP sessions open" in refusal
        # Ending one session makes room for a new one.
        assert http.delete(url, headers={"Mcp-Session-Id": opened[0]}).status_code == 200
        assert http.post(url, json=INIT).status_code == 200
    assert peak_mb(process.pid) < PEAK_LIMIT_MB


def test_a_connection_that_never_finishes_its_headers_is_closed(http_server):
    url, _token, _process = http_server
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    silent = socket.create_connection(("127.0.0.1", port))
    slow = socket.create_connection(("127.0.0.1", port))
    slow.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line that ends the headers
    try:
        for connection in (silent, slow):
            connection.settimeout(120)  # a safety limit; the server closes them after HEADER_TIMEOUT (10 s)
            assert connection.recv(100) == b""
    finally:
        silent.close()
        slow.close()
