"""`gateway mail index` with nothing new, side by side with `notmuch new` on the same Maildir (run by hand).

    .venv/bin/python bench/bench_mail_index.py [--messages 2000] [--folders 8] [--rounds 15] [--work DIR]

Builds a home with one mail account of --messages generated messages spread over --folders Maildir folders
(invented people on example.org), indexes it once with `gateway mail index` and once with `notmuch new` (its own
database in the Maildir's `.notmuch`, as a person's), runs `gateway mail index` once more (nothing new: it keeps
its answer), then times, interleaved, round after round, each a process of its own as a timer or a person runs it:

- `gateway mail index` with nothing new (its answer said again: the kept answer's check),
- the same with the kept answer removed before each run (the whole command: Python, the plugins, the index's
  refresh, which stats each folder), the figure before the check existed,
- `notmuch new` with nothing new.

Prints the median and p95 wall time of each, the median CPU time (user and system of the child), and the ratios
against `notmuch new`. Every run's output is checked: the same line every time (but its time).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gateway.api.context import home_environment  # noqa: E402
from gateway.testing import write_config  # noqa: E402

_SECONDS = re.compile(r"\(\d+\.\d s\)")


def build(root: Path, messages: int, folders: int) -> None:
    names = ["INBOX", *(f".Folder{n}" for n in range(1, folders))]
    for name in names:
        for sub in ("cur", "new", "tmp"):
            (root / ("" if name == "INBOX" else name) / sub).mkdir(parents=True, exist_ok=True)
    for number in range(messages):
        name = names[number % len(names)]
        text = (f"From: Sender {number % 50} <sender{number % 50}@example.org>\nTo: Pat <pat@example.org>\n"
                f"Subject: Message number {number} about the plan\nMessage-ID: <{number}.bench@example.org>\n"
                f"Date: Mon, 02 Mar 2026 10:{number % 60:02d}:00 +0000\n\nHello Pat, this is message {number}.\n")
        folder = root / ("" if name == "INBOX" else name) / "cur"
        (folder / f"{1700000000 + number}.M{number}P1.bench:2,S").write_text(text)


def run(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall time, CPU time of the child (user and system) and its standard output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--folders", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--work", type=Path, default=None, help="a folder to build in (default: a new temporary one)")
    options = parser.parse_args()
    if not shutil.which("notmuch"):
        sys.exit("notmuch is not installed (apt-get install notmuch)")
    work = options.work or Path(tempfile.mkdtemp(prefix="bench-mail-index-"))
    home = work / "home"
    root = home / "Mail" / "bench"
    if not root.is_dir():
        build(root, options.messages, options.folders)
    write_config(home, {"gateway": {"plugins": ["mail"]},
                        "plugins": {"mail": {"accounts": [{"name": "bench", "maildir": str(root)}]}}})
    env = {**{k: os.environ[k] for k in ("PATH", "LANG") if k in os.environ}, **home_environment(home)}
    gateway = [str(Path(sys.executable).parent / "gateway"), "mail", "index"]
    notmuch_config = work / "notmuch-config"
    notmuch_config.write_text(f"[database]\npath={root}\n[new]\ntags=inbox;\n[search]\nexclude_tags=\n"
                              "[maildir]\nsynchronize_flags=false\n")
    notmuch = ["notmuch", f"--config={notmuch_config}", "new", "--quiet"]
    print(f"{options.messages:,} messages in {options.folders} folders under {root}", file=sys.stderr)
    print(run(gateway, env)[2].strip(), file=sys.stderr)
    run(notmuch, env)
    time.sleep(2.5)  # directories changed within their time's granularity are not trusted: let them settle
    first = run(gateway, env)[2]
    kept = home / ".cache" / "gateway" / "replay"

    def without_kept_answer() -> tuple[float, float, str]:
        shutil.rmtree(kept, ignore_errors=True)
        return run(gateway, env)

    ways = {"gateway mail index": lambda: run(gateway, env), "  (no kept answer)": without_kept_answer,
            "notmuch new": lambda: run(notmuch, env)}
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    for number in range(options.rounds):
        order = list(ways.items()) if number % 2 == 0 else list(reversed(ways.items()))
        for name, way in order:
            wall, cpu, output = way()
            if name != "notmuch new" and _SECONDS.sub("", output) != _SECONDS.sub("", first):
                sys.exit(f"{name} printed {output!r}, not {first!r}")
            results[name].append((wall, cpu))
    anchor = statistics.median(w for w, _c in results["notmuch new"])
    print(f"{'':22}{'median ms':>11}{'p95 ms':>9}{'CPU ms':>9}{'/notmuch':>10}")
    for name, timings in results.items():
        median, p95 = summary([w for w, _c in timings])
        cpu = statistics.median(c for _w, c in timings)
        print(f"{name:22}{median * 1000:11.1f}{p95 * 1000:9.1f}{cpu * 1000:9.1f}{median / anchor:10.2f}")
    print(f"\n{options.rounds} rounds, interleaved; wall time of each process; target: gateway mail index with "
          "nothing new <= 50 ms.")
    print(f"output: {first.strip()}")


if __name__ == "__main__":
    main()
