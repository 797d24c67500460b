"""Round trips of `tools/call echo` through the SDK's stdio_server and through gateway.wire.transport.

Usage: .venv/bin/python bench/bench_transport.py [--rounds 7] [--sequential 2000] [--pipelined 5000]

The server is tests/gateway/echo_server.py in both cases (`--sdk` switches its transport), so only
the transport differs. Each round runs both, alternating which goes first, and the medians of the
rounds are compared. Sequential: one call at a time, waiting for each answer. Pipelined: all calls
written in one go by a writer thread while the answers are read.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ECHO_SERVER = ROOT / "tests" / "gateway" / "echo_server.py"


def _line(obj: dict) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def _call(request_id: int, text: str) -> bytes:
    return _line(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}},
        }
    )


class Server:
    def __init__(self, sdk: bool) -> None:
        args = [sys.executable, str(ECHO_SERVER)] + (["--sdk"] if sdk else [])
        self.proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin = self.proc.stdin
        self.stdout = self.proc.stdout
        self.stdin.write(
            _line(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "bench", "version": "1"},
                    },
                }
            )
            + _line({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        self.stdout.readline()
        self.next_id = 1

    def sequential(self, n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            self.stdin.write(_call(self.next_id, "hello"))
            reply = self.stdout.readline()
            assert b'"result"' in reply, reply
            self.next_id += 1
        return n / (time.perf_counter() - start)

    def pipelined(self, n: int) -> float:
        payload = b"".join(_call(self.next_id + i, "hello") for i in range(n))
        self.next_id += n
        start = time.perf_counter()
        writer = threading.Thread(target=self.stdin.write, args=(payload,))
        writer.start()
        for _ in range(n):
            reply = self.stdout.readline()
            assert b'"result"' in reply, reply
        elapsed = time.perf_counter() - start
        writer.join()
        return n / elapsed

    def close(self) -> None:
        self.stdin.close()
        self.proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7, help="rounds of both transports (default: 7)")
    parser.add_argument("--sequential", type=int, default=2000, help="calls one at a time per round (default: 2000)")
    parser.add_argument("--pipelined", type=int, default=5000, help="calls written in one go per round (default: 5000)")
    opts = parser.parse_args()

    results: dict[str, dict[str, list[float]]] = {
        name: {"sequential": [], "pipelined": []} for name in ("sdk", "gateway")
    }
    for round_no in range(opts.rounds):
        order = ("sdk", "gateway") if round_no % 2 == 0 else ("gateway", "sdk")
        for name in order:
            server = Server(sdk=name == "sdk")
            # A short warm-up so imports and first-call costs are not measured.
            server.sequential(50)
            results[name]["sequential"].append(server.sequential(opts.sequential))
            results[name]["pipelined"].append(server.pipelined(opts.pipelined))
            server.close()
        print(
            f"round {round_no + 1}: "
            + "  ".join(
                f"{name} seq {results[name]['sequential'][-1]:.0f}/s pipe {results[name]['pipelined'][-1]:.0f}/s"
                for name in ("sdk", "gateway")
            ),
            flush=True,
        )

    print(f"\nmedians over {opts.rounds} rounds (calls per second)")
    for mode in ("sequential", "pipelined"):
        sdk = statistics.median(results["sdk"][mode])
        ours = statistics.median(results["gateway"][mode])
        # Both runs of a round share the machine's load at that moment, so their ratio is the steadier figure.
        paired = statistics.median(
            o / s for o, s in zip(results["gateway"][mode], results["sdk"][mode], strict=True)
        )
        print(
            f"  {mode:<10}  sdk {sdk:8.0f}   gateway.wire.transport {ours:8.0f}   "
            f"ratio of medians {ours / sdk:.2f}x   median of per-round ratios {paired:.2f}x"
        )


if __name__ == "__main__":
    main()
