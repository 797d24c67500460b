"""What placing every message costs spam_review with a manifest of 50 projects (run by hand), beside another checkout.

    .venv/bin/python bench/bench_spam_gate.py                          # this checkout, 10,000 messages
    .venv/bin/python bench/bench_spam_gate.py --checkout /path/to/other --messages 20000

A temporary home: the sample mailbox (40 messages), trained, then N messages in three folders, each with its own
subject and one of 2,000 senders at 200 domains, a tenth replying to an earlier one, a third spam in Junk (so that
spam_review's lists hold hundreds of envelopes for the gate); a manifest of 50 projects
(10 each of sender, subject, folder, path and account routes, half closed, some taking a few messages).
spam_review (limit 20) is called through the gateway's own call path: once cold (every header and every part read
for the first time), once warm (nothing changed: the conversations kept), then 3 times after a new message each
(every conversation placed again, what the gate said of each part kept): the median of those. Run it with each
checkout's own code (`--checkout`) to compare.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parent.parent)
parser.add_argument("--messages", type=int, default=10_000)
arguments = parser.parse_args()
sys.path[:0] = [str(arguments.checkout), str(arguments.checkout / "plugins")]

import gateway_mail  # noqa: E402
import gateway_spam  # noqa: E402
from gateway_spam import sample, training  # noqa: E402

from gateway.api.context import home_environment  # noqa: E402
from gateway.testing import folders_of, make_gateway  # noqa: E402


def projects(root: Path) -> list[dict]:
    found = []
    for n in range(10):
        found += [{"id": f"senders{n}", "ai": n % 2 == 0, "senders": [f"@d{n * 7}.example.net"]},
                  {"id": f"subjects{n}", "ai": n % 2 == 0, "subjects": [f"topic{n * 13} matters"]},
                  {"id": f"folders{n}", "ai": n % 2 == 0, "folders": [f"personal/Box{n}"]},
                  {"id": f"paths{n}", "ai": n % 2 == 0, "paths": [str(root.parent / f"other{n}")]},
                  {"id": f"accounts{n}", "ai": n % 2 == 0, "accounts": [f"elsewhere{n}"]}]
    return found


def grow(root: Path, total: int, when: float) -> None:
    rng = random.Random(5)
    for number in range(total):
        folder = ("INBOX", "Junk", "Lists")[number % 3]
        sender = f"Someone <p{number % 2000}@d{number % 200}.example.net>"
        words = "lottery jackpot casino bonus" if folder == "Junk" else "garden plumtree orchard choir"
        raw = sample.message(sender, f"Note {number} about topic{number % 500} matters", f"{words} {number}",
                             when - number, f"m{number}@example.com")
        if number % 10 == 9:
            earlier = rng.randrange(number)
            raw = raw.replace(b"Message-ID: ", f"In-Reply-To: <m{earlier}@example.com>\nMessage-ID: ".encode(), 1)
        sample.deliver(root / folder, raw, when - number)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        home.mkdir()
        os.environ.update(home_environment(home))
        root = home / "Mail" / "personal"
        now = time.time()
        sample.write_mailbox(root, messages=40, now=now)
        grow(root, arguments.messages, now - 7200)
        gateway = make_gateway([gateway_mail, gateway_spam], home=home, config=sample.config(root),
                               projects=projects(root))
        data = folders_of(home).data / "plugins" / "spam"
        data.mkdir(parents=True, exist_ok=True)
        training.train({"spam_folders": ["Junk", "Spam"], "ham_folders": ["INBOX", "Archive"], "ham_cutoff": 0.2,
                        "spam_cutoff": 0.9, "data": str(data), "config": str(home),
                        "mail_accounts": [{"name": "personal", "maildir": str(root)}]})

        def review() -> tuple[float, dict]:
            started = time.perf_counter()
            answer = gateway.call("spam_review", {"limit": 20})
            assert not answer.is_error, answer.text
            return time.perf_counter() - started, answer.data

        cold, data_cold = review()
        warm, _ = review()
        again = []
        for n in range(3):
            sample.deliver(root / "INBOX", sample.message("New <new@example.org>", f"New {n}", "garden", now, f"n{n}@x"),
                           now)
            again.append(review()[0])
        print(f"checkout {arguments.checkout}: {arguments.messages:,} messages, 50 projects; left out "
              f"{data_cold['left_out']}, unchecked {data_cold['unchecked']}")
        print(f"  cold {cold:.2f} s   warm {warm:.2f} s   after new mail (median of 3) {statistics.median(again):.2f} s"
              f"  ({', '.join(f'{r:.2f}' for r in again)})")


if __name__ == "__main__":
    main()
