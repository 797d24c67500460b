"""Benchmark of classifying one message per process, as a delivery rule does: the compiled client of the long-lived
classifier beside `bogofilter -T` and the Python client, on the SpamAssassin public corpus (run by hand).

    .venv/bin/python bench/bench_spam_client.py                   # 60 messages of the whole stream
    .venv/bin/python bench/bench_spam_client.py --messages 200 --every 2

The stream is bench_spam.py's (duplicates removed, leaking headers stripped, time order). Our model is trained on
the whole stream in this process (tokenize, learn, save: no evaluation), bogofilter's by its bulk registration of
the same files (`-s -B`, `-n -B`). Then, for each picked message, one process of each kind in turn (the order
rotated from one message to the next, so that no kind always follows another):

- the compiled client (`gateway spam client` builds it; here into the bench's data folder), the classifier running;
- `python -I -S deliver.py FILE`, the Python client (what `gateway-spam-classify --command` prints), the same
  classifier running;
- `bogofilter -T -I FILE`;
- `python -I -S -c pass`, the interpreter's own start (the floor of any Python client);
- with `--fallback`, also the compiled client and `python -I -S deliver.py --here` on a second data folder holding
  the same model and no classifier: what a delivery costs when the classifier is not running (the client then
  runs the Python command, which judges the message itself).

Per kind: the median wall time and CPU time (user and system) of the process, and the ratios to bogofilter's; for
the two clients, the classifier's own CPU per message beside (read from /proc before and after each, in clock ticks:
a mean over the messages). Every verdict of every client is checked against the in-process model's line (they
must be equal). The load average is printed at the start and the end: on a shared machine the ratios and the CPU
are what to read.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plugins"))

from bench_spam import FETCH, _bogofilter_bulk, _process_cpu, _timed, stream  # noqa: E402
from gateway_spam.client import build  # noqa: E402
from gateway_spam.model import Model  # noqa: E402
from gateway_spam.tokens import tokens  # noqa: E402
from spamfilter import store  # noqa: E402
from spamfilter.score import HAM_CUTOFF, SPAM_CUTOFF  # noqa: E402

from gateway.api.context import home_environment  # noqa: E402

COMPILED = "compiled client (classifier)"
PYTHON = "python -I -S deliver.py (classifier)"
BOGOFILTER = "bogofilter -T"
FLOOR = "python -I -S -c pass (the floor)"
ALONE = "compiled client, no classifier"
HERE = "python -I -S deliver.py --here"


def _load() -> str:
    return " ".join(f"{n:.1f}" for n in os.getloadavg())


def run(messages: list[tuple[str, bytes, float]], count: int, binary: str | None, work: Path,
        fallback: bool = False) -> int:
    """Train both filters, then time each kind on `count` messages, interleaved; the number of verdicts that
    differ from the in-process model's."""
    home = work / "home"
    data = home / ".local" / "share" / "gateway" / "plugins" / "spam"
    data.mkdir(parents=True)
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(home)}
    model = Model(cutoffs=(HAM_CUTOFF, SPAM_CUTOFF))
    for number, (label, raw, _when) in enumerate(messages):
        model.learn(tokens(raw), label, f"bench:{number}")
    model.save(data / store.NAME)
    files = work / "files"
    files.mkdir()
    database = work / "bogofilter"
    database.mkdir()
    if binary:
        _bogofilter_bulk(messages, binary, database, files)
    client = str(build(data))
    python, deliver = sys.executable, str(ROOT / "plugins" / "spamfilter" / "deliver.py")
    kinds = {COMPILED: lambda path: [client, path], PYTHON: lambda path: [python, "-I", "-S", deliver, path]}
    if binary:
        kinds[BOGOFILTER] = lambda path: [binary, "-d", str(database), "-T", "-I", path]
    kinds[FLOOR] = lambda path: [python, "-I", "-S", "-c", "pass"]
    if fallback:
        alone = work / "alone"
        alone.mkdir()
        shutil.copyfile(data / store.NAME, alone / store.NAME)
        kinds[ALONE] = lambda path: [client, "--data", str(alone), path]
        kinds[HERE] = lambda path: [python, "-I", "-S", deliver, "--here", path]
    served = (COMPILED, PYTHON)
    checked = (COMPILED, PYTHON, ALONE, HERE)
    picked = list(range(0, len(messages), max(1, len(messages) // count)))[:count]
    walls: dict[str, list[float]] = {k: [] for k in kinds}
    cpus: dict[str, list[float]] = {k: [] for k in kinds}
    classifier_cpu = {k: 0.0 for k in served}
    mismatches = 0
    daemon = subprocess.Popen([python, "-I", "-S", deliver, "--serve"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        daemon.stderr.readline()  # "listening on ...": it answers from here on
        print(f"load average at the start: {_load()}", flush=True)
        for order, number in enumerate(picked):
            _label, raw, _when = messages[number]
            path = files / f"{number:06d}.eml"
            if not path.exists():
                path.write_bytes(raw)
            expected = model.score(tokens(raw))
            line = f"{expected.verdict(HAM_CUTOFF, SPAM_CUTOFF)} {expected.probability:.6f}"
            names = list(kinds)
            names = names[order % len(names):] + names[:order % len(names)]
            for name in names:
                before = _process_cpu(daemon.pid) if name in served else 0.0
                wall, cpu, done = _timed(kinds[name](str(path)), env)
                if name in served:
                    classifier_cpu[name] += _process_cpu(daemon.pid) - before
                if name in checked and done.stdout.strip() != line:
                    mismatches += 1
                    print(f"  MISMATCH {name} {path}: {done.stdout.strip()!r} != {line!r} {done.stderr[-200:]}")
                walls[name].append(wall)
                cpus[name].append(cpu)
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
    print(f"load average at the end: {_load()}")
    print(f"\nclassify one message per process: {len(picked)} messages of {len(messages)}, each kind in turn on each; "
          f"verdicts equal to the in-process model's: {'all' if not mismatches else f'{mismatches} differ'}")
    print(f"  {'':40}{'wall median':>14}{'CPU median':>14}{'classifier CPU':>17}")
    for name in kinds:
        beside = (f"{classifier_cpu[name] / len(picked) * 1000:>12.1f} ms" if name in served else "")
        print(f"  {name:40}{statistics.median(walls[name]) * 1000:>11.1f} ms"
              f"{statistics.median(cpus[name]) * 1000:>11.1f} ms{beside}")
    if binary:
        wall_0, cpu_0 = statistics.median(walls[BOGOFILTER]), statistics.median(cpus[BOGOFILTER])
        for name in (COMPILED, PYTHON, FLOOR, *((ALONE, HERE) if fallback else ())):
            wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
            print(f"  ratio {name} / bogofilter: wall {wall / wall_0:.2f}x, CPU {cpu / max(cpu_0, 1e-4):.2f}x")
    wall, cpu = statistics.median(walls[COMPILED]), statistics.median(cpus[COMPILED])
    whole = cpu + classifier_cpu[COMPILED] / len(picked)
    print(f"  the compiled client: {cpu * 1000:.1f} ms CPU in its process, {whole * 1000:.1f} ms with the "
          f"classifier's share; {wall * 1000:.1f} ms wall (the target: 10 ms a message)")
    return mismatches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, help="the corpus folder (default: fetched by the shared script)")
    parser.add_argument("--every", type=int, default=1, help="take one message in so many (same order)")
    parser.add_argument("--messages", type=int, default=60, help="messages classified, one process of each kind")
    parser.add_argument("--no-bogofilter", action="store_true")
    parser.add_argument("--fallback", action="store_true", help="also time the compiled client with no classifier "
                        "running, beside the Python command judging in its own process")
    parser.add_argument("--work", type=Path, help="a folder to work in, kept (default: a temporary one, removed)")
    arguments = parser.parse_args()
    folder = arguments.corpus
    if folder is None:
        folder = Path(subprocess.run(["bash", str(FETCH)], capture_output=True, text=True, check=True).stdout.strip())
    messages = stream(folder, max(1, arguments.every))
    binary = None if arguments.no_bogofilter else shutil.which("bogofilter")
    if not binary and not arguments.no_bogofilter:
        print("bogofilter is not installed (apt-get install bogofilter): ours alone", flush=True)
    print(f"{len(messages)} messages ({sum(m[0] == 'spam' for m in messages)} spam), deduplicated, in time order; "
          f"{os.cpu_count()} cores", flush=True)
    work = arguments.work or Path(tempfile.mkdtemp(prefix="bench-spam-client-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        differ = run(messages, max(1, arguments.messages), binary, work, arguments.fallback)
    finally:
        if arguments.work is None:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
