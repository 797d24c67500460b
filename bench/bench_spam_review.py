"""spam_review's cost against the store's size (run by hand): the same call over 10,000 and 100,000 recent messages.

    .venv/bin/python bench/bench_spam_review.py              # 10,000 then 100,000 messages in one folder's new/
    .venv/bin/python bench/bench_spam_review.py --sizes 1000 20000

A temporary home: the sample mailbox (40 messages), trained, then a folder of N recent messages (hard links to a few
files, as a first mbsync leaves them in new/). Each size: spam_review (limit 20) called 3 times through the gateway's
own call path (no projects: the gate reads nothing), the median said beside how many messages it read. Its cost
should follow its limit (the messages it reads), plus a listing and a stat per file, not the store.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]

import gateway_mail  # noqa: E402
import gateway_spam  # noqa: E402
from gateway_spam import sample, training  # noqa: E402

from gateway.api.context import home_environment  # noqa: E402
from gateway.testing import folders_of, make_gateway  # noqa: E402


def grow(root: Path, total: int, when: float) -> None:
    folder = sample.make_folder(root / "Lists")
    have = len(os.listdir(folder / "new"))
    originals = [sample.deliver(root / ".originals", sample.message(
        "List <list@example.com>", f"Digest {n}", f"garden news plumtree {n}", when, f"d{n}@example.com"), when)
        for n in range(20)] if have == 0 else sorted((root / ".originals" / "cur").iterdir())
    for number in range(have, total):
        os.link(originals[number % len(originals)], folder / "new" / f"{int(when)}.M{number}P1.example")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    sizes = parser.parse_args().sizes
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        home.mkdir()
        os.environ.update(home_environment(home))
        root = home / "Mail" / "personal"
        now = time.time()
        sample.write_mailbox(root, messages=40, now=now)
        gateway = make_gateway([gateway_mail, gateway_spam], home=home, config=sample.config(root))
        data = folders_of(home).data / "plugins" / "spam"
        data.mkdir(parents=True, exist_ok=True)
        training.train({"spam_folders": ["Junk", "Spam"], "ham_folders": ["INBOX", "Archive"], "ham_cutoff": 0.2,
                        "spam_cutoff": 0.9, "data": str(data), "config": str(home),
                        "mail_accounts": [{"name": "personal", "maildir": str(root)}]})
        print(f"{'recent messages':>16} {'read':>6} {'median s':>9} {'runs':>20}")
        for size in sizes:
            grow(root, size, now - 3600)
            runs = []
            for _ in range(3):
                started = time.perf_counter()
                answer = gateway.call("spam_review", {"limit": 20})
                runs.append(time.perf_counter() - started)
                assert not answer.is_error, answer.text
            print(f"{answer.data['recent']:>16,} {answer.data['read']:>6} {statistics.median(runs):>9.2f} "
                  f"{', '.join(f'{r:.2f}' for r in runs):>20}")


if __name__ == "__main__":
    main()
