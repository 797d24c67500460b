"""Texts and calls on a phone's worth of exports: run by hand, `.venv/bin/python bench/bench_texts.py [--help]`.

Writes one SMS Backup & Restore export of 100,000 texts (400 conversations, a code now and then, a tenth of them
MMS in groups) and one of 5,000 calls, in a temporary home, then measures through the gateway as a host calls it
(arguments checked, gate, masks, audit): the first read (the first call, which reads the exports into the
plugin's store), beside the plainest read of the same file (defusedxml's parser alone, every element visited and
nothing kept), and the median of each tool over repeated calls once the store is read, beside the same query run
bare on the store.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gateway.api.context import home_environment  # noqa: E402

WORDS = ["dinner", "friday", "plumtree", "salad", "bring", "train", "late", "tomorrow", "meeting", "call", "back", "picnic", "sunday", "cake", "station", "parcel", "delivered", "thanks", "see", "you", "soon", "running", "ten", "minutes"]


def write_exports(folder: Path, texts: int, calls: int, conversations: int) -> None:
    from gateway_texts import sample

    folder.mkdir(parents=True)
    start = datetime.now(UTC) - timedelta(days=365)
    step = timedelta(days=364) / texts
    numbers = [f"+1 212-555-01{n % 100:02d}" if n < 100 else f"+33 6 39 98 {n // 100:02d} {n % 100:02d}"
               for n in range(conversations)]
    items = []
    for n in range(texts):
        when = start + n * step
        who = numbers[(n * 7919) % conversations]
        words = " ".join(WORDS[(n * k) % len(WORDS)] for k in range(1, 9))
        if n % 50 == 0:
            items.append(sample.sms("36111", when, f"Your Example verification code is {100000 + n % 899999}."))
        elif n % 10 == 0:
            items.append(sample.mms([who, numbers[(n + 1) % conversations]], when, words, sender=who))
        else:
            items.append(sample.sms(who, when, words, 1 + n % 2, f"Person {n % conversations}"))
    (folder / "sms-20261201090000.xml").write_text(sample.smses(items), encoding="utf-8")
    (folder / "calls-20261201090000.xml").write_text(sample.calls([
        sample.call(numbers[n % conversations], datetime.now(UTC) - timedelta(minutes=90 * n), 1 + n % 7, n % 600)
        for n in range(calls)]), encoding="utf-8")


def bare_parse(path: Path) -> int:
    from defusedxml.ElementTree import iterparse

    count = 0
    with path.open("rb") as handle:
        for _event, element in iterparse(handle, events=("end",)):
            count += 1
            if element.tag in ("sms", "mms", "call"):
                element.clear()
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=5_000)
    parser.add_argument("--conversations", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=30, help="calls of each tool (default 30)")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        home.mkdir()
        os.environ.update(home_environment(home))
        import gateway_texts

        from gateway.testing import make_gateway

        exports = home / "SMSBackupRestore"
        write_exports(exports, arguments.texts, arguments.calls, arguments.conversations)
        size = sum(p.stat().st_size for p in exports.iterdir())
        print(f"exports: {arguments.texts:,} texts, {arguments.calls:,} calls, {size / 2**20:.1f} MiB")
        config = {"gateway": {"refresh_budget_ms": 60_000},
                  "plugins": {"texts": {"enabled": True, "exports": str(exports), "timezone": "UTC"}}}
        gateway = make_gateway([gateway_texts], home=home, config=config, projects=[
            {"id": "vault", "ai": False, "senders": ["+1 212 555 0107"]}])
        start = time.perf_counter()
        bare_parse(exports / "sms-20261201090000.xml")
        bare_parse(exports / "calls-20261201090000.xml")
        bare = time.perf_counter() - start
        start = time.perf_counter()
        while True:  # the core's refresh reads the exports; each call waits for it up to refresh_budget_ms
            answer = gateway.call("list_conversations", {"limit": 5})
            assert not answer.is_error, answer.text
            if "still being read" not in answer.text:
                break
        first = time.perf_counter() - start
        print(f"first read: {first:.2f} s through the gateway; the parser alone {bare:.2f} s "
              f"(ratio {first / bare:.1f}x)")
        store = home / ".cache" / "gateway" / "plugins" / "texts" / "texts.sqlite3"
        connection = sqlite3.connect(store)
        one = "+12125550142"
        plays = {
            "list_conversations": ({"limit": 50}, "SELECT c.address, COUNT(t.id), MAX(t.date) FROM conversations c "
                                   "JOIN texts t ON t.conversation = c.id GROUP BY c.id ORDER BY 3 DESC"),
            "read_conversation": ({"address": one}, "SELECT sender, date, body FROM texts WHERE conversation = "
                                  f"(SELECT id FROM conversations WHERE address = '{one}') ORDER BY date DESC LIMIT 50"),
            "search_texts": ({"query": "plumtree salad"}, "SELECT rowid FROM texts_fts WHERE texts_fts MATCH "
                             "'\"plumtree\" \"salad\"' ORDER BY rank LIMIT 20"),
            "list_calls": ({"days": 30}, "SELECT * FROM calls WHERE date >= 0 ORDER BY date DESC"),
        }
        print(f"{'tool':20} {'gateway median':>15} {'bare SQL median':>16} {'ratio':>7}")
        for tool, (args, sql) in plays.items():
            through, plain = [], []
            for _ in range(arguments.repeat):
                start = time.perf_counter()
                answer = gateway.call(tool, args)
                through.append(time.perf_counter() - start)
                assert not answer.is_error, answer.text
                start = time.perf_counter()
                connection.execute(sql).fetchall()
                plain.append(time.perf_counter() - start)
            a, b = statistics.median(through) * 1000, statistics.median(plain) * 1000
            print(f"{tool:20} {a:12.2f} ms {b:13.2f} ms {a / b:6.1f}x")
        drafts = []
        for n in range(arguments.repeat):
            start = time.perf_counter()
            answer = gateway.call("draft_text", {"address": one, "body": f"On my way {n}"})
            drafts.append(time.perf_counter() - start)
            assert not answer.is_error, answer.text
        print(f"{'draft_text':20} {statistics.median(drafts) * 1000:12.2f} ms")


if __name__ == "__main__":
    main()
