"""What a `hello` call costs a stdio server's process when calls come back to back, and when they come spaced (run by
hand, never as a timed test).

    .venv/bin/python bench/bench_spaced.py                        # every server, every spacing, 300 calls each
    .venv/bin/python bench/bench_spaced.py --calls 500 --rounds 3 --only gateway,bare
    .venv/bin/python bench/bench_spaced.py --spacing b2b,others   # back to back, and between other servers' calls
    .venv/bin/python bench/bench_spaced.py --pin 0                # every thread of each server on CPU 0
    .venv/bin/python bench/bench_spaced.py --footprint --core     # the memory a call touches; the core's part alone
    .venv/bin/python bench/bench_spaced.py --awake                # no core ever idle (no virtual CPU halted)

Servers (each a process of its own, spoken to one JSON-RPC line at a time, buffered pipes, as bench_mail_served.py
does): `gateway serve` with only the example plugin on (`gateway`), the bare low-level SDK server
(`bench/servers/bare_sdk.py`, `bare`), and the plainest JSON-RPC loop with no SDK (`bench/servers/floor.py`,
`floor`). `--launch NAME=CODE` adds a server started as `python -c CODE` in the gateway's home (an experiment: a
`gateway serve` with something changed before it starts).

Spacings (what comes between two calls of a server):

- `b2b`: nothing, the next call written as soon as the answer is read;
- `sleep1`, `sleep5`, `sleep20`: the client sleeps that many milliseconds (the machine idles, or runs others' work);
- `spin`: another process of ours runs 2 ms of CPU with a small footprint (a Python loop reading the clock);
- `trash`: another process of ours reads and writes 16 MB (every cache line of it): the processor's caches and TLBs
  hold its data afterwards, not the server's;
- `others`: a call of each other server in the run (the interleaving bench_mail_served.py does, one server's call
  between two of another's).

For each server and spacing: the call's wall time (client side) and the CPU time the server's process spent on it
(the first field of each thread's /proc/PID/task/TID/schedstat, read before the line is written and after the answer
is read, as bench_mail_served.py reads it), the time its threads waited for a core (the second field), how many
times each thread was put on a core during the call (the third field: a thread woken for the call counts once or
more), and over the batch, from /proc/PID/task/TID/sched, the migrations between cores per call. Batches of the
servers are taken in turns, spacing by spacing, `--rounds` times, so a load that changes moves every figure alike.
Medians over all the calls of all rounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "servers"))
from lines import LineClient  # noqa: E402

SPACINGS = ("b2b", "sleep1", "sleep2", "sleep3", "sleep5", "sleep20", "spin", "trash", "others")
DEFAULT_SPACINGS = ("b2b", "sleep1", "sleep5", "sleep20", "spin", "trash", "others")

# `--awake`: a process per core that spins whenever nothing else wants the core (SCHED_IDLE: any other thread takes
# the core from it at once), so that no core ever goes idle: the virtual CPU is never halted. Ends with the bench.
AWAKE = r"""
import os, sys
os.sched_setaffinity(0, {int(sys.argv[1])})
os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
while True:
    pass
"""

# Another process of ours, for `spin` and `trash`: each byte read is one piece of work, answered with a byte.
HELPER = r"""
import os, sys, time
buffer = bytearray(16 * 1024 * 1024)
while (order := os.read(0, 1)):
    if order == b"s":
        until = time.perf_counter() + 0.002
        while time.perf_counter() < until:
            pass
    else:  # every cache line of 16 MB read and written: what the caches held is gone
        buffer[::64] = buffer[1::64]
    os.write(1, b".")
"""


# `gateway serve` with each Python thread's name given to the kernel (/proc/PID/task/TID/comm), so the table can say
# which threads ran (Python 3.11 does not name them): `--names`.
NAMED = r"""
import ctypes, sys, threading
prctl = ctypes.CDLL(None).prctl
start = threading.Thread._bootstrap_inner
def named(self):
    prctl(15, self.name.encode()[:15], 0, 0, 0)
    start(self)
threading.Thread._bootstrap_inner = named
from gateway.commands.cli import main
sys.exit(main(["serve"]))
"""


# `--core`: the gateway's own part of a `hello` call, in process (Gateway.call_tool: gate, arguments, masks, audit),
# without the SDK and the stdio transport: its CPU back to back, after 5 ms of sleep, and after other work (100,000
# floats sorted), in a process of its own.
CORE = r"""
import asyncio, random, statistics, sys, tempfile, time
from importlib.metadata import entry_points
from pathlib import Path
from gateway.engine.core import Caller
from gateway.testing import make_gateway
plugin = {e.name: e for e in entry_points(group="gateway.plugins")}["hello"].load()
gateway = make_gateway([("hello", plugin)], home=Path(tempfile.mkdtemp(prefix="bench-spaced-core-")),
                       config={"gateway": {"plugins": ["hello"]}})
