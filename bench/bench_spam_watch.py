"""What `gateway watch` buys the spam tools (run by hand): spam_review and spam_status with and without its work.

    .venv/bin/python bench/bench_spam_watch.py                 # the SpamAssassin corpus (about 5,800 messages)
    .venv/bin/python bench/bench_spam_watch.py --every 4 --repeat 5

A temporary home: the corpus (`/work/shared/tools/fetch-spamassassin.sh`, deduplicated, leaking headers stripped)
as one account's Junk and INBOX, every file made recent (spam_review reads the last 30 days), trained. Then,
interleaved over --repeat rounds, through the gateway's own call path:
- spam_review (limit 20) as a server meets it fresh, with no facts store (what it did before `watch` kept one:
  every message it reads tokenized, the model loaded);
- the same with the store filled by the plugin's refresh (what `gateway watch` does), the model loaded anew;
- the same again in a server that already holds the model (a later call: it keeps the model while its file is the
  same);
- spam_status, and, beside it, loading the whole model (what spam_status did before to count its messages).
Then the refresh's own cost: filling the store from nothing, and a round with nothing new (what each of watch's
rounds costs while no mail arrives). Medians in milliseconds, with the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "plugins"), str(ROOT / "bench")]

import gateway_mail  # noqa: E402
import gateway_spam  # noqa: E402
from bench_spam import FETCH, stream  # noqa: E402
from gateway_spam import kept, tools, training  # noqa: E402
from gateway_spam.model import Model  # noqa: E402

from gateway.api.context import home_environment  # noqa: E402
from gateway.testing import folders_of, make_gateway  # noqa: E402


def _ms(seconds: list[float]) -> str:
    return f"{statistics.median(seconds) * 1000:9.1f} ms  ({', '.join(f'{s * 1000:.0f}' for s in seconds)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    folder = arguments.corpus or Path(subprocess.run(["bash", str(FETCH)], capture_output=True, text=True,
                                                     check=True).stdout.strip())
    messages = stream(folder, max(1, arguments.every))
    with tempfile.TemporaryDirectory() as work:
        home = Path(work) / "home"
        home.mkdir()
        os.environ.update(home_environment(home))
        root = home / "Mail" / "personal"
        now = time.time()
        for number, (label, raw, _when) in enumerate(messages):
            target = root / ("Junk" if label == "spam" else "INBOX")
            for sub in ("cur", "new", "tmp"):
                (target / sub).mkdir(parents=True, exist_ok=True)
            path = target / "cur" / f"{int(now)}.M{number}P1.bench:2,S"
            path.write_bytes(raw)
            moment = now - 60 * (len(messages) - number)  # recent, in the stream's order
            os.utime(path, (moment, moment))
        config = {"gateway": {"plugins": ["mail", "spam"]},
                  "plugins": {"mail": {"accounts": [{"name": "personal", "maildir": str(root)}]}, "spam": {}}}
        gateway = make_gateway([gateway_mail, gateway_spam], home=home, config=config)
        folders = folders_of(home)
        settings = {"spam_folders": ["Junk", "Spam"], "ham_folders": ["INBOX", "Archive"], "ham_cutoff": 0.3,
                    "spam_cutoff": 0.8, "data": str(folders.data / "plugins" / "spam"), "config": str(home),
                    "cache": str(folders.cache / "plugins" / "spam"),
                    "mail_accounts": [{"name": "personal", "maildir": str(root)}]}
        Path(settings["data"]).mkdir(parents=True, exist_ok=True)
        training.train(settings)
        store = Path(settings["cache"]) / kept.NAME
        model_file = Path(settings["data"]) / "model.sqlite"
        times: dict[str, list[float]] = {}
        loads = [os.getloadavg()[0]]
        fill, nothing_new = [], []

        def timed(name: str, action) -> object:  # noqa: ANN001
            started = time.perf_counter()
            result = action()
            times.setdefault(name, []).append(time.perf_counter() - started)
            return result

        for _ in range(arguments.repeat):
            store.unlink(missing_ok=True)
            tools._models.clear()  # a fresh server: no model held
            answer = timed("spam_review, no facts store, model loaded (before)",
                           lambda: gateway.call("spam_review", {"limit": 20}))
            assert not answer.is_error, answer.text
            started = time.perf_counter()
            training.keep(settings)
            fill.append(time.perf_counter() - started)
            started = time.perf_counter()
            training.keep(settings)
            nothing_new.append(time.perf_counter() - started)
            tools._models.clear()
            timed("spam_review, store filled by watch, model loaded", lambda: gateway.call("spam_review",
                                                                                          {"limit": 20}))
            timed("spam_review, store filled, model held (a later call)", lambda: gateway.call("spam_review",
                                                                                              {"limit": 20}))
            timed("spam_status (the model's counts alone)", lambda: gateway.call("spam_status", {}))
            timed("loading the whole model (spam_status before)", lambda: Model.load(model_file))
            loads.append(os.getloadavg()[0])
        print(f"{len(messages)} messages, every one recent; {arguments.repeat} interleaved rounds, medians (load "
              f"average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores)")
        for name, seconds in times.items():
            print(f"  {name:56}{_ms(seconds)}")
        print(f"  {'the refresh, filling the store from nothing':56}{_ms(fill)}")
        print(f"  {'the refresh after a change, nothing to read (facts, stats)':56}{_ms(nothing_new)}")


if __name__ == "__main__":
    main()
