"""search_mail as an agent meets it (through `gateway serve`), beside the long-lived processes mail clients keep open:
`mu server` (mu4e's) and notmuch's Python bindings, on the same Maildir, interleaved (run by hand).

    .venv/bin/python bench/bench_mail.py --messages 100000 --work DIR --keep     # first: the Maildir, our index,
                                                                                  # notmuch's database
    mu init --muhome=DIR/mu --maildir=DIR/home/Mail/bench && eatmydata mu index --muhome=DIR/mu  # (eatmydata:
                                                                                  # without Xapian's fsyncs)
    .venv/bin/python bench/bench_mail_served.py --work DIR --repeat 20
    .venv/bin/python bench/bench_mail_served.py --work DIR --profile DIR/served.prof   # where a warm call's time goes
    .venv/bin/python bench/bench_mail_served.py --work DIR --before TREE   # another source tree served too, in turns
                                                                           # (`git archive COMMIT | tar -x -C TREE`)
    .venv/bin/python bench/bench_mail_served.py --work DIR --only cheapside,zqxjvbnonexistent   # a few kinds only
    .venv/bin/python bench/bench_mail_served.py --work DIR --floor        # hello calls beside: the SDK's floor
    .venv/bin/python bench/bench_mail_served.py --work DIR --only cheapside --floor --back-to-back 5   # each asked
                                                                  # 5 times in a row: caches warm, as in a burst
    .venv/bin/python bench/bench_mail_served.py --work DIR --in-process --before TREE   # the tool's function alone

Each of QUERIES (22 kinds: words common and rare, a phrase, a prefix, AND/OR/NOT, from:, to:, list:, attachment:,
date ranges, flags) is written as a user of each tool writes it; a word in no message (NO_MATCH) is asked too and
reported apart, outside the median of the 22. In every round each query is asked of each of the
three, the order of the three turned from one query to the next:

- ours: `tools/call search_mail` (limit 20) written as one JSON-RPC line to `gateway serve`'s stdin and timed to its
  answer's line (what the host's pipe carries: the stdio hop, arguments checked, the index's no-change look, the
  gate, masks, the audit line, the answer's JSON); the page, and the total counted up to its bound;
- mu: `(find :query "..." :maxnum 20 ...)` written to `mu server`'s stdin, timed to its `(:found N)` frame (its
  s-expression protocol: each frame is \\376, the length in hex, \\377, then the expression);
- notmuch: in a Python process of its own (Debian's python3-notmuch2), the time of `Database.messages(query,
  sort=NEWEST_FIRST)` for the first 20 messages' ids, plus `count_messages(query)`, measured inside that process
  (what a client holding the bindings pays: no pipe in its figure).

Beside each call's wall time, the CPU time the server's process spent on that call: the first field of each of its
threads' /proc/PID/task/TID/schedstat (the scheduler's count, in nanoseconds), read before the call is written and
after its answer is read; and the CPU time each process used over all the rounds, per call (/proc/PID/stat, in
clock ticks). On a machine shared with other work, the wall time of a call that crosses threads and processes also
holds the waits for a core, which the CPU time does not. An index made before 2026-12-02 is searched through many
FTS5 segments: `gateway mail index --full` (with the work folder's home) merges them once, as the mail plugin's
bulk refresh now does.

Before the rounds, a digest of our answers to every query asked (their text and structured content, as the warm-up
got them) is printed for each gateway served: a change to the search that keeps every answer byte for byte keeps it.

The figure per tool is the median over the queries of each query's median (ratios ours/theirs beside). With
`--profile FILE`, `gateway serve` runs under yappi (`pip install yappi`; every thread, CPU time) and the profile is
saved for pstats when it stops: `python -m pstats FILE`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))
from lines import LineClient  # noqa: E402

# (ours, notmuch, mu): the same question as each tool's users write it. The rare word is in one message of the
# corpus (so about 17 of 100,000, each copy under its own Message-ID).
RARE = "cheapside"
QUERIES = [
    ("money", "money", "money"),
    ("linux", "linux", "linux"),
    ('"click here"', '"click here"', '"click here"'),
    ("python", "python", "python"),
    ("free OR offer", "free OR offer", "free OR offer"),
    ("razor", "razor", "razor"),
    ("spamass*", "spamass*", "spamass*"),
    ("razor AND NOT spam", "razor AND NOT spam", "razor AND NOT spam"),
    ("to:spamassassin-talk", "to:spamassassin-talk", "to:spamassassin-talk*"),
    ("from:rssfeeds@spamassassin.taint.org", "from:rssfeeds@spamassassin.taint.org",
     "from:rssfeeds@spamassassin.taint.org"),
    ("list:freshrpms", "list:freshrpms", "list:freshrpms*"),
    ("attachment:signature.asc", "attachment:signature.asc", "file:signature.asc"),
    ("linux date:2002-08..2002-09", "linux date:2002-08..2002-09", "linux date:20020801..20020930"),
    ("date:2002-08-01..2002-08-15", "date:2002-08-01..2002-08-15", "date:20020801..20020815"),
    ("(linux OR python) -razor", "(linux OR python) AND NOT razor", "(linux OR python) AND NOT razor"),
    ("subject:free is:flagged", "subject:free tag:flagged", "subject:free flag:flagged"),
    ("is:unread", "tag:unread", "flag:unread"),
    ("subject:linux", "subject:linux", "subject:linux"),
    ("from:example.com", "from:example.com", "from:example.com"),
    ("mortgage AND rates", "mortgage AND rates", "mortgage AND rates"),
    ("newsletter OR unsubscribe", "newsletter OR unsubscribe", "newsletter OR unsubscribe"),
    (RARE, RARE, RARE),
]
# A word in no message: what a search costs when it finds nothing (asked in every round, outside the 22's median).
NO_MATCH = "zqxjvbnonexistent"
EXTRA = [(NO_MATCH, NO_MATCH, NO_MATCH)]


# `gateway serve` under yappi (every thread: a tool's body runs on a worker thread, which cProfile would not see),
# CPU time, saved for pstats when its stdin closes.
PROFILED = """
import signal, sys, yappi
from gateway.commands.cli import main
yappi.set_clock_type("cpu")
yappi.start(builtins=False, profile_threads=True)
signal.signal(signal.SIGUSR1, lambda *_: yappi.clear_stats())  # the warm-up's calls left out
try:
    main(["serve"])
