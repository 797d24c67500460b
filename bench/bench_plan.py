"""Benchmark of the plan (list_tasks now, agenda and reminders for a week), side by side with todoman and khal on the
same files (neither lists alarms: reminders has no "theirs").

    .venv/bin/python bench/bench_plan.py                          # 20,000 tasks and 20,000 events
    .venv/bin/python bench/bench_plan.py --tasks 2000 --events 2000 --repeat 10   # a quicker look

A seeded generator (gateway_mail.plan.sample.generate) writes the vdirs; then, on the same files, in one run:

- the first reading ever (no cache on disk: every file parsed by icalendar, the masked cache written), in as
  many calls as it takes (each stops before its deadline and says the answer is incomplete): total and calls;
- cold: the first call of a new process (the cache on disk, nothing in memory), in a child process, its imports
  left out (a server imports once) but everything else in;
- warm: later calls in one process, median and p95 over --repeat calls;
- through make_gateway's call path (argument checks, gate, masks, audit line);
- `todo --porcelain list` (todoman: open tasks, its own SQLite cache) and `khal list today 7d` (khal: its own
  SQLite cache), each a process per call as anyone calls them, first call then median of the next ones;
- the first reading of the tasks side by side with todoman's first `todo list` (each with no cache, as after
  a new install), interleaved over --cold-runs runs (the machine is shared: each pair meets the same load),
  medians, their ratio and the load average. Ours: `list_tasks` in a new process (its imports left out) until
  nothing is pending, the pool of parsing processes included; theirs: `todo --porcelain list`, a new process.
  Beside the times, the CPU time each side spent (ours with its parsing processes', theirs with its start and
  imports): on a shared machine the times follow the load, the CPU time much less.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def environment(home: Path) -> dict[str, str]:
    from gateway.api.context import home_environment

    return {"PATH": os.environ.get("PATH", ""), **home_environment(home), "TZ": "Europe/Paris", "LANG": "C.UTF-8"}


def gateway_of(home: Path):
    import gateway_mail

    from gateway.testing import make_gateway

    config = {"gateway": {"plugins": ["mail"]},
              "plugins": {"mail": {"tasks": str(home / "vdir" / "tasks"), "calendars": str(home / "vdir" / "calendars"),
                                   "timezone": "Europe/Paris"}}}
    projects = [{"id": f"p{n}", "name": f"Project {n}", "ai": n % 4 != 0} for n in range(1, 21)]
    return make_gateway([gateway_mail], home=home, config=config, projects=projects)


CALLS = {"list_tasks now": ("list_tasks", {}), "agenda week": ("agenda", {"days": 7}),
         "reminders week": ("reminders", {"days": 7})}


def timed_call(served, tool: str, arguments: dict) -> float:
    started = time.perf_counter()
    answer = served.call(tool, arguments)
    elapsed = time.perf_counter() - started
    if answer.is_error:
        raise SystemExit(f"{tool} failed: {answer.text}")
    if answer.data.get("pending"):
        raise SystemExit(f"{tool}: {answer.data['pending']} files still pending in a timed call")
    return elapsed


def first_reading(served, tool: str, arguments: dict) -> tuple[float, int]:
    """The first reading ever: calls until nothing is pending (each stops before its deadline), total and calls."""
    started, calls = time.perf_counter(), 0
    while True:
        answer = served.call(tool, arguments)
        calls += 1
        if answer.is_error:
            raise SystemExit(f"{tool} failed: {answer.text}")
        if not answer.data.get("pending"):
            return time.perf_counter() - started, calls


def child(home: Path) -> None:
    """One new process: imports done first (as a server's start does), then each call's first time."""
    os.environ.update(environment(home))
    import gateway_mail.plan.answers  # noqa: F401
    import gateway_mail.plan.events  # noqa: F401
    import gateway_mail.plan.tasks  # noqa: F401

    served = gateway_of(home)
    served.call("now", {})  # the gateway's own first-call costs (config, manifest), not the plan's
    from gateway_mail.plan import vdir

    vdir.forget()
    print(json.dumps({label: timed_call(served, *call) for label, call in CALLS.items()}))


def cpu_seconds(who: int) -> float:
    used = resource.getrusage(who)
    return used.ru_utime + used.ru_stime


def first_child(home: Path) -> None:
    """One new process with no cache: the first reading of the tasks, calls until nothing is pending; its time, and
    its CPU time with its parsing processes' (the fork server stopped and waited for, which has waited for them)."""
    os.environ.update(environment(home))
    import gateway_mail.plan.answers  # noqa: F401
    import gateway_mail.plan.tasks  # noqa: F401

    served = gateway_of(home)
    served.call("now", {})
    before = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN)
    total, calls = first_reading(served, *CALLS["list_tasks now"])
    from multiprocessing import forkserver

    stop = getattr(forkserver._forkserver, "_stop", None)  # the standard library's own tests stop it so
    if stop is not None:
        stop()
    cpu = cpu_seconds(resource.RUSAGE_SELF) + cpu_seconds(resource.RUSAGE_CHILDREN) - before
    print(json.dumps({"seconds": total, "calls": calls, "cpu": cpu if stop is not None else None}))


