"""Benchmark of what recording the tokenizer's version and each message's tokens' identity costs the model file and
delivery, beside the code of another revision, in the same run (run by hand):

    .venv/bin/python bench/bench_spam_version.py                  # against main
    .venv/bin/python bench/bench_spam_version.py --before HEAD~3 --every 50

The stream is bench_spam.py's (the SpamAssassin public corpus: duplicates removed, leaking headers stripped, time
order), trained whole in this process, each message's identity recorded as training records it. The model is then
written three ways: as the other revision writes it (no version, no identities), as this code writes it, and as
this code writes it with version 1 recorded (a stale model). Printed:

- the model file's size each way, and the CPU of writing and of loading it whole (medians of five), with and without
  the identities;
- per process, one message at a time (one message in `--every` of the stream), the order of the kinds rotated from
  one message to the next: `python -I -S deliver.py --here` (judged in the process) of the other revision on its
  file, of this code on its file and on the stale file; and the compiled client (`gateway spam client`) with a
  long-lived classifier of the same code behind it, the same three ways. Medians of wall time and of the process's
  own CPU (user and system; the classifier's is not in it). Every kind's line must be the same for each message.

The other revision's `plugins/spamfilter` is taken with `git archive` into a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plugins"))

from bench_spam import FETCH, stream  # noqa: E402
from gateway_spam.client import build  # noqa: E402
from gateway_spam.kept import identity_of  # noqa: E402
from gateway_spam.model import Model  # noqa: E402
from gateway_spam.tokens import tokens  # noqa: E402
from spamfilter import store  # noqa: E402


def _cpu(function) -> float:  # noqa: ANN001
    started = time.process_time()
    function()
    return (time.process_time() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, help="the corpus folder (default: fetched by the shared script)")
    parser.add_argument("--before", default="main", help="the revision to compare with (default main)")
    parser.add_argument("--every", type=int, default=100, help="classify one message in so many (default 100)")
    parser.add_argument("--rounds", type=int, default=2, help="passes over the picked messages (default 2)")
    arguments = parser.parse_args()
    folder = arguments.corpus or Path(subprocess.run(["bash", str(FETCH)], check=True, capture_output=True,
                                                     text=True).stdout.strip())
    messages = stream(folder, 1)
    model = Model()
    for number, (label, raw, _when) in enumerate(messages):
        found = tokens(raw)
        model.learn(found, label, f"m{number}")
        model.sources[f"m{number}"] = identity_of(found).hex()
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        before_code = work / "code"
        before_code.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", arguments.before, "plugins/spamfilter"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(before_code)], input=archive, check=True)
        files = work / "files"
        files.mkdir()
        for number, (_label, raw, _when) in enumerate(messages[::arguments.every]):
            (files / f"{number:04d}.eml").write_bytes(raw)
        data = {name: work / name for name in ("before", "after", "stale")}
        for path in data.values():
            path.mkdir()
        store.write(data["before"] / store.NAME, model.spam, model.ham, model.counts, model.trained)
        model.save(data["after"] / store.NAME)
        store.write(data["stale"] / store.NAME, model.spam, model.ham, model.counts, model.trained, tokens_version=1,
                    sources={key: (found, True) for key, found in model.sources.items()})
        print(f"{len(messages)} messages, {len(model.counts):,} tokens; load {os.getloadavg()[0]:.1f}")
        print(f"model file: {os.path.getsize(data['before'] / store.NAME):,} bytes as {arguments.before} writes it, "
              f"{os.path.getsize(data['after'] / store.NAME):,} with the version and identities")
        bare, full = work / "bare.sqlite", work / "full.sqlite"
        writes = [(_cpu(lambda: store.write(bare, model.spam, model.ham, model.counts, model.trained)),
                   _cpu(lambda: model.save(full))) for _ in range(5)]
        loads = [(_cpu(lambda: Model.load(bare)), _cpu(lambda: Model.load(full))) for _ in range(5)]
        print(f"write, CPU median: {statistics.median(w[0] for w in writes):.0f} ms without the identities, "
              f"{statistics.median(w[1] for w in writes):.0f} ms with them")
        print(f"load whole, CPU median: {statistics.median(w[0] for w in loads):.0f} ms without, "
              f"{statistics.median(w[1] for w in loads):.0f} ms with")

        python = sys.executable
        scripts = {"before": str(before_code / "plugins" / "spamfilter" / "deliver.py"),
                   "after": str(ROOT / "plugins" / "spamfilter" / "deliver.py")}
        code = {"before": "before", "after": "after", "stale": "after"}
        client = build(data["after"])
        classifiers = {}
        try:
            for name, where in data.items():
                classifiers[name] = subprocess.Popen([python, "-I", "-S", scripts[code[name]], "--data", str(where),
                                                      "--serve"], stderr=subprocess.PIPE, text=True)
                assert "listening on" in classifiers[name].stderr.readline()
            label = {"before": f"{arguments.before}, its file", "after": "this code, its file",
                     "stale": "this code, a stale file"}
            kinds = [(f"deliver.py --here ({label[name]})",
                      [python, "-I", "-S", scripts[code[name]], "--data", str(where), "--here"])
                     for name, where in data.items()]
            kinds += [(f"client + classifier ({label[name]})", [str(client), "--data", str(where)])
                      for name, where in data.items()]
            wall: dict[str, list[float]] = {name: [] for name, _ in kinds}
            cpu: dict[str, list[float]] = {name: [] for name, _ in kinds}
            picked = sorted(files.iterdir()) * arguments.rounds
            differing = 0
            for number, path in enumerate(picked):
                turn = number % len(kinds)
                lines = set()
                for name, command in kinds[turn:] + kinds[:turn]:
                    used = resource.getrusage(resource.RUSAGE_CHILDREN)
                    started = time.perf_counter()
                    done = subprocess.run([*command, str(path)], capture_output=True, check=False)
                    wall[name].append((time.perf_counter() - started) * 1000)
                    now = resource.getrusage(resource.RUSAGE_CHILDREN)
                    cpu[name].append((now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime) * 1000)
                    lines.add(done.stdout)
                differing += len(lines) != 1
        finally:
            for classifier in classifiers.values():
                classifier.terminate()
                classifier.wait(timeout=30)
        print(f"\nclassify one message per process: {len(picked)} judgements of each kind; messages whose line "
              f"differed between kinds: {differing}")
        print(f"  {'':52} wall median    CPU median")
        for name, _command in kinds:
            print(f"  {name:52} {statistics.median(wall[name]):8.2f} ms {statistics.median(cpu[name]):8.2f} ms")
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
