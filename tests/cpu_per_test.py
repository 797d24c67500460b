"""CPU per test, for finding where the suite's time goes on a machine whose load makes wall times meaningless.

Opt in with `-p tests.cpu_per_test --cpu-per-test DIR`: each test (setup, call and teardown) adds a line to
`DIR/<worker>.jsonl` with its node id, the CPU its own process spent (`self`), the CPU of the child processes it
waited for (`child`: the `gateway serve` subprocesses, commands and tools it started) and its wall time, all in
seconds. `python -m tests.cpu_per_test DIR` sums them per file, the most CPU first. Nothing is asserted: it
measures only.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cpu-per-test", metavar="DIR", default=None,
                     help="write each test's own and children's CPU seconds to DIR/<worker>.jsonl")


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    folder = item.config.getoption("--cpu-per-test")
    if not folder:
        yield
        return
    own, children = _cpu()
    started = time.monotonic()
    yield
    own_after, children_after = _cpu()
    Path(folder).mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with (Path(folder) / f"{worker}-{os.getpid()}.jsonl").open("a") as out:
        out.write(json.dumps({"id": item.nodeid, "self": own_after - own, "child": children_after - children,
                              "wall": time.monotonic() - started}) + "\n")


def summary(folder: Path, files: int = 50) -> str:
    rows = [json.loads(line) for path in sorted(folder.glob("*.jsonl")) for line in path.read_text().splitlines()]
    per_file: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for row in rows:
        totals = per_file[row["id"].split("::")[0]]
        totals[0] += 1
        totals[1] += row["self"]
        totals[2] += row["child"]
    lines = [f"{len(rows)} tests: own {sum(r['self'] for r in rows):.0f} s CPU, "
             f"children {sum(r['child'] for r in rows):.0f} s CPU"]
    for name, (count, own, child) in sorted(per_file.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))[:files]:
        lines.append(f"{own + child:7.1f} s  (own {own:5.1f}, children {child:6.1f})  {int(count):4d} tests  {name}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 50))
