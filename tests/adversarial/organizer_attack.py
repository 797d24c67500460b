"""A real `gateway serve --http` for the attacks on the organizer, spoken to by two SDK clients: one makes the
calls, the other pings throughout; the server's peak memory and CPU time read from /proc.

The second client's "ping" is a `tools/list`: the protocol's `ping` is removed in the 2026-07-28 era (the SDK's
client warns that it works under the handshake era only), and a `tools/list` is a request every revision answers
from the catalogue in memory, touching no file, so it is answered at once whenever the event loop is free."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2

from gateway.api.context import home_environment
from gateway.testing import folders_of

PEAK_ABOVE_IDLE_MB = 300
PING_BOUND_S = 2.0  # a liveness bound, far above a ping's usual few milliseconds: a server frozen by a parser
# holding the interpreter takes several seconds or tens of seconds (1 s was met by a healthy server on two cores at
# load 9 and more, where a ping can wait that long for a core)
PING_EVERY_S = 0.2  # the pinger's pause between pings: a ping is always in flight or sent within 0.2 s, so any
# freeze longer than PING_BOUND_S + PING_EVERY_S is met by a ping that waits past the bound. A ping costs client and
# server some 10 ms of CPU: every 50 ms, the pings were a tenth of a core for as long as an attack ran.


def peak_mb(pid: int) -> float:
    """The process's peak resident memory so far (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc")


def cpu_seconds(pid: int) -> float:
    """User and system CPU time the process (all its threads) has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """`gateway serve --http 127.0.0.1:PORT` on `home`, started and stopped by the caller."""

    def __init__(self, home: Path, log: Path) -> None:
        self.home, self.port = home, free_port()
        env = {"PATH": os.environ.get("PATH", ""), **home_environment(home)}
        self.log = log.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gateway", "serve", "--http", f"127.0.0.1:{self.port}"],
            env=env, stdout=subprocess.DEVNULL, stderr=self.log)
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                break
            except OSError:
                assert self.process.poll() is None, log.read_text()
                time.sleep(0.1)
        self.token = (folders_of(home).state / "http-token").read_text().strip()
        self.idle_mb = 0.0

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)
        self.log.close()

    @asynccontextmanager
    async def client(self, name: str) -> Any:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
        from mcp_types import Implementation

        timeout = httpx2.Timeout(120, read=300)
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.token}"}, timeout=timeout) as http,
            Client(streamable_http_client(f"http://127.0.0.1:{self.port}/mcp", http_client=http), mode="legacy",
                   client_info=Implementation(name=name, version="1")) as client,
        ):
            yield client


class Attack:
    """What one attack saw: the answers, the slowest ping while it ran, the server's peak memory after it."""

    def __init__(self) -> None:
        self.answers: list[Any] = []
        self.pings: list[float] = []
        self.peak_mb = 0.0


def text_of(result: Any) -> str:
    import json

    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + "\n" + json.dumps(result.structured_content or {}, ensure_ascii=False)


def attack(server: Server, calls: list[tuple[str, dict]], until: Any = None) -> Attack:
    """Make the calls one after another on one client while a second client pings every PING_EVERY_S (and stop
    after the first answer for which `until(answer)` is true, when given)."""
    seen = Attack()

    async def run() -> None:
        async with server.client("attacker") as attacker, server.client("pinger") as pinger:
            done = anyio.Event()

            async def ping() -> None:
                while not done.is_set():
                    started = time.monotonic()
                    with anyio.fail_after(120):
                        await pinger.list_tools()
                    seen.pings.append(time.monotonic() - started)
                    with anyio.move_on_after(PING_EVERY_S):
                        await done.wait()

            async with anyio.create_task_group() as group:
                group.start_soon(ping)
                for tool, arguments in calls:
                    seen.answers.append(await attacker.call_tool(tool, arguments))
                    if until is not None and until(seen.answers[-1]):
                        break
                await anyio.sleep(PING_EVERY_S + 0.1)  # a ping after the last answer too
                done.set()

    anyio.run(run)
    seen.peak_mb = peak_mb(server.pid)
    return seen


def settle_idle(server: Server) -> None:
    """The server's idle memory: after the handshake of both clients and a call that touches no file."""

    async def run() -> None:
        async with server.client("attacker") as attacker, server.client("pinger") as pinger:
            await pinger.list_tools()
            await attacker.list_tools()

    anyio.run(run)
    server.idle_mb = peak_mb(server.pid)


def assert_bounded(server: Server, seen: Attack, settle: float = 0.5) -> None:
    """Memory within PEAK_ABOVE_IDLE_MB of the idle server, every ping answered within PING_BOUND_S, and no work
    going on once the answers are given (the server's CPU time stays still, `settle` seconds after the last)."""
    assert seen.peak_mb - server.idle_mb <= PEAK_ABOVE_IDLE_MB, (seen.peak_mb, server.idle_mb)
    assert seen.pings and max(seen.pings) < PING_BOUND_S, sorted(seen.pings)[-5:]
    time.sleep(settle)
    before = cpu_seconds(server.pid)
    time.sleep(2.0)
    assert cpu_seconds(server.pid) - before < 0.5  # idle: a worker still expanding would use nearly 2 s


def sparse(path: Path, head: bytes, size: int, tail: bytes = b"") -> Path:
    """A file of `size` bytes that takes the disk of its head and tail only (a hole between)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(head)
        handle.truncate(size)
        if tail:
            handle.seek(size - len(tail))
            handle.write(tail)
    return path