def cold_pairs(home: Path, todo_config: Path, runs: int) -> None:
    """Our first reading and todoman's first `todo list`, interleaved, each with no cache; medians and ratio."""
    ours, theirs, calls, our_cpu, their_cpu = [], [], [], [], []
    loads = [os.getloadavg()[0]]

    def mine() -> None:
        shutil.rmtree(home / ".cache", ignore_errors=True)
        done = json.loads(subprocess.run([sys.executable, __file__, "--first-child", str(home)], capture_output=True,
                                         text=True, check=True, timeout=1800).stdout)
        ours.append(done["seconds"])
        calls.append(done["calls"])
        if done["cpu"] is not None:
            our_cpu.append(done["cpu"])

    def todoman() -> None:
        (home / "todoman-cache.sqlite3").unlink(missing_ok=True)
        before = cpu_seconds(resource.RUSAGE_CHILDREN)
        theirs.append(run([str(BIN / "todo"), "--config", str(todo_config), "--porcelain", "list"], home))
        their_cpu.append(cpu_seconds(resource.RUSAGE_CHILDREN) - before)

    for number in range(runs):  # each goes first every other run: neither always meets the load's drift first
        for step in ((mine, todoman) if number % 2 == 0 else (todoman, mine)):
            step()
        loads.append(os.getloadavg()[0])
    ours_median, other = statistics.median(ours), statistics.median(theirs)
    print(f"\nfirst reading of the tasks, no cache, {runs} interleaved runs (load average "
          f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores)")
    print(f"  {'list_tasks (gateway)':<28}{ours_median:>8.2f} s median  "
          f"({', '.join(f'{t:.2f}' for t in ours)} s; calls {', '.join(map(str, calls))})")
    print(f"  {'todo --porcelain list':<28}{other:>8.2f} s median  ({', '.join(f'{t:.2f}' for t in theirs)} s)")
    print(f"  ratio gateway / todoman: {ours_median / other:.2f}x (pairwise: "
          f"{', '.join(f'{a / b:.2f}' for a, b in zip(ours, theirs, strict=True))})")
    if our_cpu:  # what the load moves least: the CPU each side spent, its parsing processes' included
        print(f"  CPU time (user + system): gateway {statistics.median(our_cpu):.2f} s median "
              f"({', '.join(f'{t:.2f}' for t in our_cpu)}), todoman {statistics.median(their_cpu):.2f} s "
              f"({', '.join(f'{t:.2f}' for t in their_cpu)}); ratio "
              f"{statistics.median(our_cpu) / statistics.median(their_cpu):.2f}x")


def run(command: list[str], home: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=environment(home), capture_output=True, text=True, timeout=1800)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{command[0]} failed: {done.stderr[-2000:]}")
    return elapsed


