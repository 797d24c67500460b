"""Benchmark of the spam filter on the SpamAssassin public corpus, side by side with bogofilter (run by hand).

    .venv/bin/python bench/bench_spam.py                  # the whole corpus (about 5,800 messages once deduplicated)
    .venv/bin/python bench/bench_spam.py --every 3        # a third of it, same order, for a quicker look
    .venv/bin/python bench/bench_spam.py --corpus DIR --no-bogofilter

The corpus comes from ../shared/tools/fetch-spamassassin.sh (or --corpus). One message stream for both filters:
duplicates removed (same body), headers that leak the label stripped (X-Spam-*, the corpus's own, Received...),
in time order (Date, else the file's time). Online, TREC's protocol: each message classified, then trained on
its true label. Ours: the plugin's tokenizer and model in this process. bogofilter (Debian's `bogofilter`, its own
database in a temporary folder, its own cutoffs): `bogofilter -T` to classify, then `-s` or `-n` to train, one
process each, per message, in the same order; its latency therefore includes starting a process, said beside it.

Figures: false positives (% of ham scored spam), false negatives (% of spam scored ham), unsure (% of all),
(1-ROCA)% from the scores, training messages/s, classification latency per message (median and p95).

Then, side by side and interleaved (so both meet the same load):
- training the whole stream at once: ours is the training job's work on these messages (tokenize each once,
  in a pool of processes, evaluate online while training, write the SQLite model); bogofilter's is its bulk
  registration (`bogofilter -s -B FILES`, then `-n -B FILES`), which evaluates nothing. Ours four times a run:
  from nothing (the stream's first 99%); again with nothing changed (the last evaluation and model taken as they
  are); again with the last 1% added as new mail (dated after the rest); again with every message scored (the last evaluation taken out of the facts store, as after a change at the stream's start).
  First over --train-runs interleaved runs (medians, ratio and the load average: the machine may be shared), then
  once more beside the same work in this process. The CPU figures count the training's pool of processes too (this
  process adopts what the command leaves behind, Linux's child subreaper, and waits for it).
- classifying one message per process, as a delivery rule does, with each model trained on the whole stream:
  the lean command judging in its own process (`--here`: the console script, `python -I -S deliver.py`,
  `python -m spamfilter.classify`), the same commands handing the message to the long-lived classifier
  (`gateway-spam-classify --serve`, started here; its own CPU per message is printed beside), `bogofilter -T -I FILE`,
  `gateway spam classify FILE` (fewer of these) and `python -c pass` / `python -I -S -c pass` (the interpreter's
  own start, the floor); wall time (median) and CPU time per process. Every lean verdict is checked against the
  in-process model's (they must be the same line).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plugins"))

from gateway_spam import corpus, evaluation  # noqa: E402
from gateway_spam.model import Model  # noqa: E402
from gateway_spam.tokens import parse, stripped, tokens  # noqa: E402
from spamfilter import store  # noqa: E402
from spamfilter.score import HAM_CUTOFF, SPAM_CUTOFF  # noqa: E402

FETCH = Path("/work/shared/tools/fetch-spamassassin.sh")


def stream(folder: Path, every: int) -> list[tuple[str, bytes, float]]:
    """(label, message without leaking headers, time), deduplicated by body, in time order."""
    found, digests = [], set()
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        label = "spam" if sub.name.startswith("spam") else "ham"
        for path in sorted(sub.iterdir()):
            raw = path.read_bytes()
            digest = corpus.body_digest(raw)
            if digest in digests:
                continue
            digests.add(digest)
            clean = stripped(raw)
            found.append((label, clean, corpus.when_of(parse(clean), path)))
    found.sort(key=lambda item: item[2])
    return found[::every]


def ours(messages: list[tuple[str, bytes, float]], ham_cutoff: float, spam_cutoff: float) -> dict:
    model = Model()
    outcomes, classify_times, train_time = [], [], 0.0
    for number, (label, raw, when) in enumerate(messages):
        start = time.perf_counter()
        found = tokens(raw)
        score = model.score(found)
        classified = time.perf_counter()
        model.learn(found, label)
        trained = time.perf_counter()
        classify_times.append(classified - start)
        # Training a message costs its tokenizing and the counts: both are in the figure.
        train_time += trained - start
        outcomes.append(evaluation.Outcome(evaluation.Sample(str(number), label, when, set()), score.probability,
                                           score.strength))
    return {"outcomes": outcomes, "classify": classify_times, "train_rate": len(messages) / train_time,
            "figures": evaluation.figures(outcomes, ham_cutoff, spam_cutoff)}


def bogofilter(messages: list[tuple[str, bytes, float]], binary: str) -> dict:
    database = Path(tempfile.mkdtemp(prefix="bench-bogofilter-"))
    outcomes, classify_times, train_time = [], [], 0.0
    verdicts = {"S": 0, "H": 0, "U": 0}
    false_positives = false_negatives = 0
    letters: list[tuple[str, str]] = []
    try:
        for number, (label, raw, when) in enumerate(messages):
            start = time.perf_counter()
            run = subprocess.run([binary, "-d", str(database), "-T"], input=raw, capture_output=True)
            classified = time.perf_counter()
            subprocess.run([binary, "-d", str(database), "-s" if label == "spam" else "-n"], input=raw,
                           capture_output=True, check=True)
            trained = time.perf_counter()
            classify_times.append(classified - start)
            train_time += trained - classified
            letter, _, value = run.stdout.decode().strip().partition(" ")
            probability = float(value or 0.5)
            verdicts[letter] = verdicts.get(letter, 0) + 1
            letters.append((label, letter))
            false_positives += label == "ham" and letter == "S"
            false_negatives += label == "spam" and letter == "H"
            outcomes.append(evaluation.Outcome(evaluation.Sample(str(number), label, when, set()), probability,
                                               0.0))
    finally:
        shutil.rmtree(database, ignore_errors=True)
    spam = sum(1 for label, _raw, _when in messages if label == "spam")
    ham = len(messages) - spam
    figures = {"messages": len(messages), "spam": spam, "ham": ham, "false_positives": false_positives,
               "false_negatives": false_negatives, "unsure": verdicts.get("U", 0),
               "fp_percent": round(100.0 * false_positives / ham, 3) if ham else 0.0,
               "fn_percent": round(100.0 * false_negatives / spam, 3) if spam else 0.0,
               "unsure_percent": round(100.0 * verdicts.get("U", 0) / len(messages), 3),
               "one_minus_roca_percent": round(100.0 * (1.0 - evaluation.roc_area(outcomes)), 4)}
    bands = {}
    for part, chosen in (("whole", letters), ("1st half", letters[:len(letters) // 2]),
                         ("2nd half", letters[len(letters) // 2:])):
        ham = sum(label == "ham" for label, _ in chosen)
        spam = len(chosen) - ham
        counts = {"fp": sum(label == "ham" and letter == "S" for label, letter in chosen),
                  "fn": sum(label == "spam" and letter == "H" for label, letter in chosen),
                  "unsure_ham": sum(label == "ham" and letter == "U" for label, letter in chosen),
                  "unsure_spam": sum(label == "spam" and letter == "U" for label, letter in chosen)}
        bands[part] = {**counts, "unsure_ham_percent": round(100.0 * counts["unsure_ham"] / max(1, ham), 3),
                       "unsure_spam_percent": round(100.0 * counts["unsure_spam"] / max(1, spam), 3)}
    return {"outcomes": outcomes, "classify": classify_times, "train_rate": len(messages) / train_time,
            "figures": figures, "bands": bands}


def _one_pass_training(messages: list[tuple[str, bytes, float]], data: Path) -> float:
    """Messages/s of the training job's work on the stream: tokenize once, evaluate online (which trains), save."""
    start = time.perf_counter()
    samples = [evaluation.Sample(str(n), label, when, tokens(raw)) for n, (label, raw, when) in enumerate(messages)]
    model = Model(cutoffs=(HAM_CUTOFF, SPAM_CUTOFF))
    evaluation.online(samples, model=model)
    model.save(data / store.NAME)
    return len(messages) / (time.perf_counter() - start)


