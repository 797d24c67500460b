"""Benchmark of the call-time refresh (issue 13), run by hand, never as a timed test.

    .venv/bin/python bench/bench_fresh.py                       # 100 projects x 5 transcripts, one of 1,000 messages
    .venv/bin/python bench/bench_fresh.py --projects 20 --repeat 50   # a quick look

What a call pays for freshness, side by side in one run, taken in turns so both see the same load:
- nothing changed: the sessions refresh alone (a stat per watched folder and transcript), and a
  rousseau_list_sessions call through the gateway with its refresh against the same call with the refresh
  taken out (a store that is not refreshed);
- one session of 1,000 messages changed (a line appended): the refresh alone, and the call with it.
A home is made in a temporary folder with Claude Code transcripts under ~/.claude/projects (the other agents absent,
as on most machines: a stat of where they would be). "Through the gateway" is `call_tool` awaited in one event loop:
the path a host's call takes, minus the JSON-RPC transport. Every figure is a median over --repeat runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plugins"))

import gateway_sessions  # noqa: E402
from gateway_sessions import refresh as sessions_refresh  # noqa: E402

from gateway.context import home_environment  # noqa: E402
from gateway.core import Caller  # noqa: E402
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


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


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
        gateway = make_gateway([("sessions", gateway_sessions)], home=home,
                               config={"gateway": {"plugins": ["sessions"], "refresh_budget_ms": 60_000}})
        snapshot = gateway.snapshot()
        gateway.catalogue(snapshot)
        ctx = gateway.context("sessions", snapshot, Caller())
        started = time.perf_counter()
        first = sessions_refresh.refresh(ctx)
        print(f"first refresh (the whole import): {first.added} sessions in {time.perf_counter() - started:.2f} s")
        watched = sessions_refresh._watched[str(sessions_refresh.store_path(ctx))]
        stats = sum(len(w.folders) + len(w.files) for w in watched.values())
        print(f"watched: {stats} folders and files ({options.projects} projects x {options.per_project} transcripts + 1)")

        plugin = gateway.registry.get("sessions")
        refreshes = list(plugin.refreshes)
        arguments = {"limit": 5}
        caller = Caller("bench", "1", "bench")
        appended = [options.long_messages]

        def append_one() -> None:
            appended[0] += 1
            with long_file.open("a") as handle:
                handle.write(line(LONG, appended[0], str(home / "src")))

        async def timed_call(refreshed: bool) -> float:
            plugin.refreshes = refreshes if refreshed else []
            begun = time.perf_counter()
            answer = await gateway.call_tool("rousseau_list_sessions", arguments, caller)
            took = time.perf_counter() - begun
            assert not answer.is_error, answer.text
            assert "still being read" not in answer.text
            return took

        async def run() -> dict[str, list[float]]:
            samples: dict[str, list[float]] = {k: [] for k in (
                "refresh_unchanged", "refresh_unchanged_cpu", "floor", "floor_cpu", "call_refreshed", "call_plain",
                "refresh_changed", "refresh_changed_cpu", "call_changed")}
            paths = [p for w in watched.values() for p in [*w.folders, *w.files]]
            for _ in range(options.repeat):
                begun, cpu = time.perf_counter(), time.thread_time()
                for path in paths:  # the plainest loop: a stat of each watched path, nothing else
                    os.stat(path)
                samples["floor_cpu"].append(time.thread_time() - cpu)
                samples["floor"].append(time.perf_counter() - begun)
                begun, cpu = time.perf_counter(), time.thread_time()
                assert not sessions_refresh.refresh(ctx)
                samples["refresh_unchanged_cpu"].append(time.thread_time() - cpu)
                samples["refresh_unchanged"].append(time.perf_counter() - begun)
                samples["call_refreshed"].append(await timed_call(True))
                samples["call_plain"].append(await timed_call(False))
            for _ in range(max(5, options.repeat // 10)):
                append_one()
                begun, cpu = time.perf_counter(), time.thread_time()
                result = sessions_refresh.refresh(ctx)
                samples["refresh_changed_cpu"].append(time.thread_time() - cpu)
                samples["refresh_changed"].append(time.perf_counter() - begun)
                assert result.changed, "the appended line was imported"
                append_one()
                samples["call_changed"].append(await timed_call(True))
            return samples

        samples = anyio.run(run)
        plugin.refreshes = refreshes
        print(f"\nmedians over {options.repeat} runs (changed: {len(samples['refresh_changed'])} runs); load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores: CPU time (this thread's) beside wall time")
        print(f"nothing changed   a bare stat of each path {median_ms(samples['floor']):8.3f} ms "
              f"(cpu {median_ms(samples['floor_cpu']):.3f})")
        print(f"                  refresh alone            {median_ms(samples['refresh_unchanged']):8.3f} ms "
              f"(cpu {median_ms(samples['refresh_unchanged_cpu']):.3f})")
        print(f"                  call, refreshed          {median_ms(samples['call_refreshed']):8.3f} ms")
        print(f"                  call, store not refreshed {median_ms(samples['call_plain']):7.3f} ms")
        extra = median_ms(samples["call_refreshed"]) - median_ms(samples["call_plain"])
        print(f"                  what the refresh adds    {extra:8.3f} ms")
        print(f"one session of {options.long_messages:,} messages changed")
        print(f"                  refresh alone            {median_ms(samples['refresh_changed']):8.3f} ms "
              f"(cpu {median_ms(samples['refresh_changed_cpu']):.3f})")
        print(f"                  call, refreshed          {median_ms(samples['call_changed']):8.3f} ms")


if __name__ == "__main__":
    main()
