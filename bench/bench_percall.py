"""Where the CPU time of one tools/call goes in `gateway serve`, stage by stage (run by hand, never as a timed test).

    .venv/bin/python bench/bench_percall.py                                   # hello's `hello` (a cheap tool)
    .venv/bin/python bench/bench_percall.py --mail /work/wt/mailsearch-10k    # search_mail on bench_mail.py's kept
                                                                              # data (its --work folder)
    .venv/bin/python bench/bench_percall.py --mail DIR --query cheapside      # one query kind only (the rare word)
    .venv/bin/python bench/bench_percall.py --before /tmp/base                # the same, beside another source tree
                                                                              # (`git archive COMMIT | tar -x -C DIR`)
    .venv/bin/python bench/bench_percall.py --before /tmp/base --coarse       # only the clocks the core's part needs

Each tree is served twice, the servers taken in turns, batch by batch, so that a busy machine slows every one
alike: a plain `gateway serve` (only the CPU time of the whole process between one call's line and the next's is
read: `time.process_time_ns()` each time the transport frames a tools/call, a clock the kernel keeps for every
thread of the process), and a staged one, with a clock on each stage below (`time.thread_time_ns()` of the thread
that runs it, so the worker thread's part is its own). The client writes one call at a time and waits for its
answer, so between two frames the process does exactly one call.

Stages (what each holds, as the served process runs them; indented ones are inside the one above):

    wire: frame              a line made a JSON-RPC message (json.loads, the SDK's JSONRPCMessage model)
    SDK: request checked     the params against the revision's schema (mcp_types.methods.validate_client_request)
    SDK: params model        CallToolRequestParams built from them
    SDK: context             the request's context (_meta read, ServerSession)
    server: call_tool        the gateway's handler, all of it:
      core: call_tool          Gateway.call_tool, all of it:
        snapshot, catalogue      the config and gate as they are now; the merged catalogue
        arguments for audit      what the audit line keeps of them, masked
        arguments checked        against the tool's input schema
        context                  the plugin's settings and the call's Context
        refresh check            the plugin's store brought up to date (nothing new: a look)
        run (loop side)          the hop to a worker thread and back, as the event loop's thread pays it; for a
                                 read-only tool quick every time lately, what its run on the loop's own thread costs
                                 around the tool (the tool and masks, counted below, are taken out of every stage
                                 around them)
          worker: tool             the tool's own function (on the worker thread, or the loop's for a quick tool)
          worker: masks            the core's masks over its answer (likewise)
        output checked           the data against the tool's output schema
        audit line               the line made, chained, written
      server: result           the answer made the SDK's CallToolResult
    SDK: result shaped       the result dumped and checked against the revision's schema
    SDK: response            the JSON-RPC response made and queued
    wire: encode             the response serialised (model_dump_json)
    wire: write              the hand-over to the transport's writer thread (whose own write is in the whole
                             process's time); a lone call's answer is serialised and handed over from inside
                             "SDK: response", and counted there

The rest (the event loop, anyio's streams and tasks, the middleware) is the whole process's time less the stages'.
A tree of the older, flat layout (gateway/core.py, gateway/transport.py, ...) is clocked through OLD_NAMES, and its
server's handler where the SDK is handed it; the table then names the stages it could not place in a tree, or that no
call met, whose time is in the rest.
A clock costs about a microsecond each time it is read; the staged server's total shows how much they add. Each
stage met inside call_tool adds its two clocks' cost (and its wrapper's) to call_tool's time, the same in every tree:
`--coarse` clocks only call_tool, the tool and the masks (what the core's own part is worked out from), so that the
core's part holds no other clock's cost; the stages inside it are then not told apart.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The clocks, put in place in the served process before `gateway serve` starts. Each stage is a function looked up
# by its module and name at call time, so wrapping the module's attribute catches every call.
STAGED = r'''
import contextvars, functools, importlib, inspect, json, sys, threading, time
PLAIN = sys.argv[2] == "plain"
STAGES = json.loads(sys.argv[3])
calls, current = [], {}
start = [0]
ACTIVE = contextvars.ContextVar("active", default=())

def add(label, ns):
    current[label] = current.get(label, 0) + ns

def clock(label, level, function):
    # A stage met inside another of its level or deeper (the context the refresh makes, a model validated inside
    # the schema check) is counted in that one only. What is open is kept per task (a context variable), not per
    # thread: an older transport's writer task runs on the loop's thread between another task's stages.
    def enter():
        active = ACTIVE.get()
        if active and max(open_level for open_level, _, _ in active) >= level:
            return None
        token = ACTIVE.set(active + ((level, label, threading.get_ident()),))
        return token, time.thread_time_ns()

    def leave(entered):
        if entered is not None:
            token, began = entered
            met.add(label)
            spent = time.thread_time_ns() - began
            add(label, spent)
            ACTIVE.reset(token)
            if label == "worker: tool and masks":
                # A quick tool run on the loop's own thread: its time is its own, not that of the stages around it
                # on that thread (a worker thread's time is in none of theirs).
                here = threading.get_ident()
                for _, around, thread in ACTIVE.get():
                    if thread == here:
                        add(around, -spent)

    if inspect.iscoroutinefunction(function):
        @functools.wraps(function)
        async def timed(*args, **kwargs):
            began = enter()
            try:
                return await function(*args, **kwargs)
            finally:
                leave(began)
    else:
        @functools.wraps(function)
        def timed(*args, **kwargs):
            began = enter()
            try:
                return function(*args, **kwargs)
            finally:
                leave(began)
    return timed

# The flat layout of older trees (gateway/core.py, gateway/transport.py, ...): a module of today's layout not found
# in the tree served is looked up under its old name.
OLD_NAMES = json.loads(sys.argv[4])
placed, met = {}, set()

def module_of(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        if name not in OLD_NAMES:
            raise
        return importlib.import_module(OLD_NAMES[name])

def wrap(label, level, module, name):
    owner = module_of(module)
    *path, attribute = name.split(".")
    for part in path:
        owner = getattr(owner, part)
    found = inspect.getattr_static(owner, attribute)
    if isinstance(found, classmethod):
        setattr(owner, attribute, classmethod(clock(label, level, found.__func__)))
    elif isinstance(found, staticmethod):
        setattr(owner, attribute, staticmethod(clock(label, level, found.__func__)))
    else:
        setattr(owner, attribute, clock(label, level, found))

transport = module_of("gateway.wire.transport")
frame = transport._Wire._frame

def framed(self, line):
    global current
    if b'"tools/call"' in line:
        now = time.process_time_ns()
        if start[0]:
            current["process"] = now - start[0]
            calls.append(current)
        start[0], current = now, {}
    began = time.thread_time_ns()
    try:
        return frame(self, line)
    finally:
        if not PLAIN:
            add("wire: frame", time.thread_time_ns() - began)

transport._Wire._frame = framed
if not PLAIN:
    import mcp.server.runner as runner
    runner_class = next(v for v in vars(runner).values() if isinstance(v, type) and "_serialize" in vars(v))
    for label, level, module, name in STAGES:
        name = name.replace("RUNNER", runner_class.__name__)
        try:
            wrap(label, level, module, name)
        except (AttributeError, KeyError, ImportError) as error:
            placed.setdefault(label, [])
            print(f"bench_percall: no {module}.{name} here ({error!r})", file=sys.stderr)
            if label == "server: call_tool":
                # An older server's handler is a closure inside build_server: clocked where the SDK is handed it.
                from mcp.server.lowlevel import server as lowlevel
                built = lowlevel.Server.__init__

                def init(self, *args, built=built, label=label, level=level, **kwargs):
                    if kwargs.get("on_call_tool") is not None:
                        kwargs["on_call_tool"] = clock(label, level, kwargs["on_call_tool"])
                    built(self, *args, **kwargs)
                lowlevel.Server.__init__ = init
                placed[label].append("mcp.server.lowlevel.Server(on_call_tool=...)")
        else:
            placed.setdefault(label, []).append(f"{module_of(module).__name__}.{name}")

main = module_of("gateway.commands.cli").main
try:
    main(["serve"])
except SystemExit:
    pass
finally:
    with open(sys.argv[1], "w") as out:
        json.dump({"calls": calls, "placed": placed, "met": sorted(met)}, out)
'''

# (label, level, module, function): a stage is inside the nearest one above it of a lower level.
STAGES = [
    ("SDK: request checked", 0, "mcp_types.methods", "validate_client_request"),
    ("SDK: params model", 0, "mcp_types", "CallToolRequestParams.model_validate"),
    ("SDK: context", 0, "mcp.server.runner", "RUNNER._make_context"),
    ("server: call_tool", 0, "gateway.wire.server", "_Handlers.call_tool"),
    ("core: call_tool", 1, "gateway.engine.core", "Gateway.call_tool"),
    ("core: snapshot, catalogue", 2, "gateway.engine.core", "Gateway.snapshot"),
    ("core: snapshot, catalogue", 2, "gateway.engine.core", "Gateway.catalogue"),
    ("core: arguments for audit", 2, "gateway.engine.core", "summarise_arguments"),
    ("core: arguments checked", 2, "gateway.engine.core", "check_arguments"),
    ("core: context", 2, "gateway.engine.core", "Gateway.context"),
    ("core: refresh check", 2, "gateway.engine.core", "Gateway.refresh"),
    ("core: run (loop side)", 2, "gateway.engine.core", "Gateway._run"),
    ("worker: tool and masks", 3, "gateway.engine.core", "_answer_of"),
    ("worker: masks", 4, "gateway.engine.core", "masked_answer"),
    ("core: output checked", 2, "gateway.engine.core", "check_output"),
    ("core: audit line", 2, "gateway.engine.core", "Gateway._audit"),
    ("server: result", 1, "gateway.wire.server", "_call_result"),
    ("SDK: result shaped", 0, "mcp.server.runner", "RUNNER._serialize"),
    ("SDK: response", 0, "mcp.shared.jsonrpc_dispatcher", "JSONRPCDispatcher._write_result"),
    ("wire: encode", 0, "gateway.wire.transport", "_Wire._encode"),
    ("wire: write", 0, "gateway.wire.descriptors", "Sink.write"),
]

# Today's modules by the names they had in the flat layout of older trees (before the core was split into engine,
# wire, commands and api), for `--before` such a tree.
OLD_NAMES = {
    "gateway.engine.core": "gateway.core",
    "gateway.wire.server": "gateway.server",
    "gateway.wire.transport": "gateway.transport",
    "gateway.wire.descriptors": "gateway.descriptors",
    "gateway.commands.cli": "gateway.cli",
}

# The stages in the order they are shown, with the one each is inside (for the table's indent and its "rest").
ORDER = [
    ("wire: frame", None), ("SDK: request checked", None), ("SDK: params model", None), ("SDK: context", None),
    ("server: call_tool", None), ("core: call_tool", "server: call_tool"),
    ("core: snapshot, catalogue", "core: call_tool"), ("core: arguments for audit", "core: call_tool"),
    ("core: arguments checked", "core: call_tool"), ("core: context", "core: call_tool"),
    ("core: refresh check", "core: call_tool"), ("core: run (loop side)", "core: call_tool"),
    ("core: output checked", "core: call_tool"), ("core: audit line", "core: call_tool"),
    ("server: result", "server: call_tool"), ("SDK: result shaped", None), ("SDK: response", None),
    ("wire: encode", None), ("wire: write", None),
]


WORKER = ["worker: tool", "worker: masks"]
# The stages the core's own part is worked out from (`--coarse`).
COARSE = {"server: call_tool", "core: call_tool", "worker: tool and masks", "worker: masks"}


class Served:
    """One `gateway serve` (plain or staged) on a home, spoken to one JSON-RPC line at a time."""

    def __init__(self, home: Path, source: Path | None, staged: bool, out: Path) -> None:
        from gateway.api.context import home_environment

        env = {**os.environ, **home_environment(home)}
        if source is not None:
            # The tree's own example plugin too: the one installed here may ask for names an older core lacks.
            env["PYTHONPATH"] = os.pathsep.join([str(source), str(source / "plugins"),
                                                 str(source / "contrib" / "gateway-hello")])
        self.out = out
        # Started in the home, not here: `python -c` puts its working folder first on the path, which in a checkout
        # would serve that checkout's gateway whatever PYTHONPATH names.
        self.process = subprocess.Popen(
            [sys.executable, "-c", STAGED, str(out), "staged" if staged else "plain", json.dumps(STAGES),
             json.dumps(OLD_NAMES)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, bufsize=0, cwd=home)
        self.number = 0
        self.ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "bench-percall", "version": "1"}})
        self.process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def ask(self, method: str, params: dict) -> dict:
        self.number += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.number, "method": method, "params": params},
                          separators=(",", ":"))
        self.process.stdin.write(line.encode() + b"\n")
        while True:
            answer = self.process.stdout.readline()
            if not answer:
                raise RuntimeError("gateway serve stopped")
            found = json.loads(answer)
            if found.get("id") == self.number:
                return found

    def call(self, tool: str, arguments: dict) -> None:
        result = self.ask("tools/call", {"name": tool, "arguments": arguments})
        if "error" in result or result["result"].get("isError"):
            raise RuntimeError(f"{tool} {arguments}: {json.dumps(result)[:300]}")

    def close(self) -> dict:
        """What the served process kept: its calls' clocks, where each stage was placed, the stages met."""
        self.process.stdin.close()
        self.process.wait(timeout=60)
        return json.loads(self.out.read_text())