def _gateway_train(messages: list[tuple[str, bytes, float]], home: Path, env: dict[str, str],
                   times: list[float] | None = None, reap: bool = False) -> float:
    """Messages/s of `gateway spam train` on a Maildir of the stream (spam in Junk, ham in INBOX), start-up included;
    the Maildir is written on the first call in a home (a later call with more messages adds the ones it lacks, as
    new mail), and a later call trains again (its facts store warm).
    `times`, when given, gets (wall seconds, CPU seconds of the process, and of its pool with `reap`: `_timed`)."""
    import tomli_w

    root = home / "Mail"
    if not root.exists() or len(list((root / "INBOX" / "cur").iterdir())) + len(
            list((root / "Junk" / "cur").iterdir())) < len(messages):
        for number, (label, raw, when) in enumerate(messages):
            if (root / ("Junk" if label == "spam" else "INBOX") / "cur" / f"{int(when)}.M{number}P1.bench:2,S").exists():
                continue
            folder = root / ("Junk" if label == "spam" else "INBOX")
            for sub in ("cur", "new", "tmp"):
                (folder / sub).mkdir(parents=True, exist_ok=True)
            path = folder / "cur" / f"{int(when)}.M{number}P1.bench:2,S"
            path.write_bytes(raw)
            os.utime(path, (when, when))
        config = home / ".config" / "gateway" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(tomli_w.dumps({"gateway": {"plugins": ["mail", "spam"]}, "plugins": {
            "mail": {"accounts": [{"name": "bench", "maildir": str(root)}]}, "spam": {}}}))
    wall, cpu, _done = _timed([str(Path(sys.executable).with_name("gateway")), "spam", "train"], env, check=True,
                              reap=reap)
    if times is not None:
        times.extend((wall, cpu))
    return len(messages) / wall


