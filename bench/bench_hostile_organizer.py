"""The organizer's files from strangers, measured through a real `gateway serve --http`: for each attack of
tests/adversarial/test_organizer_hostile_served.py (the same files), how long its calls took, the server's peak
memory (VmHWM) beside its idle peak, and the slowest ping a second client got meanwhile (pinging every 50 ms).

    .venv/bin/python bench/bench_hostile_organizer.py

The big files are sparse (a 1 GB and a 4 GB calendar, a 512 MB task list, 64 MB and 512 MB card files) and are
deleted at the end; the 30 MB photo is real. Read the figures beside the machine's load (2 cores shared).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "adversarial"))

import test_organizer_hostile_served as attacks  # noqa: E402
from organizer_attack import Server, attack, settle_idle  # noqa: E402

from gateway.testing import write_config  # noqa: E402

ATTACKS = [
    ("repeats: agenda 30 days, now, list_projects, read_project",
     [("agenda", {"start": "today", "days": 30}), ("now", {}), ("list_projects", {}),
      ("read_project", {"address": "sioul:project/alpha"})]),
    ("1 GB and 4 GB calendars, a 512 MB task list", [("agenda", {"start": "today", "days": 2}),
                                                      ("list_tasks", {"view": "all"})]),
    ("cards: a 30 MB photo, 64 MB on one line, 512 MB", [("search_contacts", {"query": "Photo"}),
                                                         ("search_contacts", {"query": "Huge"})]),
    ("huge dates: find, add_event 0001-9999", [("find", {"query": "Forever"}),
                                               ("add_event", {"title": "F", "start": "0001-01-01",
                                                              "end": "9999-12-31"})]),
]


def main() -> None:
    import argparse

    argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0]).parse_args()
    warnings.simplefilter("ignore")
    work = Path(tempfile.mkdtemp(prefix="bench-hostile-"))
    home = work / "home"
    home.mkdir()
    attacks._calendars(home / "vdir" / "calendars")
    attacks._tasks(home / "vdir" / "tasks")
    attacks._cards(home / "contacts")
    write_config(home, {"gateway": {"plugins": ["mail"]}, "plugins": {"mail": {
        "tasks": str(home / "vdir" / "tasks"), "calendars": str(home / "vdir" / "calendars"),
        "contacts": str(home / "contacts"), "timezone": "UTC"}}},
        projects=[{"id": "alpha", "name": "Alpha", "ai": True}])
    server = Server(home, work / "stderr")
    try:
        settle_idle(server)
        print(f"idle server: VmHWM {server.idle_mb:.0f} MB")
        for name, calls in ATTACKS:
            started = time.monotonic()
            seen = attack(server, calls)
            print(f"{name}: {time.monotonic() - started:.1f} s for {len(calls)} calls; VmHWM {seen.peak_mb:.0f} MB "
                  f"(+{seen.peak_mb - server.idle_mb:.0f}); {len(seen.pings)} pings, slowest "
                  f"{max(seen.pings) * 1000:.0f} ms; errors {[a.is_error for a in seen.answers]}")
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
