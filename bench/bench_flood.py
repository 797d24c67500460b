"""The figures of issue 7 section 5, measured on a real `gateway serve` in a throwaway home.

    .venv/bin/python bench/bench_flood.py [--requests 40000] [--query-mb 8] [--nap 2] [--parts query,ping,flood]

Prints: the server's peak RSS (VmHWM) after an 8 MB phrase query to rousseau_search_sessions; the time that
query took to be refused; how long a ping waited while a tool slept NAP seconds on a worker; the peak RSS after
REQUESTS tools/call written without reading any answer (then every answer read and counted).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gateway.api.context import home_environment  # noqa: E402
from gateway.testing import write_config  # noqa: E402

NAPPER = '''
import time
from gateway import Tool, hookimpl

def nap(seconds: float) -> str:
    time.sleep(seconds)
    return "woke"

@hookimpl
def register_tools(gateway):
    return [Tool.from_function(nap, read_only=True)]
'''


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Server:
    def __init__(self, home: Path, env: dict[str, str] | None = None) -> None:
        # PYTHONPATH passes through, so that another checkout of the gateway can be measured the same way.
        inherited = {k: os.environ[k] for k in ("PATH", "PYTHONPATH") if k in os.environ}
        extra = dict(env or {})
        if "PYTHONPATH" in extra and "PYTHONPATH" in inherited:
            extra["PYTHONPATH"] += os.pathsep + inherited["PYTHONPATH"]
        full = {**inherited, **home_environment(home), **extra}
        self.process = subprocess.Popen([sys.executable, "-m", "gateway", "serve"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=full)

    def send(self, message: dict) -> None:
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def answer(self) -> dict:
        return json.loads(self.process.stdout.readline())

    def handshake(self) -> None:
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
        self.answer()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(60)


def huge_query(home: Path, megabytes: int) -> None:
    write_config(home, {"gateway": {"plugins": ["sessions"]}})
    server = Server(home)
    server.handshake()
    words = megabytes * 1_000_000 // 5
    query = '"' + "word " * (words - 1) + 'word"'
    started = time.perf_counter()
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                 "params": {"name": "rousseau_search_sessions", "arguments": {"query": query}}})
    answer = server.answer()
    took = time.perf_counter() - started
    text = answer["result"]["content"][0]["text"]
    print(f"{megabytes} MB query: refused in {took:.2f} s, peak RSS {peak_mb(server.process.pid):.0f} MB: {text!r}")
    server.close()


def ping_during_nap(home: Path, nap: float) -> None:
    site = home / "site"
    site.mkdir()
    (site / "gateway_napper_fake.py").write_text(NAPPER)
    info = site / "gateway_napper_fake-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gateway-napper-fake\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[gateway.plugins]\nnapper = gateway_napper_fake\n")
    write_config(home, {"gateway": {"plugins": ["napper"]}})
    server = Server(home, {"PYTHONPATH": str(site)})
    server.handshake()
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                 "params": {"name": "nap", "arguments": {"seconds": nap}}})
    time.sleep(0.2)  # let the call reach its worker
    started = time.perf_counter()
    server.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    first = server.answer()
    waited = time.perf_counter() - started
    server.answer()
    print(f"ping while a tool slept {nap:g} s: answered in {waited * 1000:.1f} ms (first answer: id {first['id']})")
    server.close()


def flood(home: Path, requests: int) -> None:
    write_config(home, {"gateway": {"plugins": ["hello"]}})
    server = Server(home)
    server.handshake()
    payload = "".join(
        json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                    "params": {"name": "hello", "arguments": {"name": f"Guest {i}"}}}) + "\n"
        for i in range(1, requests + 1)
    ).encode()
    started = time.perf_counter()
    writer = threading.Thread(target=lambda: (server.process.stdin.write(payload), server.process.stdin.flush()))
    writer.start()
    writer.join(10)
    stalled = writer.is_alive()
    answered = sum(1 for _ in range(requests) if "result" in server.answer())
    writer.join()
    took = time.perf_counter() - started
    print(f"flood of {requests:,} tools/call written unread (writer stalled: {stalled}): {answered:,} answered in "
          f"{took:.1f} s, peak RSS {peak_mb(server.process.pid):.0f} MB")
    server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=40_000, help="requests in the flood (default 40,000)")
    parser.add_argument("--query-mb", type=int, default=8, help="size of the huge query in MB (default 8)")
    parser.add_argument("--nap", type=float, default=2.0, help="seconds the slow tool sleeps (default 2)")
    parser.add_argument("--parts", default="query,ping,flood", help="which measures to run, comma-separated")
    options = parser.parse_args()
    parts = set(options.parts.split(","))
    with tempfile.TemporaryDirectory() as folder:
        for name, run in (("query", lambda h: huge_query(h, options.query_mb)),
                          ("ping", lambda h: ping_during_nap(h, options.nap)),
                          ("flood", lambda h: flood(h, options.requests))):
            if name not in parts:
                continue
            home = Path(folder) / name
            home.mkdir()
            run(home)


if __name__ == "__main__":
    main()