def parse_cpu(home: Path, files: int) -> None:
    """CPU time a file of the generated tasks costs a parsing process (what the pool's processes do for each file):
    read by the plain files' scan, and by icalendar's whole reading, in turns, one process."""
    from gateway_mail.plan import vdir

    paths = sorted(str(p) for p in (home / "vdir" / "tasks").glob("*/*.ics"))[:files]
    scan = vdir.simple
    times: dict[str, list[float]] = {"scan": [], "icalendar": []}
    for _ in range(3):
        for label, reader in (("scan", scan), ("icalendar", lambda *_: None)):
            vdir.simple = reader
            started = time.process_time()
            for path in paths:
                vdir._parsed(path, "list")
            times[label].append((time.process_time() - started) / len(paths) * 1000)
    vdir.simple = scan
    every = sorted(str(p) for p in (home / "vdir").glob("*/*/*.ics"))
    taken = differ = 0
    for path in every:  # every file of the bench: the scan's items, where it takes the file, are icalendar's
        raw = Path(path).read_bytes()
        scanned = vdir.simple(raw, "list", path)
        if scanned is not None:
            taken += 1
            differ += scanned != [i for i in (vdir._item(c, "list", path) for c in vdir.calendar_of(path).walk()
                                              if c.name in (vdir.TODO, vdir.EVENT)) if i is not None]
    print(f"\n{len(every):,} files: {taken:,} read by the scan, {differ} of them not as icalendar reads them")
    print(f"CPU a file in a parsing process ({len(paths):,} tasks, median of 3 turns): the scan "
          f"{statistics.median(times['scan']):.3f} ms, icalendar {statistics.median(times['icalendar']):.3f} ms; "
          f"ratio {statistics.median(times['scan']) / statistics.median(times['icalendar']):.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=20_000)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--work", type=Path, default=None, help="keep the generated home here")
    parser.add_argument("--cold-runs", type=int, default=3, help="first readings side by side with todoman's")
    parser.add_argument("--only-first", action="store_true", help="only the first readings beside todoman's")
    parser.add_argument("--parse-cpu", type=int, default=0, metavar="FILES",
                        help="only the CPU a task file costs to parse, scan against icalendar, on so many files")
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--first-child", type=Path, default=None, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        child(arguments.child)
        return
    if arguments.first_child:
        first_child(arguments.first_child)
        return
    work = arguments.work or Path(tempfile.mkdtemp(prefix="bench-plan-"))
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    os.environ.update(environment(home))
    from gateway_mail.plan import sample as sample_plan

    if not (home / "vdir" / "tasks").exists():
        started = time.perf_counter()
        sample_plan.generate(home / "vdir", arguments.tasks, arguments.events)
        print(f"generated {arguments.tasks:,} tasks and {arguments.events:,} events in "
              f"{time.perf_counter() - started:.1f} s ({home / 'vdir'})")
    todo_config, khal_config = home / "todoman.py", home / "khal.conf"
    todo_config.write_text(f'path = "{home / "vdir" / "tasks"}/*"\ndate_format = "%Y-%m-%d"\n'
                           f'time_format = "%H:%M"\ncache_path = "{home / "todoman-cache.sqlite3"}"\n')
    if arguments.parse_cpu:
        parse_cpu(home, arguments.parse_cpu)
        return
    if arguments.only_first:
        cold_pairs(home, todo_config, arguments.cold_runs)
        if arguments.work is None:
            shutil.rmtree(work, ignore_errors=True)
        return
    shutil.rmtree(home / ".cache", ignore_errors=True)
    served = gateway_of(home)
    first = {label: first_reading(served, *call) for label, call in CALLS.items()}
    cold = json.loads(subprocess.run([sys.executable, __file__, "--child", str(home)], capture_output=True,
                                     text=True, check=True, timeout=1800).stdout)
    warm: dict[str, list[float]] = {label: [] for label in CALLS}
    for _ in range(arguments.repeat):
        for label, call in CALLS.items():
            warm[label].append(timed_call(served, *call))

    calendars = "\n".join(f"[[{c.name}]]\npath = {c}\ntype = calendar" for c in
                          sorted((home / "vdir" / "calendars").iterdir()))
    khal_config.write_text(f"[calendars]\n{calendars}\n[locale]\nlocal_timezone = Europe/Paris\n"
                           f"default_timezone = Europe/Paris\n[sqlite]\npath = {home / 'khal.db'}\n")
    theirs = {"list_tasks now": [str(BIN / "todo"), "--config", str(todo_config), "--porcelain", "list"],
              "agenda week": [str(BIN / "khal"), "-c", str(khal_config), "list", "today", "7d"]}
    their_first = {label: run(command, home) for label, command in theirs.items()}
    their_warm = {label: [run(command, home) for _ in range(3)] for label, command in theirs.items()}

    print(f"\n{'view':<16}{'first reading':>15}{'cold':>10}{'warm median':>13}{'warm p95':>10}"
          f"{'theirs first':>14}{'theirs median':>15}")
    for label in CALLS:
        times = sorted(warm[label])
        p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
        theirs_shown = (f"{their_first[label]:>13.2f}s{statistics.median(their_warm[label]):>14.2f}s"
                        if label in their_first else f"{'-':>14}{'-':>15}")
        print(f"{label:<16}{first[label][0]:>9.2f}s ({first[label][1]}){cold[label] * 1000:>8.0f}ms"
              f"{statistics.median(times) * 1000:>11.1f}ms{p95 * 1000:>8.1f}ms{theirs_shown}")
    print(f"\n(theirs: {theirs['list_tasks now'][0].rsplit('/', 1)[1]} and khal, one process per call; "
          f"{arguments.tasks:,} tasks, {arguments.events:,} events; work folder {work})")
    if arguments.cold_runs:
        cold_pairs(home, todo_config, arguments.cold_runs)
    if arguments.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
