"""The timeline plugin on a heavy synthetic store: query and timeline latencies, and ActivityWatch import speed.

    .venv/bin/python bench/bench_timeline.py [--events 2000000] [--aw-events 1000000] [--calls 25] [--seed 7]
        [--only TEXT ...]   # only the measures whose label holds TEXT ("closed", "24 h", "import")

The store (48 hours of heavy activity, seeded) and the ActivityWatch databases are generated once and cached
under bench/results/ (git-ignored); delete them to regenerate. Tool calls are measured through
`make_gateway(...).call(...)` from gateway.testing (argument checks, gate, masks and audit included), next to
the plugin's own domain function on the same store, so the ratio shows what the gateway adds. Medians over
`--calls` calls, each on a different window of the store (the windows of a measure depend only on the seed and its
label, so `--only` picks the same ones). Three gates: no project; a closed project routed by app and URL; and
`[access] outside_projects = false` with that closed project and an open one routed by apps, URL and paths (the
gate then judges every event without an owner closed too). Targets: query_events (15 min) under 10 ms,
get_timeline under 50 ms for an hour and 300 ms for a day, import above 50,000 events/s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "plugins"))

import gateway_timeline  # noqa: E402
from gateway_timeline import queries  # noqa: E402
from gateway_timeline.envelope import traits  # noqa: E402
from gateway_timeline.gating import Gatekeeper  # noqa: E402
from gateway_timeline.importers.activitywatch import import_database  # noqa: E402
from gateway_timeline.store import SCHEMA_VERSION, Store, row_of  # noqa: E402
from gateway_timeline.timeexpr import iso_ms  # noqa: E402

from gateway import Gate  # noqa: E402
from gateway.gate.access import Manifest  # noqa: E402
from gateway.testing import make_gateway  # noqa: E402

RESULTS = HERE / "results"
HOURS = 48
# The store ends at a fixed instant so a cached store is the same store whatever the day it is read.
END = datetime(2026, 8, 16, 18, 0, tzinfo=UTC)
FOREVER_HOURS = 24 * 365 * 20

APPS = [
    # name, bundle id, weight, kinds of events inside with their weights
    ("Code", "com.microsoft.VSCode", 5, [("input.key", 70), ("ui.click", 8), ("ui.scroll", 10), ("editor.activity", 3)]),
    ("Firefox", "org.mozilla.firefox", 4, [("ui.click", 25), ("ui.scroll", 40), ("input.key", 20), ("browser.navigate", 4)]),
    ("Terminal", "com.apple.Terminal", 3, [("input.key", 85), ("ui.scroll", 10)]),
    ("Slack", "com.tinyspeck.slackmacgap", 2, [("input.key", 60), ("ui.click", 25), ("ui.scroll", 10)]),
    ("Mail", "com.apple.mail", 1, [("ui.click", 40), ("ui.scroll", 40), ("input.key", 15)]),
    ("Preview", "com.apple.Preview", 1, [("ui.scroll", 70), ("ui.click", 20)]),
]
HOSTS = ["github.example.com", "docs.example.org", "wiki.example.net", "news.example.com", "shop.example.org"]


def _titles(rng: random.Random, app: str) -> list[str]:
    words = ["plan", "review", "notes", "draft", "budget", "release", "design", "report", "meeting", "store"]
    return [f"{rng.choice(words)} {rng.randint(1, 400)} — {app}" for _ in range(30)]


def generate_store(path: Path, count: int, seed: int) -> int:
    """48 hours of heavy activity ending at END: app sessions, window changes, pages, files, input; idle breaks."""
    rng = random.Random(seed)
    titles = {app: _titles(rng, app) for app, *_ in APPS}
    files = [f"/home/ada/src/project{rng.randint(1, 9)}/module_{i}.py" for i in range(200)]
    urls = [f"https://{rng.choice(HOSTS)}/page/{i}?ref=bench" for i in range(2000)]
    weights = [a[2] for a in APPS]
    start_ms = int((END - timedelta(hours=HOURS)).timestamp() * 1000)
    end_ms = int(END.timestamp() * 1000)
    mean_gap_ms = (end_ms - start_ms) * 0.90 / count  # about 8% of the time is idle: a little over `count`
    t, made, serial = start_ms, 0, 0
    rows: list[tuple] = []

    def emit(ts: int, kind: str, app=None, bundle=None, title=None, data=None) -> None:
        nonlocal made, serial
        serial += 1
        event = {"v": 1, "id": f"evt_{serial:010d}", "ts": iso_ms(ts), "mono_ns": ts * 1_000_000, "source": "bench",
                 "type": kind, "app": {"name": app, "bundle_id": bundle, "pid": 500} if app else None,
                 "window": {"title": title, "id": 1} if title else None, "element": None, "data": data or {},
                 "redaction": {"applied": False, "rules": []}}
        rows.append(row_of(event, ts, None, traits(event)))
        made += 1

    path.parent.mkdir(parents=True, exist_ok=True)
    with Store.open(path) as store:
        store.begin()
        while t < end_ms or made < count:
            if rng.random() < 0.03:  # an idle break of 5 to 40 minutes
                emit(t, "user.idle")
                t += rng.randint(5, 40) * 60_000
                emit(t, "user.active")
                continue
            app, bundle, _w, kinds = rng.choices(APPS, weights)[0]
            kind_names, kind_weights = [k for k, _ in kinds], [w for _, w in kinds]
            title = rng.choice(titles[app])
            emit(t, "app.focus", app, bundle, title)
            session_end = t + rng.randint(60, 900) * 1000
            while t < session_end:
                t += max(1, int(rng.expovariate(1 / mean_gap_ms)))
                kind = rng.choices(kind_names, kind_weights)[0]
                if rng.random() < 0.01:
                    title = rng.choice(titles[app])
                    emit(t, "window.focus", app, bundle, title)
                elif kind == "browser.navigate":
                    url = rng.choice(urls)
                    title = f"page {url.rsplit('/', 1)[1].split('?')[0]} — {url.split('/')[2]}"
                    emit(t, kind, app, bundle, title, {"url": url, "tab_title": title, "mode": "normal"})
                elif kind == "editor.activity":
                    emit(t, kind, app, bundle, title, {"path": rng.choice(files)})
                else:
                    emit(t, kind, app, bundle, title)
            if len(rows) >= 50_000:
                store.add(rows)
                rows.clear()
        store.add(rows)
        store.commit()
    return made


def generate_activitywatch(path: Path, count: int, seed: int) -> None:
    """An aw-server-rust database of `count` events: window (80%), web (15%) and AFK (5%) buckets."""
    import sqlite3

    sys.path.insert(0, str(HERE.parent / "tests" / "plugins" / "timeline"))
    from timeline_awdb import AFK, WEB, WINDOW, AWDatabase

    rng = random.Random(seed)
    aw = AWDatabase(path, "rust")
    aw.db.execute("BEGIN")
    keys = {name: aw.bucket(name) for name in (WINDOW, WEB, AFK)}
    t = int((END - timedelta(days=60)).timestamp() * 1e9)
    step = int(60 * 86400 * 1e9 / count)
    batch = []
    for index in range(count):
        roll = index % 20
        name = AFK if roll == 0 else WEB if roll <= 3 else WINDOW
        if name == WINDOW:
            app, _b, _w, _k = rng.choice(APPS)
            data = {"app": app, "title": f"document {rng.randint(1, 500)} — {app}"}
        elif name == WEB:
            data = {"url": f"https://{rng.choice(HOSTS)}/p/{rng.randint(1, 5000)}", "title": "a page",
                    "audible": False, "incognito": rng.random() < 0.01}
        else:
            data = {"status": rng.choice(["afk", "not-afk"])}
        duration = rng.randint(1, step // 1_000_000 or 1) * 1_000_000
        batch.append((keys[name], t, t + duration, json.dumps(data)))
        t += step
        if len(batch) >= 100_000:
            aw.db.executemany("INSERT INTO events (bucketrow, starttime, endtime, data) VALUES (?, ?, ?, ?)", batch)
            batch.clear()
    aw.db.executemany("INSERT INTO events (bucketrow, starttime, endtime, data) VALUES (?, ?, ?, ?)", batch)
    aw.db.execute("COMMIT")
    aw.close()
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM events").fetchone()[0] == count


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def interleaved(full, bare, windows) -> tuple[float, float, float, list]:
    """Each window through the gateway then the plugin, alternately, so both see the same machine load.

    Returns the medians of: gateway wall time, gateway CPU time (all threads of this process), plugin
    wall time; and the gateway's answers.
    """
    walls, cpus, bares, answers = [], [], [], []
    for window in windows:
        cpu, began = time.process_time(), time.perf_counter()
        answers.append(full(window))
        walls.append(time.perf_counter() - began)
        cpus.append(time.process_time() - cpu)
        began = time.perf_counter()
        bare(window)
        bares.append(time.perf_counter() - began)
    return median_ms(walls), median_ms(cpus), median_ms(bares), answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=2_000_000, help="events in the synthetic 48-hour store")
    parser.add_argument("--aw-events", type=int, default=1_000_000, help="events in the ActivityWatch database")
    parser.add_argument("--calls", type=int, default=25, help="calls per measurement (the median is reported)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", action="append", default=[], metavar="TEXT",
                        help="only the measures whose label contains TEXT (repeatable; 'import' for the import)")
    options = parser.parse_args()

    RESULTS.mkdir(exist_ok=True)
    store_path = RESULTS / f"timeline-store-v{SCHEMA_VERSION}-{options.events}-{options.seed}.db"
    older = sorted(RESULTS.glob(f"timeline-store-v*-{options.events}-{options.seed}.db"))
    if not store_path.exists() and older:
        # The same events in an older schema: upgraded in place, as a person's store is by their next import.
        began = time.perf_counter()
        with Store.open(older[-1]):
            pass
        for suffix in ("", "-wal", "-shm"):
            if Path(f"{older[-1]}{suffix}").exists():
                Path(f"{older[-1]}{suffix}").rename(f"{store_path}{suffix}")
        print(f"upgraded {older[-1].name} to schema {SCHEMA_VERSION} in {time.perf_counter() - began:.1f} s",
              file=sys.stderr)
    if not store_path.exists():
        began = time.perf_counter()
        partial = store_path.with_suffix(".partial")
        for leftover in RESULTS.glob(partial.name + "*"):
            leftover.unlink()
        made = generate_store(partial, options.events, options.seed)
        partial.rename(store_path)
        print(f"generated {made:,} events in {time.perf_counter() - began:.0f} s -> {store_path}", file=sys.stderr)
    with Store.reader(store_path) as store:
        total = store.count(0, 2**62)
        oldest, newest = store.bounds()
    span_h = (newest - oldest) / 3_600_000

    def wanted(label: str) -> bool:
        return not options.only or any(text in label for text in options.only)

    def windows(label: str, length_ms: int) -> list[tuple[str, str]]:
        rng = random.Random(options.seed * 1_000_003 + zlib.crc32(label.encode()))
        picks = []
        for _ in range(options.calls):
            since = rng.randint(oldest, newest - length_ms)
            picks.append((iso_ms(since), iso_ms(since + length_ms)))
        return picks

    settings = {"store": str(store_path), "probe_activitywatch": False, "retention_hours": FOREVER_HOURS,
                "timezone": "UTC"}
    closed = [{"id": "vault", "name": "Vault", "ai": False, "apps": ["Mail"], "urls": ["shop.example.org"]}]
    # outside_projects = false: only the open project's events are given (Code and Terminal, one site, the
    # files of one source folder), the closed one's and every unrouted one are left out and counted.
    routed = [*closed, {"id": "work", "name": "Work", "ai": True, "apps": ["Code", "Terminal"],
                        "urls": ["github.example.com"], "paths": ["/home/ada/src/project3"]}]
    rows = []
    with tempfile.TemporaryDirectory() as home:
        home = Path(home)
        config = {"gateway": {"plugins": ["timeline"]}, "plugins": {"timeline": settings}}
        gateway = make_gateway([gateway_timeline], config=config, home=home / "open")
        gated = make_gateway([gateway_timeline], config=config, projects=closed, home=home / "gated")
        inside = make_gateway([gateway_timeline], config={**config, "access": {"outside_projects": False}},
                              projects=routed, home=home / "inside")
        gateway.call("get_status")  # warm: imports, first config read

        def direct(kind: str, gate: Gate, fmt: str = "markdown"):
            def run(window):
                since_ms = int(datetime.fromisoformat(window[0]).timestamp() * 1000)
                until_ms = int(datetime.fromisoformat(window[1]).timestamp() * 1000)
                with Store.reader(store_path) as opened:
                    if kind == "query_events":
                        return queries.events(opened, Gatekeeper(gate), since_ms, until_ms, oldest_ms=0)
                    return queries.timeline(opened, Gatekeeper(gate), since_ms, until_ms, oldest_ms=0, zone=UTC,
                                            format=fmt)
            return run

        def through(gw, tool: str, **extra):
            return lambda window: gw.call(tool, {"since": window[0], "until": window[1], **extra})

        open_gate = Gate()
        closed_gate = Gate(Manifest.from_dict({"project": closed}))
        inside_gate = Gate(Manifest.from_dict({"project": routed}), outside_projects=False)
        cases = [
            ("query_events, 15 min", 15, "query_events", {}, open_gate, gateway, "markdown", 10),
            ("query_events, 15 min, a closed project", 15, "query_events", {}, closed_gate, gated, "markdown", 10),
            ("get_timeline, 1 h, markdown", 60, "get_timeline", {}, open_gate, gateway, "markdown", 50),
            ("get_timeline, 1 h, structured", 60, "get_timeline", {"format": "structured"}, open_gate, gateway,
             "structured", 50),
            ("get_timeline, 24 h, markdown", 1440, "get_timeline", {}, open_gate, gateway, "markdown", 300),
            ("get_timeline, 24 h, structured", 1440, "get_timeline", {"format": "structured"}, open_gate, gateway,
             "structured", 300),
            ("get_timeline, 24 h, markdown, a closed project", 1440, "get_timeline", {}, closed_gate, gated,
             "markdown", 300),
            ("query_events, 15 min, outside closed, routes", 15, "query_events", {}, inside_gate, inside,
             "markdown", 10),
            ("get_timeline, 24 h, markdown, outside closed, routes", 1440, "get_timeline", {}, inside_gate, inside,
             "markdown", 300),
        ]
        for label, minutes, tool, extra, gate, gw, fmt, target in cases:
            if not wanted(label):
                continue
            picks = windows(label, minutes * 60_000)
            full, cpu, bare, answers = interleaved(through(gw, tool, **extra), direct(tool, gate, fmt), picks)
            assert not any(a.is_error for a in answers), answers[0].text
            if tool == "query_events":
                detail = f"median {statistics.median(a.data['count'] for a in answers):,.0f} events matched"
            else:
                cut = sum(a.data["truncated"] for a in answers)
                detail = f"median {statistics.median(a.data['token_estimate'] for a in answers):,.0f} tokens, {cut} cut"
            left = statistics.median(a.data.get("left_out", 0) for a in answers)
            detail += f", median {left:,.0f} left out" if left else ""
            rows.append((label, full, cpu, bare, target, detail))

    print(f"\nstore: {total:,} events over {span_h:.1f} h ({store_path.name}); {options.calls} calls per row, "
          f"each on a different window\n")
    print(f"{'measure':52} {'gateway ms':>10} {'(cpu ms)':>9} {'plugin ms':>9} {'ratio':>6} {'target':>7} "
          f"{'of target':>9}  detail")
    for label, full, cpu, bare, target, detail in rows:
        print(f"{label:52} {full:10.2f} {cpu:9.2f} {bare:9.2f} {full / bare:6.2f} {target:7} {full / target:9.0%}  {detail}")
    print("gateway ms: make_gateway(...).call(...) (argument checks, gate, masks, audit), wall-clock median; cpu ms: "
          "the CPU time of those calls (all threads), which other load on the machine does not inflate; plugin ms: "
          "the domain function on the same windows, interleaved; ratio: gateway / plugin")
    print(f"load average during the run: {os.getloadavg()[0]:.2f} (over {os.cpu_count()} CPUs)")
    if wanted("import"):
        import_bench(options)


def import_bench(options: argparse.Namespace) -> None:
    aw_path = RESULTS / f"activitywatch-rust-{options.aw_events}-{options.seed}.db"
    if not aw_path.exists():
        generate_activitywatch(aw_path.with_suffix(".partial"), options.aw_events, options.seed)
        aw_path.with_suffix(".partial").rename(aw_path)
    with tempfile.TemporaryDirectory() as scratch, Store.open(Path(scratch) / "t.db") as target:
        cpu, began = time.process_time(), time.perf_counter()
        report = import_database(aw_path, target, retention_ms=FOREVER_HOURS * 3_600_000)
        seconds, cpu_seconds = time.perf_counter() - began, time.process_time() - cpu
        stored = target.count(0, 2**62)
    read = options.aw_events
    rate = read / seconds

    print(f"\nActivityWatch import (aw-server-rust, {read:,} events, {stored:,} stored, "
          f"{report.private_dropped:,} private dropped): {seconds:.1f} s, {rate:,.0f} events/s "
          f"(target 50,000/s: {rate / 50_000:.2f}x); CPU {cpu_seconds:.1f} s, {read / cpu_seconds:,.0f} events per CPU second")


if __name__ == "__main__":
    main()
