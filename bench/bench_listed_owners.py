"""What telling list_changed only for readable additions costs a sessions refresh (issue 13), run by hand.

    .venv/bin/python bench/bench_listed_owners.py                 # 1,000 new sessions, every one in a closed project
    .venv/bin/python bench/bench_listed_owners.py --sessions 200

Side by side in one run: a refresh that imports N new Claude Code transcripts (10 messages each), all in a closed
project, so every new session is judged (the worst case: the judging stops at the first readable one), and the part
of it spent judging where the new sessions belong (`_owners_of_new`); then one new open session after them.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "plugins"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    sessions = parser.parse_args().sessions

    from gateway.api.context import home_environment

    home = Path(tempfile.mkdtemp()) / "home"
    home.mkdir()
    os.environ.update(home_environment(home))

    import gateway_sessions
    from fresh_helpers import claude_session, open_projects
    from gateway_sessions import refresh

    from gateway.engine.core import Caller
    from gateway.testing import make_gateway

    gateway = make_gateway([("sessions", gateway_sessions)], home=home, config={"gateway": {"plugins": ["sessions"]}},
                           projects=open_projects(home))
    for n in range(sessions):
        claude_session(home, f"s{n}", [f"message {i} about the vault" for i in range(10)],
                       home / "src" / "vault" / f"part{n}", project=f"-p{n % 50}")
    spent: list[float] = []
    judge = refresh._owners_of_new

    def timed(*arguments):
        started = time.perf_counter()
        try:
            return judge(*arguments)
        finally:
            spent.append(time.perf_counter() - started)

    refresh._owners_of_new = timed
    ctx = gateway.context("sessions", gateway.snapshot(), Caller())
    started = time.perf_counter()
    result = refresh.refresh(ctx)
    total = time.perf_counter() - started
    print(f"{result.added} new sessions, every one kept back: refresh {total * 1000:.0f} ms, of which judging where "
          f"they belong {spent[-1] * 1000:.0f} ms; told: {bool(result.owners)}")
    claude_session(home, "open-one", ["hello"], home / "src" / "orchard", project="-p0")
    started = time.perf_counter()
    result = refresh.refresh(ctx)
    total = time.perf_counter() - started
    print(f"then 1 new open session: refresh {total * 1000:.1f} ms, of which judging {spent[-1] * 1000:.2f} ms; "
          f"told: {bool(result.owners)}")


if __name__ == "__main__":
    main()