def _bogofilter_bulk(messages: list[tuple[str, bytes, float]], binary: str, database: Path, files: Path,
                     times: list[float] | None = None) -> float:
    """Messages/s of bogofilter's bulk registration of the stream's files (spam with -s, ham with -n); `times`, when
    given, gets (wall seconds, CPU seconds)."""
    names = {"spam": [], "ham": []}
    for number, (label, raw, _when) in enumerate(messages):
        path = files / f"{number:06d}.eml"
        path.write_bytes(raw)
        names[label].append(str(path))
    wall = cpu = 0.0
    for label, flag in (("spam", "-s"), ("ham", "-n")):
        for chunk in range(0, len(names[label]), 1000):  # within the command line's length
            spent = _timed([binary, "-d", str(database), flag, "-B", *names[label][chunk:chunk + 1000]], None,
                           check=True)
            wall, cpu = wall + spent[0], cpu + spent[1]
    if times is not None:
        times.extend((wall, cpu))
    return len(messages) / wall


def _drop_kept_evaluation(home: Path) -> None:
    """Take the last training's evaluation out of the facts store (its facts kept): the next training scores every
    message again, as after a change to the stream's first message."""
    import sqlite3

    connection = sqlite3.connect(home / ".cache" / "gateway" / "plugins" / "spam" / "facts.sqlite")
    with connection:
        connection.execute("DELETE FROM online")
    connection.close()


