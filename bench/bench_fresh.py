"""Benchmark of the call-time refresh (issue 13), run by hand, never as a timed test.

    .venv/bin/python bench/bench_fresh.py                       # 100 projects x 5 transcripts, one of 1,000 messages
    .venv/bin/python bench/bench_fresh.py --projects 20 --repeat 50   # a quick look

What a call pays for freshness, side by side in one run, taken in turns so that all see the same load:
- nothing changed: a bare stat of each watched path (the floor of a stat-based check); the stale checks of the
  sessions and timeline refreshes together, with the kernel's file notifications (gateway.api.changes) and with the
  stat fallback (notifications off); a rousseau_list_sessions call through the gateway with its refresh against
  the same call with the refresh taken out (a store that is not refreshed);
- one session of 1,000 messages changed (a line appended): the refresh alone, and the call with it.
A home is made in a temporary folder with Claude Code transcripts under ~/.claude/projects and an ActivityWatch
database (the other agents absent, as on most machines: their places watched or stat'ed all the same). "Through the
gateway" is `call_tool` awaited in one event loop: the path a host's call takes, minus the JSON-RPC transport.
Figures are medians and 95th percentiles over --repeat runs, wall time beside the process's CPU time; the load
average is printed with them (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plugins"))
sys.path.insert(0, str(ROOT / "tests" / "plugins" / "timeline"))  # an ActivityWatch database, as the tests make

import gateway_sessions  # noqa: E402
import gateway_timeline  # noqa: E402
from gateway_sessions import refresh as sessions_refresh  # noqa: E402
from gateway_timeline import refresh as timeline_refresh  # noqa: E402

from gateway.api import changes  # noqa: E402
from gateway.api.context import home_environment  # noqa: E402
from gateway.engine.core import Caller  # noqa: E402
from gateway.testing import make_gateway  # noqa: E402

LONG = "bench-long-session"


def line(session: str, n: int, cwd: str) -> str:
    role = "user" if n % 2 else "assistant"
    return json.dumps({
        "type": role, "uuid": f"{session}-{n}", "sessionId": session, "cwd": cwd,
        "timestamp": f"2026-03-02T{9 + n // 3600 % 10:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
        "message": {"role": role, "content": f"message {n} of {session}: the greengage harvest, row {n % 17}",
                    **({"id": f"msg-{session}-{n}"} if role == "assistant" else {})},
    }) + "\n"


def make_home(home: Path, projects: int, per_project: int, messages: int, long_messages: int) -> Path:
    cwd = str(home / "src")
    root = home / ".claude" / "projects"
    for p in range(projects):
        folder = root / f"-home-ada-src-project{p:03d}"
        folder.mkdir(parents=True)
        for s in range(per_project):
            session = f"p{p:03d}-s{s}"
            (folder / f"{session}.jsonl").write_text("".join(line(session, n, cwd) for n in range(1, messages + 1)))
    long_file = root / "-home-ada-src-project000" / f"{LONG}.jsonl"
    long_file.write_text("".join(line(LONG, n, cwd) for n in range(1, long_messages + 1)))
    return long_file


def ms(samples: list[float]) -> str:
    """Median and 95th percentile, in milliseconds."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{statistics.median(ordered) * 1000:8.3f} (p95 {p95 * 1000:7.3f})"


class Timed:
    """Wall and CPU time of a block, appended to samples[name] and samples[name + ' cpu']. CPU is the process's (a
    call's refresh runs on a thread of its own; the process does nothing else meanwhile)."""

    def __init__(self, samples: dict[str, list[float]], name: str) -> None:
        self.samples, self.name = samples, name

    def __enter__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def __exit__(self, *exc_info: object) -> None:
        self.samples.setdefault(self.name, []).append(time.perf_counter() - self.wall)
        self.samples.setdefault(self.name + " cpu", []).append(time.process_time() - self.cpu)


class StatsOnly:
    """File notifications off, as on a system without them: fresh watchers that never trust an event."""

    def __enter__(self) -> None:
        self.saved = changes._hub, dict(sessions_refresh._changes), dict(timeline_refresh._changes)
        changes._hub = changes._Hub()
        changes._hub.unavailable = "bench: stats only"
        sessions_refresh._changes.clear()
        timeline_refresh._changes.clear()

    def __exit__(self, *exc_info: object) -> None:
        changes._hub, sessions, timeline = self.saved
        sessions_refresh._changes.clear()
        sessions_refresh._changes.update(sessions)
        timeline_refresh._changes.clear()
        timeline_refresh._changes.update(timeline)