def echo_home(home: Path) -> tuple[str, list[dict]]:
    from gateway.served import write_config

    write_config(home, {"gateway": {"plugins": ["hello"]}})
    return "hello", [{"name": "Ada"}, {"name": "Grace", "times": 2}]


def mail_home(work: Path, only: str | None = None) -> tuple[str, list[dict]]:
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_mail_served import QUERIES

    from gateway.served import write_config

    home = work / "home"
    write_config(home, {"gateway": {"plugins": ["mail"]}, "plugins": {"mail": {"accounts": [
        {"name": "bench", "maildir": str(home / "Mail" / "bench"), "addresses": ["pat@example.org"],
         "authserv_id": "mx.example.org"}]}}}, projects=[{"id": "closed", "ai": False, "senders": ["@example.com"]}])
    queries = [row[0] for row in QUERIES if only is None or row[0] == only]
    if not queries:
        raise SystemExit(f"--query {only!r} is none of bench_mail_served.py's: {', '.join(r[0] for r in QUERIES)}")
    return "search_mail", [{"query": query} for query in queries]


def per_call(records: list[dict[str, int]]) -> dict[str, float]:
    """Each stage's median over the calls, in ms (the worker's tool: its stage less the masks inside it)."""
    for record in records:
        record["worker: tool"] = record.get("worker: tool and masks", 0) - record.get("worker: masks", 0)
    labels = {label for record in records for label in record}
    return {label: statistics.median(r.get(label, 0) for r in records) / 1e6 for label in labels}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--mail", type=Path, default=None, metavar="WORK",
                        help="search_mail on bench_mail.py's kept work folder, instead of hello's hello")
    parser.add_argument("--query", default=None, metavar="WORDS",
                        help="with --mail: only this one of bench_mail_served.py's queries (e.g. its rare word)")
    parser.add_argument("--before", type=Path, default=None, metavar="TREE",
                        help="also serve this source tree (a checkout or `git archive` of another commit)")
    parser.add_argument("--batches", type=int, default=8, help="batches per server, taken in turns")
    parser.add_argument("--calls", type=int, default=100, help="calls per batch")
    parser.add_argument("--warm", type=int, default=60, help="calls left out at each server's start")
    parser.add_argument("--coarse", action="store_true",
                        help="clock only call_tool, the tool and the masks (no clock's own cost in the core's part)")
    options = parser.parse_args()
    global STAGES
    if options.coarse:
        STAGES = [stage for stage in STAGES if stage[0] in COARSE]

    scratch = Path(tempfile.mkdtemp(prefix="bench-percall-"))
    if options.mail:
        tool, arguments = mail_home(options.mail, options.query)
        home = options.mail / "home"
    else:
        home = scratch / "home"
        tool, arguments = echo_home(home)
    trees = {"after": None} if options.before is None else {"before": options.before, "after": None}
    servers = {(tree, kind): Served(home, source, kind == "staged", scratch / f"{tree}-{kind}.json")
               for tree, source in trees.items() for kind in ("plain", "staged")}
    for server in servers.values():
        for number in range(options.warm):
            for attempt in range(6):  # search_mail's first calls work out the gate's verdicts over the index
                try:
                    server.call(tool, arguments[number % len(arguments)])
                    break
                except RuntimeError as error:
                    if "longer than" not in str(error) or attempt == 5:
                        raise
    started = time.monotonic()
    for batch in range(options.batches):
        order = list(servers.values())
        turn = batch % len(order)
        for server in order[turn:] + order[:turn]:
            for number in range(options.calls):
                server.call(tool, arguments[(batch * options.calls + number) % len(arguments)])
    elapsed = time.monotonic() - started
    kept = {key: server.close() for key, server in servers.items()}
    results = {key: per_call(found["calls"][options.warm:]) for key, found in kept.items()}

    columns = [(tree, kind) for tree in trees for kind in ("plain", "staged")]
    print(f"{tool}: {options.batches} batches x {options.calls} calls per server, in turns, in {elapsed:.0f} s; "
          f"load {os.getloadavg()[0]:.1f}; CPU ms per call, median over the calls")
    print(f"  {'stage':34}" + "".join(f"{tree + ' ' + kind:>16}" for tree, kind in columns))
    print(f"  {'whole process':34}" + "".join(f"{results[c]['process']:16.3f}" for c in columns))
    staged = [c for c in columns if c[1] == "staged"]
    for label, parent in ORDER:
        indent = "    " if parent == "core: call_tool" else "  " if parent else ""
        print(f"  {indent + label:34}" + "".join(f"{'':16}" if kind == "plain" else f"{results[(t, kind)].get(label, 0):16.3f}"
                                                 for t, kind in columns))
        if label == "core: run (loop side)":
            for worker in WORKER:
                print(f"  {'      ' + worker:34}" + "".join(
                    f"{'':16}" if kind == "plain" else f"{results[(t, kind)].get(worker, 0):16.3f}"
                    for t, kind in columns))
    for column in staged:
        # A stage the bench could not place in this tree (no such function), or placed but never run by a call,
        # counts nowhere but in "outside every stage": say so, rather than let the rest hold it silently.
        placed, met = kept[column]["placed"], set(kept[column]["met"])
        unplaced = sorted(label for label, where in placed.items() if not where)
        unmet = sorted(label for label, where in placed.items() if where and label not in met)
        moved = sorted({where for places in placed.values() for where in places
                        if any(where.startswith(name + ".") for name in OLD_NAMES.values())})
        if unplaced or unmet or moved:
            print(f"  {column[0]}: stages not placed in this tree (their time is in the rest): "
                  f"{', '.join(unplaced) or 'none'}; placed but met by no call: {', '.join(unmet) or 'none'}"
                  + (f"; placed under the old layout's names: {', '.join(moved)}" if moved else ""))
    own = {}
    for column in staged:
        found = results[column]
        core = found.get("core: call_tool", 0)
        inside = sum(found.get(label, 0) for label, parent in ORDER if parent == "core: call_tool")
        top = sum(found.get(label, 0) for label, parent in ORDER if parent is None)
        tool_part = found.get("worker: tool", 0)
        own[column[0]] = core + found.get("worker: tool and masks", 0) - tool_part
        print(f"  {column[0]}: the core's own part (call_tool less the tool, on both threads) "
              f"{own[column[0]]:.3f} ms; "
              f"unclocked inside call_tool {core - inside:.3f} ms; outside every stage (loop, streams, tasks) "
              f"{found['process'] - top - found.get('worker: tool and masks', 0):.3f} ms")
    if "before" in own and own["before"]:
        plain = results[("after", "plain")]["process"] / results[("before", "plain")]["process"]
        print(f"  after against before: the core's own part {own['after'] / own['before']:.2f}x, the whole plain "
              f"process {plain:.2f}x")


if __name__ == "__main__":
    sys.exit(main())
