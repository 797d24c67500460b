"""The AI shield's cost (run by hand): judging N messages with the model of the person's labels, per message, and
what a warm call pays with the shield on against off.

    .venv/bin/python bench/bench_shield.py                 # 10,000 messages to the shielded address
    .venv/bin/python bench/bench_shield.py --messages 2000 --repeat 20

A temporary home: one account whose INBOX holds N messages to the shielded address (seeded, words drawn from a
hostile and a kind vocabulary), indexed first. Then, side by side in one run:
- the floor: the spam filter's tokens of each message (read and tokenized, what any model-based judge pays);
- the shield's pass as a call runs it: the headers of every message looked at (To, Cc, Delivered-To,
  X-Original-To), then each message judged by the label model (40 labels), per message;
- search_mail warm (the same query again), median and p95 of `--repeat` calls, shield off and shield on (everything
  judged): what the shield adds to a call once its work is done;
- search_mail right after one new message to the shielded address (indexed, looked at, judged by the labels'
  model, what is kept worked out again), shield off and on;
- the labels' model counted again from the labels (as after a change of the spam filter's tokenizer: each labelled
  message found through the index, read, tokenized, the model written whole), per label, and the model file's size.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]

import gateway_mail  # noqa: E402
from gateway_mail.mail import index, judge, sample, shield  # noqa: E402
from gateway_mail.mail.store import accounts  # noqa: E402
from spamfilter import store  # noqa: E402
from spamfilter.tokens import stripped, tokens  # noqa: E402

from gateway.api.context import home_environment  # noqa: E402
from gateway.testing import folders_of, make_gateway  # noqa: E402

PRESS = "press@example.org"
HOSTILE = ("regret", "vile", "scum", "know", "where", "live", "shame", "liar", "coward", "rot", "burn", "punish",
           "hate", "disgusting", "pathetic", "threat", "warn", "sorry", "worthless")
KIND = ("thank", "interview", "lovely", "article", "orchard", "garden", "kind", "wonderful", "question", "readers",
        "enjoyed", "thoughtful", "invite", "festival", "choir", "harvest", "photo")
COMMON = ("the", "a", "your", "about", "today", "week", "story", "page", "paper", "news", "town", "people")


def write(root: Path, count: int, seed: int = 11) -> list[tuple[str, bool]]:
    rng = random.Random(seed)
    inbox = sample.make_folder(root / "INBOX")
    made = []
    now = time.time()
    for number in range(count):
        hostile = rng.random() < 0.3
        words = [rng.choice(HOSTILE if hostile and rng.random() < 0.5 else KIND if not hostile and rng.random() < 0.5
                            else COMMON) for _ in range(60)]
        sender = f"w{number}@{'troll' if hostile else 'reader'}{number % 50}.example.net"
        mid = f"p{number}@example.net"
        sample.deliver(inbox, sample.message(message_id=mid, sender=sender, to=PRESS, subject=" ".join(words[:5]),
                                             body=" ".join(words), date=now - number * 60))
        made.append((mid, hostile))
    return made


def per_message(seconds: float, count: int) -> str:
    return f"{seconds * 1000 / max(count, 1):.3f} ms"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--labels", type=int, default=40, help="messages the person labelled")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        home.mkdir()
        os.environ.update(home_environment(home))
        root = home / "Mail" / "personal"
        made = write(root, arguments.messages)
        config = sample.config(root)
        config["gateway"]["call_timeout"] = 3600
        off = make_gateway([gateway_mail], home=home, config=config, projects=[])
        started = time.perf_counter()
        off.call("search_mail", {"query": "orchard"})
        print(f"index of {arguments.messages:,} messages (first call): {time.perf_counter() - started:.1f} s")
        mail_folders = folders_of(home)
        data = mail_folders.data / "plugins" / "mail"
        paths = sorted((root / "INBOX" / "cur").iterdir())
        wanted = {f"<{mid}>".encode(): (mid, hostile) for mid, hostile in made[:arguments.labels]}
        for path in paths:  # the labels of the person's, as the CLI gives them
            raw = path.read_bytes()
            head = raw[:4000]
            for marker, (mid, hostile) in wanted.items():
                if b"Message-ID: " + marker in head:
                    judge.learn(data, mid, shield.HOSTILE if hostile else shield.OK, lambda _mid, raw=raw: [raw])

        started = time.perf_counter()
        for path in paths:
            tokens(stripped(path.read_bytes()))
        floor = time.perf_counter() - started

        connection = index.connect(index.index_path(mail_folders.cache / "plugins" / "mail"))
        settings = {**config["plugins"]["mail"], "shielded": [PRESS]}
        shielding = shield.shield_of(settings, data)
        found = accounts(settings, mail_folders.config / "plugins" / "mail")
        started = time.perf_counter()
        shield._addressed_for(connection, shielding)
        shield._look(connection, found, shielding, math.inf)
        looked = time.perf_counter() - started
        started = time.perf_counter()
        shield.update(connection, found, shielding, until=math.inf, commands=False)
        judged = time.perf_counter() - started
        counts = shield.counts(connection)
        model = judge.model_path(data)
        table = store.Table(model)
        everything, sources = table.everything(), table.sources()
        bare = Path(folder) / "bare.sqlite"  # the same model without the labels' sources, for their share of the file
        store.write(bare, table.spam, table.ham, *everything)
        store.write(model, table.spam, table.ham, *everything, tokens_version=0, sources=sources)  # forged: stale
        table.close()
        started = time.perf_counter()
        learnt = judge.relearn(data, shield.copies_of(connection, found))
        relearnt = time.perf_counter() - started
        connection.close()
        print(f"floor: the spam filter's tokens, read and made: {per_message(floor, len(paths))} a message")
        print(f"shield: headers looked at: {per_message(looked, len(paths))} a message; judged by the label model: "
              f"{per_message(judged, len(paths))} a message ({judged / floor:.2f}x the floor); {counts}")
        print(f"the labels' model counted again from {learnt.recounted} labels: {relearnt * 1000:.0f} ms, "
              f"{per_message(relearnt, learnt.recounted)} a label; the model file {model.stat().st_size / 1024:.0f} "
              f"KiB, {bare.stat().st_size / 1024:.0f} KiB without the labels' sources")

        def warm(served) -> list[float]:
            served.call("search_mail", {"query": "orchard"})
            times = []
            for _ in range(arguments.repeat):
                started = time.perf_counter()
                served.call("search_mail", {"query": "orchard"})
                times.append(time.perf_counter() - started)
            return times

        config["plugins"]["mail"]["shielded"] = [PRESS]
        on = make_gateway([gateway_mail], home=home, config=config, projects=[])
        off = make_gateway([gateway_mail], home=home, config={**config, "plugins": {"mail": {
            k: v for k, v in config["plugins"]["mail"].items() if k != "shielded"}}}, projects=[])
        for name, served in (("off", off), ("on", on)):
            times = warm(served)
            print(f"search_mail warm, shield {name}: median {statistics.median(times) * 1000:.1f} ms, "
                  f"p95 {percentile(times, 0.95) * 1000:.1f} ms")
        rng = random.Random(5)
        for name, served in (("off", off), ("on", on)):
            times = []
            for number in range(max(3, arguments.repeat // 5)):  # one new message, then the call that reads it
                words = " ".join(rng.choice(KIND + COMMON) for _ in range(60))
                sample.deliver(root / "INBOX", sample.message(
                    message_id=f"new-{name}-{number}@example.net", sender="Reader <new@example.com>", to=PRESS,
                    subject="More about the orchard", body=words), flags=None)
                time.sleep(0.01)
                started = time.perf_counter()
                served.call("search_mail", {"query": "orchard"})
                times.append(time.perf_counter() - started)
            print(f"search_mail after one new message, shield {name}: median {statistics.median(times) * 1000:.1f} ms, "
                  f"max {max(times) * 1000:.1f} ms")
        print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
