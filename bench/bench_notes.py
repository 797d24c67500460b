"""Benchmark of the mail plugin's contacts and notes (part 2), on generated files (run by hand).

    .venv/bin/python bench/bench_notes.py                          # 5,000 contacts, 10,000 notes
    .venv/bin/python bench/bench_notes.py --contacts 500 --notes 1000 --repeat 10   # a quicker look
    .venv/bin/python bench/bench_notes.py --work /tmp/bench-notes     # files (and index) kept, reused next time

Seeded invented files (sample_notes.many: notes in 100 folders, one address book of vCards). Through the
gateway's own call path (make_gateway: argument checks, gate, masks, audit line), in one run:

- the first call ever (the index built: every file read, masked and indexed), per tool;
- the first call of a new process with the index on disk (cold: what `gateway serve` pays after a start);
- later calls (warm): median and p95 of find for a word, search_notes, search_contacts, and of `links` for a web
  page (the floor: the call path, the config read, the tie store, nothing searched);
- beside them, khard's `khard list WORD` on the same address book (a process per search, its start-up included,
  as for anyone who calls it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The generated text draws 3,000 words by Zipf's law: "plumber" is in nearly every note, "market" in about a
# third, "dolo" in one note of ten, "rupebaba" in one of fifty (the files are the same each run: seeded).
WORDS = ["plumber", "market", "dolo", "rupebaba", "garden quote"]
BASELINE = ("links", {"address": "https://example.org/"})
CALLS = [("find", {"query": "market"}), ("search_notes", {"query": "market"}),
         ("search_contacts", {"query": "piano"})]


def environment(home: Path) -> dict[str, str]:
    from gateway.api.context import home_environment

    return {**os.environ, **home_environment(home)}


def make(home: Path, notes: int, contacts: int) -> dict:
    from gateway_mail.notes import sample as sample_notes

    notes_root, contacts_root = home / "Notes", home / "contacts"
    if notes_root.exists():
        print(f"reusing the files in {home} (--work given again)", flush=True)
    else:
        started = time.perf_counter()
        sample_notes.many(notes_root, contacts_root, notes, contacts)
        print(f"generated {notes} notes and {contacts} contacts in {time.perf_counter() - started:.1f} s", flush=True)
    # A first index of 15,000 files takes longer than a call's default 30 s on a loaded machine; here the first
    # call may take what it needs (a host's call would stop before its deadline and the next one go on).
    return {"gateway": {"plugins": ["mail"], "call_timeout": 900},
            "plugins": {"mail": {"notes": str(notes_root), "contacts": str(contacts_root)}}}


def one_process(home: Path, calls: list[tuple[str, dict]]) -> list[float]:
    """Times of `calls` made in order by a fresh Python process (the gateway built there, as at a start)."""
    script = (
        "import json, sys, time\n"
        "from pathlib import Path\n"
        "import gateway_mail\n"
        "from gateway.testing import make_gateway\n"
        "home = Path(sys.argv[1]); calls = json.loads(sys.argv[2])\n"
        "config = json.loads((home / 'bench-config.json').read_text())\n"
        "served = make_gateway([gateway_mail], home=home, config=config)\n"
        "out = []\n"
        "for name, arguments in calls:\n"
        "    started = time.perf_counter(); answer = served.call(name, arguments)\n"
        "    out.append(time.perf_counter() - started)\n"
        "    assert not answer.is_error, answer.text\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(home), json.dumps(calls)], env=environment(home),
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def khard_times(home: Path, contacts_root: Path, words: list[str], repeat: int) -> list[float]:
    khard = Path(sys.executable).with_name("khard")
    if not khard.exists():
        return []
    config = home / ".config" / "khard"
    config.mkdir(parents=True, exist_ok=True)
    (config / "khard.conf").write_text(f"[addressbooks]\n[[default]]\npath = {contacts_root / 'default'}\n\n"
                                       "[general]\neditor = /bin/true\nmerge_editor = /bin/true\n")
    times = []
    for number in range(repeat):
        started = time.perf_counter()
        subprocess.run([str(khard), "list", "--parsable", words[number % len(words)]], env=environment(home),
                       capture_output=True, check=False, stdin=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return times


def describe(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"median {statistics.median(ordered) * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms  (n={len(ordered)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--contacts", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--khard", type=int, default=5, help="khard runs (each a process)")
    parser.add_argument("--work", type=Path, default=None)
    options = parser.parse_args()
    work = options.work or Path(tempfile.mkdtemp(prefix="bench-notes-"))
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    os.environ.update(environment(home))
    config = make(home, options.notes, options.contacts)
    (home / "bench-config.json").write_text(json.dumps(config))

    first = one_process(home, CALLS)  # an empty cache: each store's index built by its first call
    print("first call ever (index built, unless reused):")
    for (name, _arguments), seconds in zip(CALLS, first, strict=True):
        print(f"  {name:16s} {seconds * 1000:9.1f} ms")
    print("first call of a new process, index on disk (cold), then warm calls:")
    # What any call of the plugin pays (the call path, the config, the tie store), nothing searched: the floor.
    for name, arguments in [BASELINE, *CALLS]:
        times = one_process(home, [(name, arguments)] * (options.repeat + 1))
        print(f"  {name:16s} cold {times[0] * 1000:7.1f} ms   warm {describe(times[1:])}")
    spread = [(n, {**a, "query": w}) for n, a in CALLS for w in WORDS]
    times = one_process(home, spread * max(1, options.repeat // len(WORDS)))
    for name, _arguments in CALLS:
        own = [t for (n, _a), t in zip(spread * max(1, options.repeat // len(WORDS)), times, strict=True)
               if n == name][len(WORDS):]
        print(f"  {name:16s} warm over {len(WORDS)} words: {describe(own)}")
    khard = khard_times(home, home / "contacts", WORDS, options.khard)
    if khard:
        print(f"  khard list WORD  (a process each)   {describe(khard)}")
    print(f"files kept in {work}" if options.work else f"(temporary files in {work}; remove when done)")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
