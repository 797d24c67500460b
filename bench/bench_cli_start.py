"""CPU of `gateway` command lines that a person types, from the process's start to its end (run by hand).

    .venv/bin/python bench/bench_cli_start.py                          # this checkout's gateway, 10 runs each
    .venv/bin/python bench/bench_cli_start.py --before /tmp/main/.venv/bin/gateway --runs 10

`--before` names another checkout's `gateway` console script (e.g. a worktree of main with its own `.venv`): both
run each command line in the same rounds, interleaved, so that both meet the same load; the medians and their ratio
are printed side by side, with the machine's load average before and after.

Each side gets a home of its own in a temporary folder (HOME and XDG_* pointed there): a config naming every
built-in plugin, a mail account of `--messages` messages from the SpamAssassin public corpus (ham in INBOX, spam in
Junk; the corpus from ../shared/tools/fetch-spamassassin.sh or --corpus). The command lines:

- `gateway --help`, `gateway doctor`: every plugin is loaded for these (the control);
- `gateway spam --help`, `gateway spam train --help`: a plugin's command, found and shown;
- `gateway spam train` from nothing (the spam plugin's data and cache emptied before each run);
- `gateway mail index` with nothing new, as kept (`gateway.replayable`: the answer said again without loading
  anything) and run in full (the kept answer removed before each run).

CPU is the user and system time of the process and the children it waited for (`getrusage`, as `/usr/bin/time -f
%U+%S` counts it, at a finer grain); wall time is printed beside it. Python's bytecode is written and used as a
person's installation does (PYTHONDONTWRITEBYTECODE is left out of the children's environment).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FETCH = Path(__file__).resolve().parent.parent.parent / "shared" / "tools" / "fetch-spamassassin.sh"
SHARED_FETCH = Path("/work/shared/tools/fetch-spamassassin.sh")
PLUGINS = ["sessions", "cron", "timeline", "mail", "spam", "texts", "ledger", "time", "papers"]
COMMANDS = {
    "gateway --help": ["--help"],
    "gateway doctor": ["doctor"],
    "gateway spam --help": ["spam", "--help"],
    "gateway spam train --help": ["spam", "train", "--help"],
    "gateway spam train (from nothing)": ["spam", "train"],
    "gateway mail index, nothing new (kept answer)": ["mail", "index"],
    "gateway mail index, nothing new (run in full)": ["mail", "index"],
}


def make_home(home: Path, corpus: Path, messages: int) -> None:
    """A config with every built-in plugin on and a Maildir of `messages` messages (half ham, half spam)."""
    import tomli_w

    root = home / "Mail"
    chosen = random.Random(7)
    for folder, subs in (("INBOX", ("easy-ham-1", "hard-ham-1")), ("Junk", ("spam-1", "spam-2"))):
        files = sorted(path for sub in subs for path in (corpus / sub).iterdir())
        chosen.shuffle(files)
        for sub in ("cur", "new", "tmp"):
            (root / folder / sub).mkdir(parents=True, exist_ok=True)
        for number, path in enumerate(files[: messages // 2]):
            (root / folder / "cur" / f"{1_000_000_000 + number}.M{number}P1.bench:2,S").write_bytes(path.read_bytes())
    config = home / ".config" / "gateway" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(tomli_w.dumps({"gateway": {"plugins": PLUGINS},
                                     "plugins": {"mail": {"accounts": [{"name": "bench", "maildir": str(root)}]}}}))


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "GATEWAY_", "PYTHON"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local" / "share"),
               XDG_STATE_HOME=str(home / ".local" / "state"), XDG_CACHE_HOME=str(home / ".cache"))
    return env


def prepare(label: str, home: Path) -> None:
    """What a command line needs before each run: the spam plugin's state gone, or the kept answers."""
    if label.startswith("gateway spam train (from nothing)"):
        for place in (home / ".local" / "share" / "gateway" / "plugins" / "spam",
                      home / ".cache" / "gateway" / "plugins" / "spam"):
            shutil.rmtree(place, ignore_errors=True)
    elif label.endswith("(run in full)"):
        shutil.rmtree(home / ".cache" / "gateway" / "replay", ignore_errors=True)


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one process and the children it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, help="another checkout's `gateway` script, run in the same rounds")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--messages", type=int, default=200, help="messages in the mail account (half spam)")
    parser.add_argument("--corpus", type=Path, help="the corpus folder (default: fetched by the shared script)")
    parser.add_argument("--only", action="append", default=[], help="only the command lines containing this")
    arguments = parser.parse_args()
    corpus = arguments.corpus
    if corpus is None:
        fetch = FETCH if FETCH.exists() else SHARED_FETCH
        corpus = Path(subprocess.run(["bash", str(fetch)], capture_output=True, text=True, check=True).stdout.strip())
    sides = {"this": Path(sys.executable).with_name("gateway")}
    if arguments.before is not None:
        sides = {"before": arguments.before.resolve(), **sides}
    labels = [label for label in COMMANDS if not arguments.only or any(part in label for part in arguments.only)]
    figures: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as folder:
        homes = {side: Path(folder) / side for side in sides}
        for side, home in homes.items():
            make_home(home, corpus, arguments.messages)
            for warm in (["doctor"], ["spam", "train"], ["mail", "index"]):  # schemas kept, index made, bytecode
                timed([str(sides[side]), *warm], environment(home))
        for side, home in homes.items():
            # A kept answer is trusted only for files older than 2 s: run it until it is kept (or give up).
            replay = home / ".cache" / "gateway" / "replay"
            for _attempt in range(20):
                if replay.is_dir() and any(replay.iterdir()):
                    break
                time.sleep(1)
                timed([str(sides[side]), "mail", "index"], environment(home))
            else:
                print(f"({side}: the answer of `gateway mail index` was never kept)", file=sys.stderr)
        load = os.getloadavg()[0]
        kept = [label for label in labels if label.endswith("(kept answer)")]  # first: the others change files
        for phase in (kept, [label for label in labels if label not in kept]):
            for _round in range(arguments.runs):
                for label in phase:
                    for side in sides:
                        prepare(label, homes[side])
                        figures.setdefault((label, side), []).append(
                            timed([str(sides[side]), *COMMANDS[label]], environment(homes[side])))
        load_after = os.getloadavg()[0]
    print(f"{arguments.runs} runs each, interleaved; {arguments.messages} messages; load average (1 min) "
          f"{load:.2f} before, {load_after:.2f} after ({os.cpu_count()} cores)")
    print("median CPU ms (wall ms)" + "".join(f" | {side:>17}" for side in sides) +
          (" | this/before CPU" if len(sides) == 2 else ""))
    for label in labels:
        cells, cpus = [], []
        for side in sides:
            runs = figures[(label, side)]
            cpu = statistics.median(c for c, _w in runs) * 1000
            wall = statistics.median(w for _c, w in runs) * 1000
            cpus.append(cpu)
            cells.append(f"{cpu:7.0f} ({wall:6.0f})")
        ratio = f" | {cpus[1] / cpus[0]:.2f}x" if len(cpus) == 2 and cpus[0] else ""
        print(f"{label:<46}" + "".join(f" | {cell:>17}" for cell in cells) + ratio)


if __name__ == "__main__":
    main()