def activitywatch(home: Path) -> None:
    from timeline_awdb import WINDOW, AWDatabase

    path = home / ".local" / "share" / "activitywatch" / "aw-server-rust" / "sqlite.db"
    path.parent.mkdir(parents=True)
    database = AWDatabase(path, "rust")
    database.add(WINDOW, [(datetime.now(UTC), 60, {"app": "Code", "title": "orchard.py"})])
    database.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--projects", type=int, default=100)
    parser.add_argument("--per-project", type=int, default=5)
    parser.add_argument("--messages", type=int, default=20, help="messages in each ordinary transcript")
    parser.add_argument("--long-messages", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=200)
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        home.mkdir()
        os.environ.update(home_environment(home))
        long_file = make_home(home, options.projects, options.per_project, options.messages, options.long_messages)
        activitywatch(home)
        gateway = make_gateway([("sessions", gateway_sessions), ("timeline", gateway_timeline)], home=home,
                               config={"gateway": {"plugins": ["sessions", "timeline"], "refresh_budget_ms": 60_000},
                                       "plugins": {"timeline": {"probe_activitywatch": False}}})
        snapshot = gateway.snapshot()
        gateway.catalogue(snapshot)
        ctx = gateway.context("sessions", snapshot, Caller())
        timeline_ctx = gateway.context("timeline", snapshot, Caller())
        started = time.perf_counter()
        first = sessions_refresh.refresh(ctx)
        timeline_refresh.refresh(timeline_ctx)
        print(f"first refresh (the whole import): {first.added} sessions in {time.perf_counter() - started:.2f} s")
        watched = sessions_refresh._watched[str(sessions_refresh.store_path(ctx))]
        paths = [p for w in watched.values() for p in [*w.folders, *w.files, *([w.root] if w.missing else [])]]
        for _ in range(3):  # until the notifications are trusted (a folder watched anew: from the next stat pass)
            sessions_refresh.stale(ctx)
            timeline_refresh.stale(timeline_ctx)
        watching = sessions_refresh._changes[str(sessions_refresh.store_path(ctx))][1]
        print(f"watched: {len(paths)} folders and files stat'ed without notifications "
              f"({options.projects} projects x {options.per_project} transcripts + 1, and the other agents' places); "
              f"{watching.watching} folders watched with them ({watching.unavailable or 'inotify'})")

        plugin = gateway.registry.get("sessions")
        refreshes = list(plugin.refreshes)
        arguments = {"limit": 5}
        caller = Caller("bench", "1", "bench")
        appended = [options.long_messages]

        def append_one() -> None:
            appended[0] += 1
            with long_file.open("a") as handle:
                handle.write(line(LONG, appended[0], str(home / "src")))

        def stale_checks() -> bool:
            return sessions_refresh.stale(ctx) or timeline_refresh.stale(timeline_ctx)

        async def call(samples: dict[str, list[float]], name: str, refreshed: bool) -> None:
            plugin.refreshes = refreshes if refreshed else []
            with Timed(samples, name):
                answer = await gateway.call_tool("rousseau_list_sessions", arguments, caller)
            assert not answer.is_error, answer.text
            assert "still being read" not in answer.text

        async def run() -> dict[str, list[float]]:
            samples: dict[str, list[float]] = {}
            for turn in range(options.repeat):
                with Timed(samples, "floor"):
                    for path in paths:  # the plainest loop: a stat of each watched path, nothing else
                        os.path.exists(path)  # a stat (of an agent's place that is not there too)
                with Timed(samples, "stale, notifications"):
                    assert not stale_checks()
                with StatsOnly():
                    stale_checks()  # its watchers made (outside the timing)
                    with Timed(samples, "stale, stats"):
                        assert not stale_checks()
                for refreshed in (turn % 2 == 0, turn % 2 == 1):  # in turns: neither always second
                    await call(samples, "call, refreshed" if refreshed else "call, not refreshed", refreshed)
            for _ in range(max(5, options.repeat // 10)):
                append_one()
                with Timed(samples, "changed: refresh"):
                    result = sessions_refresh.refresh(ctx)
                assert result.changed, "the appended line was imported"
                append_one()
                await call(samples, "changed: call", True)
                await call(samples, "call, not refreshed after", False)
            return samples

        samples = anyio.run(run)
        plugin.refreshes = refreshes
        load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
        print(f"\nmedian (p95) in ms over {options.repeat} runs (changed: {len(samples['changed: refresh'])} runs); "
              f"load average {load} on {os.cpu_count()} cores")
        print(f"{'':44} {'wall':>24} {'CPU (process)':>26}")

        def row(label: str, name: str) -> None:
            print(f"{label:44} {ms(samples[name])}  {ms(samples[name + ' cpu'])}")

        print("nothing changed (sessions and timeline)")
        row("  a bare stat of each watched path (floor)", "floor")
        row("  stale checks, file notifications", "stale, notifications")
        row("  stale checks, stats (no notifications)", "stale, stats")
        row("  call, refreshed", "call, refreshed")
        row("  call, store not refreshed", "call, not refreshed")
        print(f"one session of {options.long_messages:,} messages changed (a line appended)")
        row("  refresh alone", "changed: refresh")
        row("  call, refreshed", "changed: call")
        row("  call, store not refreshed", "call, not refreshed after")


if __name__ == "__main__":
    main()
