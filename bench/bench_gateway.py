"""Side by side, one run, same client: the gateway (every installed plugin on), a bare SDK server, and a plain loop.

    .venv/bin/python bench/bench_gateway.py [--rounds 5] [--calls 2000] [--plugins all|hello,...] [--cold-only]
                                            [--before TREE] [--instructions]

Reports medians over interleaved rounds: cold start to the tools/list answer (wall time, and the server's CPU
time, user and system, read from /proc when the answer arrives: the steadier figure on a shared machine), sequential and pipelined
tools/call throughput, p50/p99 latency of sequential calls, peak RSS; and the ratios against the bare SDK.
By default the gateway serves with every installed plugin on (the built-ins sessions, cron and timeline, and
any other, mail and spam once installed), as a person's gateway does; the calls go to the example plugin's
`hello`. `--plugins hello` measures the example plugin alone; `--cold-only` measures only the cold start;
`--before TREE` serves another source tree too (`git archive COMMIT | tar -x -C TREE`), in the same rounds; both
trees are then served from PYTHONPATH, so that they compare alike.
`--instructions` counts instead the machine instructions of one start to the tools/list answer and exit, under
valgrind's cachegrind (no cache simulation; `PYTHONHASHSEED=0`): the same count under any load, so that a change of
a few milliseconds shows on a shared machine where CPU time varies by a tenth from one start to the next. Each server
is started once first, unmeasured, so that what a start keeps for the next (the tool schemas) is there.
The server's CPU time per call (user and system, from /proc) is given beside each rate: the steadier figure when
other work shares the machine. The machine's load average is printed with the table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from gateway.api.context import home_environment  # noqa: E402
from gateway.testing import write_config  # noqa: E402

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(i: int) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                        "params": {"name": "hello", "arguments": {"name": f"Ada {i}"}}}) + "\n").encode()


def line(message: dict) -> bytes:
    return (json.dumps(message) + "\n").encode()


class Server:
    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        # Started in the home, not here: `python -m` puts its working folder first on the path, which in a checkout
        # would serve that checkout's gateway whatever PYTHONPATH names (`--before`).
        # Buffered both ways, as a host's client reads (an unbuffered pipe's readline reads a byte a call: the
        # tools/list answer of every built-in cost this process tens of thousands of reads), each send flushed.
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env, cwd=env["HOME"])

    def send(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def read(self) -> dict:
        return json.loads(self.process.stdout.readline())

    def cpu_ms(self) -> float:
        """CPU time (user and system) the server has spent so far; steadier than wall time on a loaded machine."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")

    def peak_rss_mb(self) -> float:
        for text in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if text.startswith("VmHWM:"):
                return int(text.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(30)
        self.process.stdout.close()


def installed_plugins() -> list[str]:
    """Every plugin announced in the `gateway.plugins` entry-point group of this environment."""
    from importlib.metadata import entry_points

    return sorted({entry.name for entry in entry_points(group="gateway.plugins")})


def one_round(command: list[str], env: dict[str, str], calls: int) -> dict[str, float]:
    server = Server(command, env)
    server.send(line(INIT))
    server.read()
    server.send(line(INITIALIZED))
    server.send(line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    listed = server.read()
    cold = time.perf_counter() - server.started
    cold_cpu = server.cpu_ms()
    assert "result" in listed, listed
    if not calls:
        server.close()
        return {"cold_start_ms": cold * 1000, "cold_start_cpu_ms": cold_cpu,
                "tools_listed": len(listed["result"]["tools"])}
    for i in range(50):  # warm up
        server.send(call(10 + i))
        server.read()
    latencies = []
    cpu_before = server.cpu_ms()
    start = time.perf_counter()
    for i in range(calls):
        before = time.perf_counter()
        server.send(call(1000 + i))
        answer = server.read()
        latencies.append(time.perf_counter() - before)
        assert "result" in answer, answer
    sequential = calls / (time.perf_counter() - start)
    sequential_cpu = (server.cpu_ms() - cpu_before) / calls
    payload = b"".join(call(100000 + i) for i in range(calls))
    cpu_before = server.cpu_ms()
    start = time.perf_counter()
    writer = threading.Thread(target=server.send, args=(payload,))
    writer.start()
    for _ in range(calls):
        server.read()
    pipelined = calls / (time.perf_counter() - start)
    pipelined_cpu = (server.cpu_ms() - cpu_before) / calls
    writer.join()
    latencies.sort()
    rss = server.peak_rss_mb()
    server.close()
    return {
        "cold_start_ms": cold * 1000,
        "cold_start_cpu_ms": cold_cpu,
        "sequential_calls_per_s": sequential,
        "pipelined_calls_per_s": pipelined,
        "sequential_cpu_ms_call": sequential_cpu,
        "pipelined_cpu_ms_call": pipelined_cpu,
        "p50_ms": latencies[len(latencies) // 2] * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
        "peak_rss_mb": rss,
    }


def instructions(command: list[str], env: dict[str, str]) -> float:
    """Machine instructions (millions) of one start to the tools/list answer and its exit, counted by cachegrind."""
    measured = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", *command]
    process = subprocess.Popen(measured, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env={**env, "PYTHONHASHSEED": "0"}, bufsize=0, cwd=env["HOME"])
    for message in (INIT, INITIALIZED, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}):
        process.stdin.write(line(message))
        if "id" in message:
            answer = json.loads(process.stdout.readline())
            assert "result" in answer, answer
    process.stdin.close()
    said = process.stderr.read().decode(errors="replace")
    process.wait(600)
    found = [text for text in said.splitlines() if "I refs:" in text or "I   refs:" in text]
    if not found:
        raise SystemExit(f"valgrind gave no count:\n{said[-2000:]}")
    return int(found[0].rsplit(":", 1)[1].strip().replace(",", "")) / 1e6


def count_instructions(servers: dict[str, list[str]], envs: dict[str, dict[str, str]]) -> None:
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    for name, command in servers.items():
        one_round(command, envs[name], 0)  # what a first start keeps for the next
    counted: dict[str, float] = {}
    workers = [threading.Thread(target=lambda n=name, c=command: counted.__setitem__(n, instructions(c, envs[n])))
               for name, command in servers.items()]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    print(f"{'':24}" + "".join(f"{name:>14}" for name in servers) + f"{'gateway/SDK':>14}")
    print(f"{'start_instructions_M':24}" + "".join(f"{counted[n]:14.1f}" for n in servers)
          + f"{counted['gateway'] / counted['bare SDK']:14.3f}")
    if "before" in counted:
        print(f"\nbefore/SDK {counted['before'] / counted['bare SDK']:.3f}; gateway/before "
              f"{counted['gateway'] / counted['before']:.3f}")
    print("\nOne start each to the tools/list answer and exit, under cachegrind (instructions do not depend on the "
          "load). Target: cold start ratio <= 1.1.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--plugins", default="all", help="all (every installed plugin, the default) or a comma list")
    parser.add_argument("--cold-only", action="store_true", help="measure the cold start only (no calls)")
    parser.add_argument("--before", type=Path, default=None, metavar="TREE",
                        help="also serve this source tree (a checkout or `git archive` of another commit)")
    parser.add_argument("--instructions", action="store_true",
                        help="count the instructions of one start each under valgrind, instead of timing rounds")
    options = parser.parse_args()
    plugins = installed_plugins() if options.plugins == "all" else options.plugins.split(",")
    if "hello" not in plugins and not options.cold_only:
        plugins.append("hello")  # the calls go to the example plugin's tool
    calls = 0 if options.cold_only else options.calls
    home = Path(tempfile.mkdtemp(prefix="gateway-bench-"))
    write_config(home, {"gateway": {"plugins": plugins}})
    # PYTHONPATH passes through, so that another checkout of the gateway can be measured the same way.
    env = {**{k: os.environ[k] for k in ("PATH", "PYTHONPATH") if k in os.environ}, **home_environment(home)}
    python = sys.executable
    servers = {
        "gateway": [python, "-m", "gateway", "serve"],
        "bare SDK": [python, str(HERE / "servers" / "bare_sdk.py")],
        "plain loop": [python, str(HERE / "servers" / "floor.py")],
    }
    envs = {name: env for name in servers}
    if options.before is not None:
        servers["before"] = [python, "-m", "gateway", "serve"]
        tree = options.before.resolve()
        # A home of its own: what a start keeps for the next (the tool schemas, keyed by the files they were read
        # from) would otherwise be kept by one tree and found stale by the other, each start describing every tool.
        other_home = Path(tempfile.mkdtemp(prefix="gateway-bench-before-"))
        write_config(other_home, {"gateway": {"plugins": plugins}})
        # Each tree's own example plugin (whose `hello` the calls go to): the one installed here may ask for names
        # an older core lacks.
        envs["before"] = {**env, **home_environment(other_home), "PYTHONPATH": os.pathsep.join(
            [str(tree), str(tree / "plugins"), str(tree / "contrib" / "gateway-hello")])}
        # This tree is then served the same way, from PYTHONPATH: two more folders searched for each of the ~800
        # modules a start imports cost about half a percent, which would otherwise count against the other tree.
        here = HERE.parent
        envs["gateway"] = {**env, "PYTHONPATH": os.pathsep.join(
            [str(here), str(here / "plugins"), str(here / "contrib" / "gateway-hello")])}
    if options.cold_only or options.instructions:
        del servers["plain loop"]  # it lists no tools
    if options.instructions:
        count_instructions(servers, envs)
        return
    print(f"gateway plugins on: {', '.join(plugins)}", file=sys.stderr)
    results: dict[str, list[dict[str, float]]] = {name: [] for name in servers}
    for round_number in range(options.rounds):
        # Interleaved, so drift hits all alike; the order flips each round, so going first (cold caches) does too.
        order = list(servers.items()) if round_number % 2 == 0 else list(reversed(servers.items()))
        for name, command in order:
            results[name].append(one_round(command, envs[name], calls))
        print(f"round {round_number + 1}/{options.rounds} done", file=sys.stderr)
    medians = {name: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for name, runs in results.items()}
    keys = list(next(iter(medians.values())))
    print(f"{'':24}" + "".join(f"{name:>14}" for name in servers) + f"{'gateway/SDK':>14}")
    for key in keys:
        ratio = medians["gateway"][key] / medians["bare SDK"][key]
        print(f"{key:24}" + "".join(f"{medians[n][key]:14.2f}" for n in servers) + f"{ratio:14.2f}")
    print(f"\n{options.rounds} rounds, {calls} calls each; medians; gateway plugins on: {', '.join(plugins)}; "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end "
          f"({os.cpu_count()} cores). Targets: cold start ratio <= 1.1, sequential calls ratio >= 1.0.")


if __name__ == "__main__":
    main()
