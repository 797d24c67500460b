"""What a mail call pays before it reads the index when nothing changed: the refresh's stat pass over every folder
(without file notifications) against one look at the kernel's notifications (with them), side by side.

    .venv/bin/python bench/bench_mail_refresh.py --folders 32 --messages 2000 --repeat 300

Each figure is the median (and p95) of a whole search_mail call in process (arguments checked, the index brought
up to date, the search, the gate, masks and audit), the two ways taken in turns. Run by hand, never as a timed test.
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
sys.path.insert(0, str(ROOT / "plugins"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folders", type=int, default=32)
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=300)
    options = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="bench-mail-refresh-"))
    from gateway.api.context import home_environment

    os.environ.update(home_environment(home))
    import gateway_mail
    from gateway_mail.mail import sample, store

    from gateway.api import changes
    from gateway.testing import make_gateway

    root = home / "Mail" / "personal"
    names = ["INBOX"] + [f"Archive/{year}" if n % 2 else f"Lists/list-{n}" for n, year in
                         zip(range(1, options.folders), range(2000, 2000 + options.folders), strict=False)]
    for number in range(options.messages):
        sample.deliver(root / names[number % len(names)], sample.message(subject=f"Note {number}", body="budget"))
    gateway = make_gateway([gateway_mail], home=home, config=sample.config(root))
    gateway.call("search_mail", {"query": "budget"})  # the first index

    def once() -> float:
        started = time.perf_counter()
        answer = gateway.call("search_mail", {"query": "budget", "limit": 5})
        assert not answer.is_error, answer.text
        return (time.perf_counter() - started) * 1000

    with_hub, without_hub = changes._hub, changes._Hub()
    without_hub.unavailable = "disabled for the bench"
    for _ in range(3):
        once()  # the folders watched and settled
    with_ms, without_ms = [], []
    for _ in range(options.repeat):
        changes._hub = with_hub
        with_ms.append(once())
        changes._hub = without_hub
        store._watched.clear()
        without_ms.append(once())
        store._watched.clear()
        changes._hub = with_hub
        for _ in range(2):
            once()  # settled again
    load = os.getloadavg()[0]
    print(f"{len(names)} folders, {options.messages:,} messages, load {load:.1f}")
    for label, found in (("stat pass (no notifications)", without_ms), ("notifications, nothing changed", with_ms)):
        found.sort()
        print(f"  {label:34} median {statistics.median(found):6.3f} ms   p95 {found[int(len(found) * 0.95)]:6.3f} ms")
    print(f"  ratio {statistics.median(with_ms) / statistics.median(without_ms):.2f}")


if __name__ == "__main__":
    main()
