"""What the chained audit costs a call: run by hand, `.venv/bin/python bench/bench_audit.py [--help]`.

Writes audit lines of a call's usual size side by side, batches interleaved so that a busy machine slows both
alike: the chained write (lock, read the last line, hash it, append) and the write it replaced (the same log,
the same checks of the file, one os.write of the line on an O_APPEND file, no chain). Prints the median and p95 per line of each, and the difference. Target: the
chain costs under 0.2 ms a call. Then `verify` over the whole log, per thousand lines.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gateway.engine.audit import AuditLog  # noqa: E402

ENTRY = {"client": "claude-code", "client_version": "2.1.0", "transport": "stdio", "plugin": "mail",
         "tool": "search_mail", "arguments": {"query": "budget", "limit": 20}, "outcome": "ok",
         "given": [f"mid:m{n}@example.org" for n in range(20)], "length": 4200, "left_out": 3, "ms": 2.4}


class Unchained(AuditLog):
    """The write as it was before the chain: the same file checks, one append, no lock, no hash."""

    def write(self, entry: dict) -> None:
        record = {"time": "2026-12-01T00:00:00.000Z", **entry}
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str) + "\n").encode()
        fd = self._open(f"{datetime.now(UTC):%Y-%m}")
        os.write(fd, line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=20000, help="lines written by each way (default 20000)")
    parser.add_argument("--batch", type=int, default=200, help="lines per timed batch (default 200)")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        chained, plain = AuditLog(Path(scratch) / "chained"), Unchained(Path(scratch) / "plain").write
        times: dict[str, list[float]] = {"chained": [], "plain": []}
        for _ in range(arguments.lines // arguments.batch):
            for name, write in (("chained", chained.write), ("plain", plain)):
                start = time.perf_counter()
                for _ in range(arguments.batch):
                    write(ENTRY)
                times[name].append((time.perf_counter() - start) / arguments.batch * 1000)
        for name, found in times.items():
            ordered = sorted(found)
            print(f"{name:8} median {statistics.median(found):.4f} ms/line   p95 {ordered[int(len(ordered) * 0.95)]:.4f}")
        cost = statistics.median(times["chained"]) - statistics.median(times["plain"])
        print(f"the chain costs {cost:.4f} ms a call (target < 0.2 ms): {'met' if cost < 0.2 else 'NOT met'}")
        start = time.perf_counter()
        assert chained.verify() == []
        print(f"verify: {(time.perf_counter() - start) / arguments.lines * 1000 * 1000:.3f} ms per 1,000 lines")


if __name__ == "__main__":
    main()