def training_pairs(messages: list[tuple[str, bytes, float]], binary: str | None, runs: int) -> None:
    """`gateway spam train` (from nothing; again with nothing changed; again with every message scored, its facts
    kept) and bogofilter's bulk registration of the same stream, interleaved over `runs` runs, each from nothing (a
    new home, a new bogofilter database): medians of messages per second of wall time and per second of CPU time (the
    process and its pool), their ratios and the load average. On a shared machine the CPU figures are the steadier
    ones."""
    kinds = ["gateway spam train, from nothing (first 99%)", "gateway spam train again, nothing changed",
             "gateway spam train again, 1% new mail (dated last)", "gateway spam train again, every message scored",
             "bogofilter bulk (-s/-n -B, no evaluation)"]
    first = messages[:len(messages) - max(1, len(messages) // 100)]
    rates: dict[str, list[tuple[float, float]]] = {kind: [] for kind in kinds}
    loads = [os.getloadavg()[0]]
    reaping = _subreaper(True)
    for _ in range(runs):
        work = Path(tempfile.mkdtemp(prefix="bench-spam-train-"))
        try:
            home = work / "home"
            (home / ".local" / "share" / "gateway" / "plugins" / "spam").mkdir(parents=True)
            env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home),
                   "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_CONFIG_HOME": str(home / ".config"),
                   "XDG_STATE_HOME": str(home / ".local" / "state"), "XDG_CACHE_HOME": str(home / ".cache")}
            for kind in kinds[:4]:
                if kind == kinds[3]:
                    _drop_kept_evaluation(home)
                chosen = first if kind in kinds[:2] else messages
                times: list[float] = []
                _gateway_train(chosen, home, env, times, reap=reaping)
                rates[kind].append((len(chosen) / times[0], len(chosen) / times[1]))
            if binary:
                (work / "files").mkdir()
                (work / "bogofilter").mkdir()
                times = []
                _bogofilter_bulk(messages, binary, work / "bogofilter", work / "files", times)
                rates[kinds[4]].append((len(messages) / times[0], len(messages) / times[1]))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        loads.append(os.getloadavg()[0])
    if reaping:
        _subreaper(False)
    print(f"\ntraining the whole stream, {runs} interleaved runs, messages/s of wall time and of CPU time (load "
          f"average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores)")
    # From nothing, the messages are read by a pool: forked by the command (its children, counted in its rusage), or,
    # in a process running other threads, the forkserver's children, counted only when this process could adopt and
    # wait for them (`_subreaper`).
    counted = set(kinds if reaping else kinds[1:])
    for kind in kinds:
        if rates[kind]:
            walls, cpus = [r[0] for r in rates[kind]], [r[1] for r in rates[kind]]
            cpu = (f"CPU {statistics.median(cpus):6.0f} ({', '.join(f'{r:.0f}' for r in cpus)})" if kind in counted
                   else "CPU not counted (a pool)")
            print(f"  {kind:48} wall {statistics.median(walls):6.0f} ({', '.join(f'{r:.0f}' for r in walls)})  {cpu}")
    if rates[kinds[4]]:
        theirs = rates[kinds[4]]
        for kind in kinds[:4]:
            ours = rates[kind]
            cpu = (f", CPU {statistics.median(r[1] for r in ours) / statistics.median(r[1] for r in theirs):.2f}x"
                   if kind in counted else "")
            print(f"  ratio {kind} / bogofilter bulk: wall "
                  f"{statistics.median(r[0] for r in ours) / statistics.median(r[0] for r in theirs):.2f}x{cpu} "
                  f"(pairwise wall {', '.join(f'{a[0] / b[0]:.2f}' for a, b in zip(ours, theirs, strict=True))})")


def _subreaper(on: bool) -> bool:
    """Make this process the reaper of its descendants' orphans (Linux's PR_SET_CHILD_SUBREAPER), or stop; whether it
    could. A training pool made by the forkserver (in a process running other threads) runs in its children, and the
    forkserver is left behind when the command exits: reparented here, they are waited for, and their CPU lands in
    this process's children's rusage."""
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl(36, int(on), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _reap_orphans(bound: float = 30.0) -> None:
    """Wait for every descendant left behind by the last command (a subreaper's adopted forkserver and pool)."""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.01)


def _timed(command: list[str], env: dict[str, str] | None, check: bool = False,
           reap: bool = False) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall seconds, CPU seconds of the child and its children, the result) of one process; with `reap` (this
    process a subreaper, no other child running), the CPU of what it left behind too (its pool)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=check)
    wall = time.perf_counter() - start
    if reap:
        _reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done


CLIENT = "python -I -S deliver.py (classifier)"
FLOOR = "python -I -S -c pass (the floor)"