except SystemExit:
    pass
finally:
    yappi.stop()
    yappi.get_func_stats().save(sys.argv[1], type="pstat")
"""


class Gateway(LineClient):
    """`gateway serve` on stdio, spoken to one JSON-RPC line at a time."""

    def __init__(self, home: Path, profile: Path | None, tree: Path | None = None) -> None:
        from gateway.api.context import home_environment

        env = {**os.environ, **home_environment(home)}
        if tree is not None:  # another source tree's gateway, with its plugins
            env["PYTHONPATH"] = os.pathsep.join([str(tree.resolve()), str(tree.resolve() / "plugins")])
        command = [sys.executable, "-m", "gateway", "serve"]
        if profile is not None:
            command = [sys.executable, "-c", PROFILED, str(profile)]
        self.answers: list = []  # each search's text and structured content, for the digest
        # Started in the home, not here: `python -m` puts its working folder first on the path, which in a checkout
        # would serve that checkout's gateway whatever PYTHONPATH names (`--before`).
        super().__init__("bench-mail-served", command, env, home)

    def search(self, query: str) -> tuple[float, int, str]:
        started = time.perf_counter()
        answer = self._ask("tools/call", {"name": "search_mail", "arguments": {"query": query}})
        took = time.perf_counter() - started
        result = answer["result"]
        if result.get("isError"):
            raise RuntimeError(f"{query!r}: {result['content'][0]['text']}")
        data = result["structuredContent"]
        self.answers.append([[c.get("text") for c in result["content"]], data])
        return took, len(data["hits"]), f"{'>' if data['more'] else ''}{data['total']}"


class Echo(LineClient):
    """A cheap `hello` call, the floor under every search: `gateway serve` with only the example plugin on (in a home
    of its own), or the bare SDK server of bench_gateway.py (`bench/servers/bare_sdk.py`), asked in the same rounds."""

    def __init__(self, bare: bool) -> None:
        import tempfile

        from gateway.api.context import home_environment
        from gateway.served import write_config

        home = Path(tempfile.mkdtemp(prefix="bench-mail-floor-"))
        write_config(home, {"gateway": {"plugins": ["hello"]}})
        command = ([sys.executable, str(Path(__file__).resolve().parent / "servers" / "bare_sdk.py")] if bare
                   else [sys.executable, "-m", "gateway", "serve"])
        self.answers: list = []
        super().__init__("bench-mail-served", command, {**os.environ, **home_environment(home)}, home)

    def search(self, query: str) -> tuple[float, int, str]:
        started = time.perf_counter()
        answer = self._ask("tools/call", {"name": "hello", "arguments": {"name": "Ada"}})
        took = time.perf_counter() - started
        if answer["result"].get("isError"):
            raise RuntimeError(f"hello: {answer['result']['content'][0]['text']}")
        return took, 0, "-"


# search_mail's own function alone, in a process of its own on the work folder's home (run with a tree's PYTHONPATH
# for --before): its CPU time (this thread's clock) per call, back to back ("hot": the code and the index's pages
# in the processor's caches) and with other work between two calls ("cold": 100,000 floats sorted, as a served
# process runs the SDK, the core and JSON between two searches). The cold figure is what a served call pays.
IN_PROCESS = r"""
import asyncio, json, random, statistics, sys, time
from pathlib import Path
import gateway_mail
from gateway.engine.core import Caller
from gateway.testing import make_gateway
from gateway_mail.mail import answers
home, queries, rounds = Path(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
gateway = make_gateway([gateway_mail], home=home, config=json.loads(sys.argv[4]), projects=json.loads(sys.argv[5]))
seen = {}
search = answers.search_answer
answers.search_answer = lambda ctx, *rest: seen.__setitem__("ctx", ctx) or search(ctx, *rest)
junk, found = [random.random() for _ in range(100_000)], {}
for query in queries:
    for kind in ("hot", "cold"):
        # A call's context of its own for each batch: the call's deadline (a context's) would stop a long batch.
        asyncio.run(gateway.call_tool("search_mail", {"query": query}, Caller("bench", "1", "direct")))
        ctx, times = seen["ctx"], []
        for _ in range(rounds):
            if kind == "cold":
                sorted(junk)
            started = time.thread_time_ns()
            search(ctx, query, None, None, None, 20)
            times.append(time.thread_time_ns() - started)
        found[f"{query} {kind}"] = statistics.median(times) / 1e6
print(json.dumps(found))
"""


def in_process(home: Path, tree: Path | None, queries: list[str], rounds: int, config: dict,
               projects: list) -> dict[str, float]:
    """search_mail's function alone, hot and cold (see IN_PROCESS), in ms of CPU, for this tree or `tree`."""
    from gateway.api.context import home_environment

    env = {**os.environ, **home_environment(home)}
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree.resolve()), str(tree.resolve() / "plugins")])
    done = subprocess.run([sys.executable, "-c", IN_PROCESS, str(home), json.dumps(queries), str(rounds),
                           json.dumps(config), json.dumps(projects)], env=env, cwd=home, capture_output=True,
                          text=True)
    if done.returncode:
        raise RuntimeError(f"in process: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


class Mu:
    """`mu server`, mu4e's long-lived process, spoken to in its s-expression protocol."""

    _FOUND = re.compile(rb"^\(:found (\d+)")

    def __init__(self, muhome: Path) -> None:
        self.process = subprocess.Popen(["mu", "server", f"--muhome={muhome}"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # buffered, as ours

    def _frame(self) -> bytes:
        read = self.process.stdout.read
        while True:  # the greeting and prompts (";; ...") come outside frames
            byte = read(1)
            if not byte:
                raise RuntimeError("mu server stopped")
            if byte == b"\xfe":
                break
        length = b""
        while (byte := read(1)) != b"\xff":
            length += byte
        size, body = int(length, 16), b""
        while len(body) < size:
            body += read(size - len(body))
        return body

    def search(self, query: str) -> tuple[float, int, str]:
        quoted = query.replace("\\", "\\\\").replace('"', '\\"')
        command = (f'(find :query "{quoted}" :threads nil :sortfield :date :descending t :maxnum 20 '
                   ":skip-dups nil :include-related nil)\n").encode()
        started = time.perf_counter()
        self.process.stdin.write(command)
        self.process.stdin.flush()
        while True:
            frame = self._frame()
            if frame.startswith(b"(:error"):
                raise RuntimeError(f"mu server: {query!r}: {frame.decode(errors='replace')}")
            found = self._FOUND.match(frame)
            if found:
                took = time.perf_counter() - started
                return took, int(found.group(1)), found.group(1).decode()

    def close(self) -> None:
        self.process.stdin.write(b"(quit)\n")
        self.process.stdin.close()
        self.process.wait(timeout=60)


NOTMUCH_CHILD = r"""
import json, sys, time
import notmuch2
db = notmuch2.Database(config=sys.argv[1])
for line in sys.stdin:
    query = json.loads(line)
    started = time.perf_counter()
    ids = []
    for message in db.messages(query, sort=notmuch2.Database.SORT.NEWEST_FIRST, exclude_tags=()):
        ids.append(message.messageid)
        if len(ids) == 20:
            break
    total = db.count_messages(query, exclude_tags=())
    took = time.perf_counter() - started
    print(json.dumps([took, len(ids), total]), flush=True)
"""


class Notmuch:
    """notmuch's Python bindings (Debian's python3-notmuch2) in a process of their own; times measured inside it."""

    def __init__(self, config: Path) -> None:
        self.process = subprocess.Popen(["/usr/bin/python3", "-c", NOTMUCH_CHILD, str(config)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)

    def search(self, query: str) -> tuple[float, int, str]:
        self.process.stdin.write(json.dumps(query) + "\n")
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"notmuch2: {self.process.stderr.read()}")
        took, shown, total = json.loads(line)
        return took, shown, str(total)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=60)


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used so far (/proc/PID/stat), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_ns(pid: int) -> int:
    """CPU time the live threads of a process have run so far, in nanoseconds: the first field of each thread's
    /proc/PID/task/TID/schedstat (the scheduler's own count, where /proc/PID/stat counts in clock ticks of 10 ms),
    read before and after each call to give that call's CPU time."""
    total = 0
    for thread in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{thread}/schedstat") as stats:
                total += int(stats.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):  # a thread that ended between the listing and the read
            pass
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--work", type=Path, required=True, help="bench_mail.py's work folder (kept with --keep)")
    parser.add_argument("--repeat", type=int, default=20, help="rounds (each asks every query of every tool)")
    parser.add_argument("--muhome", type=Path, default=None, help="mu's home (default WORK/mu)")
    parser.add_argument("--no-mu", action="store_true")
    parser.add_argument("--no-notmuch", action="store_true")
    parser.add_argument("--profile", type=Path, default=None, help="run gateway serve under yappi into FILE")
    parser.add_argument("--before", type=Path, default=None, metavar="TREE",
                        help="also serve this source tree (a checkout or `git archive` of another commit), in turns")
    parser.add_argument("--only", default=None, metavar="QUERIES",
                        help="only these queries (ours as written, separated by commas; e.g. 'cheapside,"
                             f"{NO_MATCH}'), each round")
    parser.add_argument("--floor", action="store_true",
                        help="also ask, in the same rounds, a `hello` call of `gateway serve` (only the example plugin "
                             "on) and of the bare SDK server: the floor a search's wall stands on")
    parser.add_argument("--back-to-back", type=int, default=1, metavar="N",
                        help="ask each query of a tool N times in a row, the first left out of the figures (its caches "
                             "warm: a host's calls in a burst; the default, 1, asks each once between the others' calls"
                             ", as an agent's spaced calls meet caches others' work has cooled)")
    parser.add_argument("--in-process", action="store_true",
                        help="only time search_mail's own function in process, hot and cold (see IN_PROCESS), for "
                             "the rare word and the no-match query (or --only's), this tree and --before's")
    options = parser.parse_args()

    work, home = options.work, options.work / "home"
    root = home / "Mail" / "bench"
    from gateway.served import write_config

    config = {"gateway": {"plugins": ["mail"]}, "plugins": {"mail": {"accounts": [
        {"name": "bench", "maildir": str(root), "addresses": ["pat@example.org"], "authserv_id": "mx.example.org"}]}}}
    projects = [{"id": "closed", "ai": False, "senders": ["@example.com"]}]
    write_config(home, config, projects=projects)
    queries, rare = QUERIES + EXTRA, RARE
    if options.only:
        wanted = [q.strip() for q in options.only.split(",") if q.strip()]
        unknown = [q for q in wanted if q not in {row[0] for row in queries}]
        if unknown:
            parser.error(f"--only: not queries of this bench: {', '.join(unknown)}")
        queries = [row for row in queries if row[0] in wanted]
    if options.in_process:
        asked = [row[0] for row in queries] if options.only else [RARE, NO_MATCH]
        rounds = max(options.repeat, 50)
        trees = {"ours": None} if options.before is None else {"ours": None, "before": options.before}
        print(f"search_mail's function alone, in process, median CPU ms of {rounds} calls each (hot: back to back; "
              f"cold: 100,000 floats sorted between two calls); load {os.getloadavg()[0]:.1f}")
        for name, tree in trees.items():
            found = in_process(home, tree, asked, rounds, config, projects)
            print(f"  {name:8}" + "; ".join(f"{query}: hot {found[query + ' hot']:.3f}, cold {found[query + ' cold']:.3f}"
                                        for query in asked))
        return

    tools: dict[str, object] = {"ours": Gateway(home, options.profile)}
    if options.before is not None:
        tools["before"] = Gateway(home, None, options.before)
    muhome = options.muhome or work / "mu"
    if not options.no_mu and shutil.which("mu") and (muhome / "xapian").is_dir():
        tools["mu server"] = Mu(muhome)
    if options.floor:
        tools["hello (gateway)"] = Echo(bare=False)
        tools["hello (bare SDK)"] = Echo(bare=True)
    config = work / "notmuch-config"
    if not options.no_notmuch and config.is_file() and Path("/usr/bin/python3").exists():
        tools["notmuch2"] = Notmuch(config)
    column = {"ours": 0, "before": 0, "notmuch2": 1, "mu server": 2, "hello (gateway)": 0, "hello (bare SDK)": 0}
    names = list(tools)
    times: dict[str, dict[str, list[float]]] = {name: {q[0]: [] for q in queries} for name in names}
    cpu: dict[str, dict[str, list[float]]] = {name: {q[0]: [] for q in queries} for name in names}
    found: dict[str, dict[str, str]] = {name: {} for name in names}
    for name in names:  # warm: every process has read what it reads, once
        for row in queries:
            for attempt in range(6):  # the gateway's first call works out the gate's verdicts over the whole index
                try:
                    found[name][row[0]] = tools[name].search(row[column[name]])[2]
                    break
                except RuntimeError as error:
                    if "longer than" not in str(error) or attempt == 5:
                        raise
    # The answers of the warm-up (every query once): the same digest before and after a change to the search means
    # byte-identical answers, text and structured content, for every query asked.
    import hashlib

    for name in names:
        if type(tools[name]) is Gateway:
            digest = hashlib.sha256(json.dumps(tools[name].answers, sort_keys=True, ensure_ascii=False).encode())
            print(f"answers' digest, {name} ({len(tools[name].answers)} queries): {digest.hexdigest()[:16]}")
    if options.profile is not None:
        import signal

        tools["ours"].process.send_signal(signal.SIGUSR1)
        time.sleep(0.5)
    used = {name: cpu_seconds(tools[name].process.pid) for name in names}
    started = time.monotonic()
    for round_number in range(options.repeat):
        for number, row in enumerate(queries):
            turn = (round_number + number) % len(names)
            for name in names[turn:] + names[:turn]:
                pid = tools[name].process.pid
                for again in range(options.back_to_back):
                    before = cpu_ns(pid)
                    took, _shown, _total = tools[name].search(row[column[name]])
                    if again or options.back_to_back == 1:
                        cpu[name][row[0]].append((cpu_ns(pid) - before) / 1e9)
                        times[name][row[0]].append(took)
    elapsed = time.monotonic() - started
    calls = options.repeat * len(queries) * options.back_to_back
    used = {name: (cpu_seconds(tools[name].process.pid) - used[name]) / calls for name in names}
    for tool in tools.values():
        tool.close()

    burst = f", each asked {options.back_to_back} times in a row (the first left out)" if options.back_to_back > 1 else ""
    print(f"{len(queries)} queries x {options.repeat} rounds{burst}, interleaved, in {elapsed:.0f} s; load "
          f"{os.getloadavg()[0]:.1f}; medians in ms, wall / CPU of the server's process for that call (matches: "
          "ours total up to its bound, '>' past it | notmuch's count | mu's found, at most 20)")
    print(f"  {'query':38} " + " ".join(f"{name:>24}" for name in names))
    for row in queries:
        cells = " ".join(f"{statistics.median(times[n][row[0]]) * 1000:7.2f} /{statistics.median(cpu[n][row[0]]) * 1000:6.2f}"
                         f" ({found[n][row[0]]:>6})" for n in names)
        print(f"  {row[0][:38]:38} {cells}")
    # The 22 kinds' median (the no-match query said apart, unless it is all --only asked for).
    counted = [row[0] for row in queries if row not in EXTRA] or [row[0] for row in queries]
    medians = {n: statistics.median(statistics.median(times[n][q]) for q in counted) for n in names}
    line = "median of the queries' medians: " + ", ".join(f"{n} {medians[n] * 1000:.2f} ms" for n in names)
    ratios = [f"ours/{n} {medians['ours'] / medians[n]:.2f}" for n in names if n != "ours"]
    print(line + (f" ({', '.join(ratios)})" if ratios else ""))
    # CPU per call from each thread's scheduler count, read around the call: the figure the load moves least.
    # notmuch's child also reads its query line and writes its answer: its CPU holds that, not only the search.
    spent = {n: statistics.median(statistics.median(cpu[n][q]) for q in counted) for n in names}
    print("median of the queries' CPU medians (the server's process, per call): "
          + ", ".join(f"{n} {spent[n] * 1000:.2f} ms" for n in names)
          + "".join(f" (ours/{n} {spent['ours'] / spent[n]:.2f})" for n in names if n != "ours" and spent[n]))
    print("CPU time a call costs the server's process (user + system, over all the rounds; on a shared machine "
          "wall time also holds the wait for other work): "
          + ", ".join(f"{n} {used[n] * 1000:.2f} ms" for n in names)
          + "".join(f" (ours/{n} {used['ours'] / used[n]:.2f})" for n in names if n != "ours" and used[n]))
    for word, what in ((rare, "rare word"), (NO_MATCH, "no match")):
        if word in times[names[0]]:
            said = ", ".join(f"{n} {statistics.median(times[n][word]) * 1000:.2f} ms wall, "
                             f"{statistics.median(cpu[n][word]) * 1000:.2f} ms CPU" for n in names)
            print(f"{what} {word!r}: {said}" + (" (target for ours: <= 1 ms)" if word == rare else ""))
    if options.profile:
        print(f"profile of gateway serve: {options.profile} (python -m pstats {options.profile})")


if __name__ == "__main__":
    sys.exit(main())