caller, junk, calls = Caller("bench", "1", "stdio"), [random.random() for _ in range(100_000)], int(sys.argv[1])
async def main():
    found = {}
    for kind in ("b2b", "sleep5", "trash"):
        times = []
        for _ in range(calls):
            if kind == "trash":
                sorted(junk)
            elif kind == "sleep5":
                await asyncio.sleep(0.005)
            started = time.process_time_ns()
            await gateway.call_tool("hello", {"name": "Ada"}, caller)
            times.append(time.process_time_ns() - started)
        found[kind] = round(statistics.median(times) / 1e6, 3)
    print(", ".join(f"{kind} {ms:.3f}" for kind, ms in found.items()))
asyncio.run(main())
"""


def thread_stats(pid: int) -> dict[int, tuple[int, int, int]]:
    """Per thread: (ns on a core, ns waiting for one, times put on one), from /proc/PID/task/TID/schedstat."""
    stats = {}
    for thread in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{thread}/schedstat") as file:
                ran, waited, slices = file.read().split()[:3]
        except (FileNotFoundError, ProcessLookupError):
            continue
        stats[int(thread)] = (int(ran), int(waited), int(slices))
    return stats


def referenced_kb(pid: int) -> dict[str, int]:
    """KB of each kind of mapping (its file's name, `[anon]`, `[heap]`...) whose pages were touched since the
    referenced bits were last cleared (/proc/PID/smaps, `Referenced:`)."""
    found: dict[str, int] = {}
    mapping = "[anon]"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        parts = line.split()
        if parts and not parts[0].endswith(":"):  # a mapping's first line: range, perms, offset, dev, inode, [name]
            mapping = Path(parts[5]).name if len(parts) > 5 else "[anon]"
        elif parts and parts[0] == "Referenced:":
            found[mapping] = found.get(mapping, 0) + int(parts[1])
    return found


def footprint(server: Server, calls: int = 15) -> tuple[int, dict[str, int]]:
    """The memory one call touches (KB of 4 KB pages, median of `calls` calls 10 ms apart), and the largest parts of
    the median call by mapping: the referenced bits cleared (/proc/PID/clear_refs), one call, the bits read."""
    seen = []
    for _ in range(calls):
        time.sleep(0.01)
        Path(f"/proc/{server.pid}/clear_refs").write_text("1")
        server.hello()
        found = referenced_kb(server.pid)
        seen.append((sum(found.values()), found))
    seen.sort(key=lambda item: item[0])
    return seen[len(seen) // 2]


def migrations(pid: int) -> int:
    """Moves from one core to another, all threads of a process so far (/proc/PID/task/TID/sched)."""
    total = 0
    for thread in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{thread}/sched") as file:
                for line in file:
                    if line.startswith("se.nr_migrations"):
                        total += int(line.split(":")[1])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


class Server(LineClient):
    """A stdio MCP server with a `hello` tool, asked one call at a time."""

    def hello(self) -> None:
        answer = self._ask("tools/call", {"name": "hello", "arguments": {"name": "Ada"}})
        if "result" not in answer or answer["result"].get("isError"):
            raise RuntimeError(f"{self.name}: {answer}")

    def label(self, tid: int) -> str:
        """A thread's name: `loop` for the main thread, else its kernel name (`--names`) or its id's rank."""
        if tid == self.pid:
            return "loop"
        try:
            name = Path(f"/proc/{self.pid}/task/{tid}/comm").read_text().strip()
        except OSError:
            name = "gone"
        return name if name != Path(f"/proc/{self.pid}/comm").read_text().strip() else f"tid+{tid - self.pid}"

    def pin(self, cpu: int) -> None:
        for thread in os.listdir(f"/proc/{self.pid}/task"):
            os.sched_setaffinity(int(thread), {cpu})


class Helper:
    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", HELPER], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def work(self, kind: str) -> None:
        os.write(self.process.stdin.fileno(), b"s" if kind == "spin" else b"t")
        os.read(self.process.stdout.fileno(), 1)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


def batch(server: Server, servers: list[Server], spacing: str, calls: int, helper: Helper) -> dict[str, list]:
    """`calls` hello calls of `server` with `spacing` between them: each call's wall, CPU, wait and wake-ups."""
    found: dict[str, list] = {"wall": [], "cpu": [], "wait": [], "slices": [], "woken": []}
    moved = migrations(server.pid)
    spent = sum(ran for ran, _, _ in thread_stats(server.pid).values())
    others = [other for other in servers if other is not server]
    for _ in range(calls):
        if spacing.startswith("sleep"):
            time.sleep(int(spacing[5:]) / 1000)
        elif spacing in ("spin", "trash"):
            helper.work(spacing)
        elif spacing == "others":
            for other in others:
                other.hello()
        before = thread_stats(server.pid)
        started = time.perf_counter()
        server.hello()
        took = time.perf_counter() - started
        after = thread_stats(server.pid)
        deltas = {tid: tuple(a - b for a, b in zip(after[tid], before.get(tid, (0, 0, 0)), strict=True))
                  for tid in after}
        found["wall"].append(took)
        found["cpu"].append(sum(d[0] for d in deltas.values()) / 1e9)
        found["wait"].append(sum(d[1] for d in deltas.values()) / 1e9)
        found["slices"].append(sum(d[2] for d in deltas.values()))
        # Threads put on a core during the call: the main (event loop) thread is the process's own id.
        found["woken"].append(tuple(sorted(server.label(tid) for tid, d in deltas.items() if d[2])))
        for tid, d in deltas.items():
            found.setdefault(f"thread {server.label(tid)}", []).append(d)
    found["migrations"] = [(migrations(server.pid) - moved) / calls]
    # All the process's CPU over the batch, per call: what it spends between calls too (a poll before it sleeps).
    found["all"] = [(sum(ran for ran, _, _ in thread_stats(server.pid).values()) - spent) / 1e9 / calls]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--calls", type=int, default=300, help="calls per batch")
    parser.add_argument("--rounds", type=int, default=2, help="batches per server and spacing, taken in turns")
    parser.add_argument("--only", default="gateway,bare,floor", help="servers, separated by commas")
    parser.add_argument("--spacing", default=",".join(DEFAULT_SPACINGS),
                        help=f"spacings, separated by commas (of {', '.join(SPACINGS)})")
    parser.add_argument("--awake", action="store_true",
                        help="keep every core busy while it would idle (see AWAKE): no virtual CPU halts")
    parser.add_argument("--pin", type=int, default=None, metavar="CPU", help="every server thread on this CPU")
    parser.add_argument("--launch", action="append", default=[], metavar="NAME=CODE",
                        help="also serve `python -c CODE` (in the gateway's home) under NAME")
    parser.add_argument("--before", type=Path, default=None, metavar="TREE",
                        help="also serve `gateway serve` of this source tree (`git archive COMMIT | tar -x -C TREE`) "
                             "as `before`")
    parser.add_argument("--names", action="store_true", help="serve the gateway with its threads named (see NAMED)")
    parser.add_argument("--threads", action="store_true", help="also each thread's part per call")
    parser.add_argument("--core", action="store_true",
                        help="also the gateway's own part of a call in process, without the SDK (see CORE)")
    parser.add_argument("--footprint", action="store_true",
                        help="also the memory a call touches, by mapping (see `footprint`; needs to own the servers)")
    options = parser.parse_args()
    spacings = [s for s in options.spacing.split(",") if s]
    unknown = [s for s in spacings if s not in SPACINGS]
    if unknown:
        parser.error(f"unknown spacing: {', '.join(unknown)} (one of {', '.join(SPACINGS)})")

    from gateway.api.context import home_environment
    from gateway.served import write_config

    home = Path(tempfile.mkdtemp(prefix="bench-spaced-"))
    write_config(home, {"gateway": {"plugins": ["hello"]}})
    env = {**os.environ, **home_environment(home)}
    commands = {"gateway": [sys.executable, "-m", "gateway", "serve"],
                "bare": [sys.executable, str(HERE / "servers" / "bare_sdk.py")],
                "floor": [sys.executable, str(HERE / "servers" / "floor.py")]}
    if options.names:
        commands["gateway"] = [sys.executable, "-c", NAMED]
    for launch in options.launch:
        name, _, code = launch.partition("=")
        commands[name] = [sys.executable, "-c", code]
    wanted = [n for n in options.only.split(",") if n] + [launch.partition("=")[0] for launch in options.launch]
    servers = [Server(name, commands[name], env, home) for name in dict.fromkeys(wanted)]
    if options.before is not None:  # started in the home: `python -m` puts its working folder first on the path
        tree = options.before.resolve()
        servers.append(Server("before", commands["gateway"][:1] + ["-m", "gateway", "serve"],
                              {**env, "PYTHONPATH": os.pathsep.join([str(tree), str(tree / "plugins")])}, home))
    if options.pin is not None:
        for server in servers:
            server.pin(options.pin)
    helper = Helper()
    awake = [subprocess.Popen([sys.executable, "-c", AWAKE, str(cpu)]) for cpu in sorted(os.sched_getaffinity(0))
             ] if options.awake else []
    for server in servers:  # warm: every code path met once
        for _ in range(50):
            server.hello()
    touched = {server.name: footprint(server) for server in servers} if options.footprint else {}
    results = {(s.name, spacing): {} for s in servers for spacing in spacings}
    started = time.monotonic()
    for round_number in range(options.rounds):
        for spacing in spacings:
            turn = round_number % len(servers)
            for server in servers[turn:] + servers[:turn]:
                if options.pin is not None:
                    server.pin(options.pin)  # threads started since
                found = batch(server, servers, spacing, options.calls, helper)
                kept = results[(server.name, spacing)]
                for key, values in found.items():
                    kept.setdefault(key, []).extend(values)
    elapsed = time.monotonic() - started
    for server in servers:
        server.close()
    helper.close()
    for spinner in awake:
        spinner.kill()
        spinner.wait()

    print(f"hello calls, {options.calls} a batch x {options.rounds} rounds, in {elapsed:.0f} s; load "
          f"{os.getloadavg()[0]:.1f}; pinned: {'no' if options.pin is None else f'CPU {options.pin}'}; cores kept "
          f"awake: {'yes' if awake else 'no'}; medians "
          "(ms): wall / CPU of the server's process / its wait for a core; then mean times its threads were put on a "
          "core per call, migrations per call, the mean CPU per call over the whole batch (what runs between calls "
          "too), and the commonest set of threads that ran")
    print(f"  {'server':10} {'spacing':8} {'wall':>7} {'CPU':>7} {'wait':>7} {'p90 CPU':>8} {'slices':>7} "
          f"{'migr.':>6} {'all CPU':>8}  threads run (share of calls)")
    for server in servers:
        for spacing in spacings:
            kept = results[(server.name, spacing)]
            ran: dict[tuple, int] = {}
            for woken in kept["woken"]:
                ran[woken] = ran.get(woken, 0) + 1
            common = sorted(ran.items(), key=lambda item: -item[1])[:2]
            said = "; ".join(f"{'+'.join(k) or 'none'} {v / len(kept['woken']):.0%}" for k, v in common)
            cpu = sorted(kept["cpu"])
            print(f"  {server.name:10} {spacing:8} {statistics.median(kept['wall']) * 1000:7.3f} "
                  f"{statistics.median(cpu) * 1000:7.3f} {statistics.median(kept['wait']) * 1000:7.3f} "
                  f"{cpu[int(len(cpu) * 0.9)] * 1000:8.3f} {statistics.mean(kept['slices']):7.2f} "
                  f"{statistics.mean(kept['migrations']):6.2f} {statistics.mean(kept['all']) * 1000:8.3f}  {said}")
            if options.threads:
                calls = len(kept["cpu"])
                for key in sorted(k for k in kept if k.startswith("thread ")):
                    parts = kept[key]
                    print(f"      {key[7:]:24} CPU {sum(p[0] for p in parts) / calls / 1e6:6.3f} ms a call, "
                          f"put on a core {sum(p[2] for p in parts) / calls:5.2f} times a call")
    if options.core:
        done = subprocess.run([sys.executable, "-c", CORE, str(options.calls)], env=env, cwd=home, capture_output=True,
                              text=True, check=True)
        print("  the gateway's own part (Gateway.call_tool in process, no SDK, no stdio), median CPU ms of "
              f"{options.calls} calls: {done.stdout.strip()} (trash here: 100,000 floats sorted between calls)")
    for name, (total, parts) in touched.items():
        largest = sorted(parts.items(), key=lambda item: -item[1])[:5]
        print(f"  {name}: a call touches {total:,} KB of pages ("
              + ", ".join(f"{mapping} {kb:,}" for mapping, kb in largest) + ")")


if __name__ == "__main__":
    sys.exit(main())