def _process_cpu(pid: int) -> float:
    """CPU seconds (user and system) a running process has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def per_process(messages: list[tuple[str, bytes, float]], count: int, gateway_count: int,
                binary: str | None) -> None:
    """Training rates, then classify per process, side by side and interleaved."""
    work = Path(tempfile.mkdtemp(prefix="bench-spam-process-"))
    daemon = None
    try:
        home = work / "home"
        data = home / ".local" / "share" / "gateway" / "plugins" / "spam"
        data.mkdir(parents=True)
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "XDG_DATA_HOME": str(home / ".local" / "share"),
               "XDG_CONFIG_HOME": str(home / ".config"), "XDG_STATE_HOME": str(home / ".local" / "state"),
               "XDG_CACHE_HOME": str(home / ".cache")}
        files = work / "files"
        files.mkdir()
        database = work / "bogofilter"
        database.mkdir()
        ours_rate = _gateway_train(messages, home, env)
        rates = [("gateway spam train (read, evaluate online, train)", ours_rate),
                 ("the same work in process, messages already read", _one_pass_training(messages, data))]
        if binary:
            rates.append(("bogofilter bulk (-s/-n -B, no evaluation)", _bogofilter_bulk(messages, binary, database,
                                                                                         files)))
        print("\ntraining the whole stream at once, messages/s")
        for name, rate in rates:
            print(f"  {name:52} {rate:10.0f}")
        if binary:
            print(f"  ratio gateway spam train / bogofilter bulk: {ours_rate / rates[-1][1]:.2f}x")
        model = Model.load(data / store.NAME)
        picked = [(n, messages[n]) for n in range(0, len(messages), max(1, len(messages) // count))][:count]
        python = sys.executable
        gateway = str(Path(python).with_name("gateway"))
        lean = str(Path(python).with_name("gateway-spam-classify"))
        deliver = str(ROOT / "plugins" / "spamfilter" / "deliver.py")
        kinds = {"gateway-spam-classify --here": lambda path: [lean, "--here", path],
                 "python -I -S deliver.py --here": lambda path: [python, "-I", "-S", deliver, "--here", path],
                 "python -m spamfilter.classify --here": lambda path: [python, "-m", "spamfilter.classify", "--here",
                                                                       path],
                 CLIENT: lambda path: [python, "-I", "-S", deliver, path],
                 "gateway-spam-classify (classifier)": lambda path: [lean, path],
                 "python -c pass (the floor)": lambda path: [python, "-c", "pass"],
                 FLOOR: lambda path: [python, "-I", "-S", "-c", "pass"]}
        if binary:
            kinds["bogofilter -T"] = lambda path: [binary, "-d", str(database), "-T", "-I", path]
        kinds["gateway spam classify"] = lambda path: [gateway, "spam", "classify", path]
        served = {CLIENT, "gateway-spam-classify (classifier)"}  # these two ask the long-lived classifier
        daemon = subprocess.Popen([lean, "--serve"], env=env, stderr=subprocess.PIPE, text=True)
        daemon.stderr.readline()  # "listening on ...": it answers from here on
        daemon_cpu = 0.0
        walls: dict[str, list[float]] = {k: [] for k in kinds}
        cpus: dict[str, list[float]] = {k: [] for k in kinds}
        mismatches = 0
        for order, (number, (_label, raw, _when)) in enumerate(picked):
            path = str(files / f"{number:06d}.eml")
            if not Path(path).exists():
                Path(path).write_bytes(raw)
            expected = model.score(tokens(raw))
            line = f"{expected.verdict(HAM_CUTOFF, SPAM_CUTOFF)} {expected.probability:.6f}"
            for name, command in kinds.items():
                if name == "gateway spam classify" and order >= gateway_count:
                    continue
                before = _process_cpu(daemon.pid) if name in served else 0.0
                wall, cpu, done = _timed(command(path), env)
                if name in served:
                    daemon_cpu += _process_cpu(daemon.pid) - before
                walls[name].append(wall)
                cpus[name].append(cpu)
                if "pass" not in name and name != "bogofilter -T" and done.stdout.strip() != line:
                    mismatches += 1
                    print(f"  MISMATCH {name} {path}: {done.stdout.strip()!r} != {line!r} {done.stderr[-200:]}")
        print(f"\nclassify one message per process ({len(picked)} messages, interleaved; the gateway's command on "
              f"{min(gateway_count, len(picked))}); verdicts equal to the in-process model's: "
              f"{'all' if not mismatches else f'{mismatches} differ'}")
        asked = 2 * len(picked)
        print(f"  {'':40}{'wall median':>14}{'CPU median':>14}")
        for name in kinds:
            print(f"  {name:40}{statistics.median(walls[name]) * 1000:>11.1f} ms"
                  f"{statistics.median(cpus[name]) * 1000:>11.1f} ms")
        print(f"  the long-lived classifier's own CPU per message asked: {daemon_cpu / asked * 1000:.1f} ms (mean of "
              f"{asked})")
        if binary:
            bogo, bogo_cpu = statistics.median(walls["bogofilter -T"]), statistics.median(cpus["bogofilter -T"])
            for name in ("gateway-spam-classify --here", "python -I -S deliver.py --here", CLIENT, FLOOR):
                wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
                print(f"  ratio {name} / bogofilter: wall {wall / bogo:.1f}x, CPU {cpu / max(bogo_cpu, 1e-4):.1f}x")
    finally:
        if daemon is not None:
            daemon.terminate()
            daemon.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


def _band(outcomes: list, ham_cutoff: float, spam_cutoff: float) -> dict:
    """FP, FN and unsure of each class (counts and %) at these cutoffs."""
    ham = [o.probability for o in outcomes if o.sample.label == "ham"]
    spam = [o.probability for o in outcomes if o.sample.label == "spam"]
    counts = {"fp": sum(p > spam_cutoff for p in ham), "fn": sum(p < ham_cutoff for p in spam),
              "unsure_ham": sum(ham_cutoff <= p <= spam_cutoff for p in ham),
              "unsure_spam": sum(ham_cutoff <= p <= spam_cutoff for p in spam)}
    return {**counts, "ham": len(ham), "spam": len(spam),
            "unsure_ham_percent": round(100.0 * counts["unsure_ham"] / max(1, len(ham)), 3),
            "unsure_spam_percent": round(100.0 * counts["unsure_spam"] / max(1, len(spam)), 3)}


# SpamBayes' own cost of a pair of cutoffs (its TestDriver's best_cutoff_*_weight defaults): a false positive
# weighs 10, a false negative 1, an unsure message 0.2.
COST_WEIGHTS = {"fp": 10.0, "fn": 1.0, "unsure": 0.2}
GRID = [round(0.05 * i, 2) for i in range(1, 20)] + [0.97, 0.98, 0.99, 0.995, 0.999]


def cost(band: dict) -> float:
    return (COST_WEIGHTS["fp"] * band["fp"] + COST_WEIGHTS["fn"] * band["fn"]
            + COST_WEIGHTS["unsure"] * (band["unsure_ham"] + band["unsure_spam"]))


def tune(outcomes: list) -> tuple[float, float]:
    """Cutoffs chosen on the first half of the stream alone (in time order): those of the grid where SpamBayes'
    cost is least on that half; ties by the least unsure ham. (The defaults take the ham cutoff of this pair:
    `spamfilter.score` says why the spam cutoff is not taken.)"""
    first = outcomes[: len(outcomes) // 2]
    best = None
    for ham_cutoff in GRID:
        for spam_cutoff in GRID:
            if spam_cutoff < ham_cutoff:
                continue
            band = _band(first, ham_cutoff, spam_cutoff)
            key = (round(cost(band), 6), band["unsure_ham"], (ham_cutoff, spam_cutoff))
            best = key if best is None or key < best else best
    return best[2]


def frontier(ours: list, theirs: list | None) -> None:
    """False negatives and unsure ham of each filter's scores at the same ham cutoffs (spam cutoff 0.99), on each
    half: where the two curves lie, whatever cutoff either filter uses."""
    half = len(ours) // 2
    print("\nthe same ham cutoff on both filters' scores (spam cutoff 0.99): false negatives / unsure ham")
    for part, chosen in (("1st half", slice(0, half)), ("2nd half", slice(half, None))):
        cells = []
        for ham_cutoff in (0.30, 0.35, 0.40, 0.42, 0.44, 0.45, 0.46, 0.48, 0.50):
            a = _band(ours[chosen], ham_cutoff, 0.99)
            cell = f"{ham_cutoff:.2f}: ours {a['fn']}/{a['unsure_ham']}"
            if theirs is not None:
                b = _band(theirs[chosen], ham_cutoff, 0.99)
                cell += f" bogofilter {b['fn']}/{b['unsure_ham']}"
            cells.append(cell)
        print(f"  {part}: " + "; ".join(cells))


def _latency(times: list[float]) -> str:
    ordered = sorted(times)
    return f"{statistics.median(ordered) * 1000:.2f} ms (p95 {ordered[int(len(ordered) * 0.95)] * 1000:.2f} ms)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, help="the corpus folder (default: fetched by the shared script)")
    parser.add_argument("--every", type=int, default=1, help="take one message in so many (same order)")
    parser.add_argument("--ham-cutoff", type=float, default=0.20, help="cutoffs shown beside the defaults and the "
                        "tuned ones (the earlier defaults)")
    parser.add_argument("--spam-cutoff", type=float, default=0.90)
    parser.add_argument("--no-bogofilter", action="store_true")
    parser.add_argument("--no-online", action="store_true", help="skip the online comparison (per-message "
                        "bogofilter processes, minutes)")
    parser.add_argument("--no-process", action="store_true", help="skip training at once and classify per process")
    parser.add_argument("--train-runs", type=int, default=3, help="interleaved runs of training from nothing, "
                        "ours and bogofilter's bulk (0: none)")
    parser.add_argument("--only-training", action="store_true", help="only the interleaved training runs")
    parser.add_argument("--classify", type=int, default=60, help="messages classified one process each")
    parser.add_argument("--gateway-classify", type=int, default=10, help="of which through `gateway spam classify`")
    arguments = parser.parse_args()
    folder = arguments.corpus
    if folder is None:
        folder = Path(subprocess.run(["bash", str(FETCH)], capture_output=True, text=True, check=True).stdout.strip())
    messages = stream(folder, max(1, arguments.every))
    print(f"{len(messages)} messages ({sum(m[0] == 'spam' for m in messages)} spam), deduplicated, in time order; "
          f"{os.cpu_count()} cores", flush=True)
    binary = shutil.which("bogofilter")
    if not binary and not arguments.no_bogofilter:
        print("bogofilter is not installed (apt-get install bogofilter): ours alone", flush=True)
    binary = None if arguments.no_bogofilter else binary
    if arguments.train_runs:
        training_pairs(messages, binary, arguments.train_runs)
    if arguments.only_training:
        return
    if not arguments.no_process:
        per_process(messages, arguments.classify, arguments.gateway_classify, binary)
    if arguments.no_online:
        return
    results = {"ours": ours(messages, HAM_CUTOFF, SPAM_CUTOFF)}
    if binary:
        results["bogofilter"] = bogofilter(messages, binary)
    rows = [("false positives %", "fp_percent"), ("false negatives %", "fn_percent"),
            ("unsure %", "unsure_percent"), ("(1-ROCA) %", "one_minus_roca_percent")]
    names = list(results)
    print(f"\nonline, the whole stream; ours at the default cutoffs ({HAM_CUTOFF} / {SPAM_CUTOFF}), bogofilter at its own")
    print(f"{'':24}" + "".join(f"{name:>30}" for name in names))
    for title, key in rows:
        print(f"{title:24}" + "".join(f"{results[n]['figures'][key]:>30}" for n in names))
    print(f"{'errors (FP / FN / U)':24}" + "".join(
        f"{results[n]['figures']['false_positives']:>12} / {results[n]['figures']['false_negatives']:>4} / "
        f"{results[n]['figures']['unsure']:>6}" for n in names))
    print(f"{'training, messages/s':24}" + "".join(f"{results[n]['train_rate']:>30.0f}" for n in names))
    print(f"{'classify latency':24}" + "".join(f"{_latency(results[n]['classify']):>30}" for n in names))
    if "bogofilter" in results:
        print("bogofilter's times include starting one process per message and per training (its usual use).")
    earlier = (arguments.ham_cutoff, arguments.spam_cutoff)
    chosen = tune(results["ours"]["outcomes"])
    half = len(messages) // 2
    print(f"\nunsure by class; SpamBayes' cost (FP 10, FN 1, unsure 0.2) least on the first half of the stream "
          f"({half} messages, in time order) alone at {chosen[0]} / {chosen[1]}; the defaults are {HAM_CUTOFF} / "
          f"{SPAM_CUTOFF}; figures of the second half ({len(messages) - half}) were not used to choose")
    rows = [(f"ours at {earlier[0]}/{earlier[1]} (earlier)", earlier), ("ours at 0.3/0.8 (before)", (0.30, 0.80)),
            (f"ours at {HAM_CUTOFF}/{SPAM_CUTOFF} (defaults)", (HAM_CUTOFF, SPAM_CUTOFF)),
            (f"ours at {chosen[0]}/{chosen[1]} (least cost)", chosen)]
    rows = [(title, results["ours"]["outcomes"], cutoffs) for title, cutoffs in rows]
    if "bogofilter" in results:
        rows.append(("bogofilter, its own cutoffs", results["bogofilter"]["outcomes"], None))
    for title, outcomes, cutoffs in rows:
        for part, chosen_outcomes in (("whole", outcomes), ("1st half", outcomes[:half]), ("2nd half", outcomes[half:])):
            if cutoffs is None:
                band = results["bogofilter"]["bands"][part]
            else:
                band = _band(chosen_outcomes, *cutoffs)
            roca = round(100.0 * (1.0 - evaluation.roc_area(chosen_outcomes)), 4)
            print(f"  {title:34} {part:9} unsure ham {band['unsure_ham_percent']:6.3f}% ({band['unsure_ham']}), "
                  f"unsure spam {band['unsure_spam_percent']:6.3f}% ({band['unsure_spam']}), FP {band['fp']}, "
                  f"FN {band['fn']}, (1-ROCA) {roca}%")
    frontier(results["ours"]["outcomes"], results["bogofilter"]["outcomes"] if "bogofilter" in results else None)


if __name__ == "__main__":
    main()
