"""The cost of deciding belonging from traits: search_mail and list_tasks with a manifest of 50 projects, side by side
with another checkout of the plugin (main before the change), on the same files (run by hand).

    git worktree add --detach /tmp/gate-main 0627131          # the plugin as it was, beside this one
    (cd /tmp/gate-main && bash scripts/setup.sh)              # its own .venv: its core and plugins' API
    .venv/bin/python bench/bench_gate_traits.py --work /tmp/gate-bench --against /tmp/gate-main --together
    .venv/bin/python bench/bench_gate_traits.py --work /tmp/gate-bench --against /tmp/gate-main --together  # reused
    .venv/bin/python bench/bench_gate_traits.py --messages 20000 --tasks 5000 --repeat 10            # a quicker look

A seeded generator writes, once, under --work: a Maildir of --messages invented messages (one account; INBOX,
Archive, Sent and a project's folder; senders from 200 domains; words drawn by Zipf from the notes sample's
vocabulary; a tenth with an attachment, one in twenty with a code the masks hide, a third replies, some naming
their parent in In-Reply-To only) and a tasks vdir of --tasks tasks (the plan sample's generator). The manifest
holds 50 projects, every route kind among them (senders, subjects naming words the mail holds and words it does
not, folders as `account/folder` and bare, paths, accounts, lists), one in four closed. A subject route naming a
word most messages hold costs the first call a question to the gate per such message (about a millisecond each
with fifty projects): `--common` adds one (`plumber`, in most messages) to see it.

Each checkout runs in a process of its own, started with that checkout's own `.venv/bin/python` (`--python`,
`--against-python` to choose another; PYTHONPATH puts its `plugins/` first), so each side runs its own core with
the plugin API it was written for; the child code below speaks to either (it reads `home_environment` from where
each core keeps it). Each has a home of its own under --work (its index, its caches), and calls go through
make_gateway's call path (argument checks, gate, masks, audit line). A warm call's wall time (median, p95, and
each round's median) is given beside the CPU time the process spent on it: on a machine shared with other work
the wall time follows the load, the CPU time much less. Every figure is also written to --work/results/.

- first search_mail: the call that works out the gate's verdicts over the whole index (and indexes on the first
  run, timed apart);
- search_mail for a few words, median and p95 over --repeat calls each;
- first list_tasks (the vdir read; several calls while files are pending; with `--together` both sides begin it
  at once, after both first searches: otherwise the side whose first search ended sooner reads its tasks beside
  the other's search), its wall and CPU time, then list_tasks `all` and `now`, median and p95.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORDS = ["plumber", "invoice", "meeting", "kitchen garden", "nothingsuchword"]
LISTS = 8


def environment(home: Path) -> dict[str, str]:
    try:  # the core grouped by layer
        from gateway.api.context import home_environment
    except ImportError:  # a checkout from before the grouping (the old side of --against)
        from gateway.context import home_environment  # type: ignore[no-redef]

    return {**home_environment(home), "TZ": "Europe/Paris"}


def projects(data: Path) -> list[dict]:
    """Fifty projects, every route kind, one in four closed. Subject routes as people write them: a case's id, a
    name, and four words of the mail's vocabulary in about one message in a hundred each."""
    from gateway_mail.notes.sample import vocabulary

    words, _weights = vocabulary(random.Random(7))
    found = []
    middling = [words[1800], words[2200], words[2600], words[2900]]
    for n in range(50):
        project: dict = {"id": f"p{n}", "name": f"Project {n}", "ai": n % 4 != 0}
        kind = n % 6
        if kind == 0:
            project["senders"] = [f"@d{n}.example.net", f"someone{n}@example.org"]
        elif kind == 1:
            project["subjects"] = [middling[n // 6 % 4] if n < 24 else f"ACME-{2000 + n}"]
        elif kind == 2:
            project["folders"] = ["bench/Project"] if n == 2 else [f"Folder{n}"]
        elif kind == 3:
            project["paths"] = [str(data / "elsewhere" / f"p{n}")]
        elif kind == 4:
            project["lists"] = [f"list{n % LISTS}"] if n < 10 else [f"nolist{n}"]
        else:
            project["accounts"] = [f"other{n}"]
            project["subjects"] = [f"Smith v. Jones {n}"]
        found.append(project)
    return found


def build_mail(root: Path, count: int, seed: int = 7) -> None:
    from gateway_mail.notes.sample import vocabulary

    rng = random.Random(seed)
    words, weights = vocabulary(rng)
    folders = [("INBOX", 0.7), ("Archive", 0.18), ("Sent", 0.07), ("Project", 0.05)]
    for name, _share in folders:
        for sub in ("cur", "new", "tmp"):
            (root / ("" if name == "INBOX" else f".{name}") / sub).mkdir(parents=True, exist_ok=True)
    senders = [f"person{i}@d{i % 200}.example.{('com', 'org', 'net')[i % 3]}" for i in range(3000)]
    start = 1_700_000_000
    chains: dict[int, list[int]] = {}  # each reply's References: its parent's, then its parent (at most 10)
    for number in range(count):
        folder = rng.choices([f for f, _ in folders], [s for _, s in folders])[0]
        sender = "pat@example.org" if folder == "Sent" else rng.choice(senders)
        to = rng.choice(senders) if folder == "Sent" else "pat@example.org"
        subject = " ".join(rng.choices(words, weights, k=rng.randint(3, 7)))
        body = " ".join(rng.choices(words, weights, k=rng.randint(50, 300)))
        headers = [f"From: {sender}", f"To: {to}", f"Subject: {subject}", f"Message-ID: <{number}@bench.example.org>",
                   f"Date: {time.strftime('%a, %d %b %Y %H:%M:%S +0000', time.gmtime(start + number * 60))}",
                   "Authentication-Results: mx.example.org; dmarc=pass header.from=" + sender.split("@")[1]]
        if number > 10 and rng.random() < 0.33:
            parent = rng.randrange(max(0, number - 2000), number)  # a recent message
            headers.append(f"In-Reply-To: <{parent}@bench.example.org>")
            chains[number] = [*chains.get(parent, []), parent][-10:]
            if rng.random() < 0.7:  # some clients (phones, Outlook) write In-Reply-To only
                headers.append("References: " + " ".join(f"<{r}@bench.example.org>" for r in chains[number]))
        if rng.random() < 0.05:
            body += "\nYour verification code is 482913."
        text = "\r\n".join([*headers, "MIME-Version: 1.0"])
        if rng.random() < 0.1:
            name = f"{rng.choice(words)}-{number}.pdf"
            text += ('\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n'
                     f'{body}\r\n--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; '
                     f'filename="{name}"\r\n\r\n%PDF-1.4\r\n--b--\r\n')
        else:
            text += f"\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
        place = root / ("" if folder == "INBOX" else f".{folder}") / "cur"
        (place / f"{start + number}.M{number}P1.bench:2,S").write_bytes(text.encode())


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {"median": statistics.median(ordered) * 1000, "p95": ordered[int(0.95 * (len(ordered) - 1))] * 1000}


def child(data: Path, home: Path, repeat: int) -> None:
    """One checkout's figures, printed as JSON (run with that checkout's plugins first on the path)."""
    os.environ.update(environment(home))
    import gateway_mail
    from gateway_mail.mail import index
    from gateway_mail.mail.accounts import Account

    from gateway.testing import folders_of, make_gateway

    maildir = data / "Mail" / "bench"
    cache = folders_of(home).for_plugin("mail").cache
    cache.mkdir(parents=True, exist_ok=True)
    account = Account("bench", maildir, ("pat@example.org",), "mx.example.org")
    connection = index.connect(index.index_path(cache))
    started = time.perf_counter()
    counts = index.refresh(connection, [account], workers=os.cpu_count() or 1)
    indexed = time.perf_counter() - started
    connection.close()
    config = {"gateway": {"plugins": ["mail"]}, "plugins": {"mail": {
        "accounts": [{"name": "bench", "maildir": str(maildir), "addresses": ["pat@example.org"],
                      "authserv_id": "mx.example.org"}],
        "tasks": str(data / "vdir" / "tasks"), "calendars": str(data / "vdir" / "calendars"),
        "timezone": "Europe/Paris"}}}
    manifest = projects(data)
    if os.environ.get("BENCH_GATE_COMMON") == "1":
        manifest.append({"id": "common", "ai": False, "subjects": ["plumber"]})
    served = make_gateway([gateway_mail], home=home, config=config, projects=manifest)
    figures: dict = {"plugin": gateway_mail.__file__, "indexed_s": indexed, "read": counts["read"]}

    def timed(tool: str, arguments: dict) -> tuple[float, float, object]:
        """The call's wall time and the CPU time the process spent on it (every thread: the event loop's and the
        worker's). On a machine shared with other work the wall time moves with the load; the CPU time much less."""
        begun, spent = time.perf_counter(), time.process_time()
        answer = served.call(tool, arguments)
        if answer.is_error:
            raise SystemExit(f"{tool} failed: {answer.text}")
        return time.perf_counter() - begun, time.process_time() - spent, answer

    # The first call works out the gate's verdicts over the whole index; past the call's deadline it is refused,
    # and the work, done meanwhile in its thread, serves the next call: timed until a call answers.
    begun, calls = time.perf_counter(), 0
    while calls < 20:
        calls += 1
        if not served.call("search_mail", {"query": "plumber"}).is_error:
            break
    figures["first search_mail ms"] = (time.perf_counter() - begun) * 1000
    figures["first search_mail calls"] = calls
    _meet(home, "mail")
    for words in WORDS:
        times, cpu, answer = [], [], None
        for _ in range(repeat):
            took, spent, answer = timed("search_mail", {"query": words})
            times.append(took)
            cpu.append(spent)
        figures[f"search_mail {words!r}"] = {"times": times, "cpu": cpu, "hits": len(answer.data["hits"]),
                                             "left_out": answer.data["left_out"]}
    _meet(home, "tasks-first")  # each side's first reading of the tasks beside the other's, not its first search
    begun, calls, spent = time.perf_counter(), 0, time.process_time()
    while True:
        calls += 1
        _took, _spent, answer = timed("list_tasks", {"view": "all"})
        if not answer.data.get("pending"):
            break
    figures["first list_tasks ms"] = (time.perf_counter() - begun) * 1000
    figures["first list_tasks CPU ms"] = (time.process_time() - spent) * 1000
    figures["first list_tasks calls"] = calls
    _meet(home, "tasks")
    for view in ("all", "now"):
        times, cpu = [], []
        for _ in range(repeat):
            took, spent, answer = timed("list_tasks", {"view": view})
            times.append(took)
            cpu.append(spent)
        figures[f"list_tasks {view}"] = {"times": times, "cpu": cpu, "left_out": answer.data.get("left_out")}
    print(json.dumps(figures))


def _meet(home: Path, stage: str) -> None:
    """Wait for the other checkout's process to reach the same stage (`--together`): timed calls then run side by
    side, each under the same load, rather than one after the other while the machine's load moves."""
    meeting = os.environ.get("BENCH_GATE_MEET")
    if not meeting:
        return
    (Path(meeting) / f"{home.name}-{stage}").touch()
    deadline = time.time() + 3600
    while len(list(Path(meeting).glob(f"*-{stage}"))) < int(os.environ["BENCH_GATE_PEERS"]) and time.time() < deadline:
        time.sleep(0.2)


def python_of(tree: Path, given: Path | None) -> Path:
    """The Python a checkout's child runs with: the one given, else the checkout's own `.venv/bin/python` (its core
    and its plugins' libraries, whatever API they speak), else this process's."""
    if given is not None:
        return given
    own = tree / ".venv" / "bin" / "python"
    return own if own.exists() else Path(sys.executable)


def run_child(tree: Path, python: Path, data: Path, home: Path, repeat: int, common: bool,
              meeting: Path | None = None, peers: int = 1) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": f"{tree / 'plugins'}:{tree}", "BENCH_GATE_COMMON": "1" if common else "0"}
    if meeting is not None:
        env.update(BENCH_GATE_MEET=str(meeting), BENCH_GATE_PEERS=str(peers))
    return subprocess.Popen([str(python), __file__, "--child", str(data), "--home", str(home), "--repeat",
                             str(repeat)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(tree: Path, process: subprocess.Popen) -> dict:
    out, err = process.communicate(timeout=7200)
    if process.returncode != 0:
        raise SystemExit(f"{tree}: {err[-3000:]}")
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--tasks", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--work", type=Path, default=None, help="where the data and homes are kept (reused)")
    parser.add_argument("--against", type=Path, default=None, help="another checkout to compare with")
    parser.add_argument("--common", action="store_true", help="add a closed subject route most messages hold")
    parser.add_argument("--rounds", type=int, default=2, help="processes per checkout, taken in turn")
    parser.add_argument("--together", action="store_true",
                        help="run the checkouts at once, their timed calls side by side (a loaded machine)")
    parser.add_argument("--python", type=Path, default=None,
                        help="the Python this checkout's child runs with (default: its .venv/bin/python)")
    parser.add_argument("--against-python", type=Path, default=None,
                        help="the Python the other checkout's child runs with (default: its .venv/bin/python)")
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--home", type=Path, default=None, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(options.child, options.home, options.repeat)
        return
    work = options.work or Path(tempfile.mkdtemp(prefix="bench-gate-"))
    data = work / "data"
    marker = data / f".made-{options.messages}-{options.tasks}"
    if not marker.exists():
        from gateway_mail.plan import sample as sample_plan

        began = time.perf_counter()
        build_mail(data / "Mail" / "bench", options.messages)
        sample_plan.generate(data / "vdir", options.tasks, 0, lists=LISTS)
        marker.touch()
        print(f"made {options.messages:,} messages and {options.tasks:,} tasks in {time.perf_counter() - began:.0f} s")
    trees = [("this", ROOT, python_of(ROOT, options.python))]
    if options.against:
        against = options.against.resolve()
        trees.append(("against", against, python_of(against, options.against_python)))
    runs: dict[str, list[dict]] = {label: [] for label, _tree, _python in trees}
    loads = [os.getloadavg()[0]]  # the machine's load (1 minute) before each round and after the last
    for number in range(options.rounds):
        if number:
            loads.append(os.getloadavg()[0])
        if options.together:  # both at once, their timed calls side by side
            import shutil

            meeting = work / f"meeting-{number}"
            shutil.rmtree(meeting, ignore_errors=True)
            meeting.mkdir()
            started = [(label, tree, run_child(tree, python, data, work / f"home-{label}", options.repeat,
                                               options.common, meeting, len(trees))) for label, tree, python in trees]
            for label, tree, process in started:
                runs[label].append(finished(tree, process))
            continue
        for label, tree, python in trees:  # the checkouts in turn, so that both see the machine's load alike
            runs[label].append(finished(tree, run_child(tree, python, data, work / f"home-{label}", options.repeat,
                                                        options.common)))
    loads.append(os.getloadavg()[0])
    print(f"load average (1 min) before each round and after: {', '.join(f'{v:.1f}' for v in loads)}; "
          f"{os.cpu_count()} cores; {options.rounds} rounds of {options.repeat} calls each"
          + ("; the checkouts side by side" if options.together else "; the checkouts in turn"))
    for label, _tree, python in trees:
        print(f"{label} ran with {python}")
    for label, figures in runs.items():
        print(f"{label}: {figures[0]['plugin']} (indexed {figures[0]['read']:,} in {figures[0]['indexed_s']:.0f} s)")
    (work / "results").mkdir(exist_ok=True)
    saved = work / "results" / time.strftime("%Y%m%dT%H%M%SZ.json", time.gmtime())
    saved.write_text(json.dumps({"loads": loads, "options": {k: str(v) for k, v in vars(options).items()},
                                 "runs": runs}))
    print(f"every figure: {saved}")
    keys = [k for k in runs["this"][0] if k not in ("plugin", "indexed_s", "read")]
    for key in keys:
        row, medians, spent = [f"{key:34}"], {}, {}
        for label, figures in runs.items():
            values = [f[key] for f in figures]
            if isinstance(values[0], dict):
                times = [t for v in values for t in v["times"]]
                shown = summary(times)
                medians[label] = shown["median"]
                rounds = "/".join(f"{summary(v['times'])['median']:.1f}" for v in values)
                cpu = [t for v in values for t in v.get("cpu", ())]
                if cpu:
                    spent[label] = summary(cpu)["median"]
                row.append(f"{label}: median {shown['median']:.1f} ms (rounds {rounds}), p95 {shown['p95']:.1f} ms"
                           + (f", CPU median {spent[label]:.1f} ms" if cpu else "")
                           + f" (left out {values[0]['left_out']})")
            else:
                row.append(f"{label}: " + ", ".join(f"{v:.0f}" for v in values))
        if len(medians) == 2:
            row.append(f"ratio of medians {medians['this'] / medians['against']:.2f}"
                       + (f", of CPU medians {spent['this'] / spent['against']:.2f}" if len(spent) == 2 else ""))
        print(" | ".join(row))


if __name__ == "__main__":
    sys.exit(main())
