"""The cost of the gate's one decision (`Gate.owners`) per thing, with a manifest of many projects: CPU time per
thing, median of five passes over 2,000 things (run by hand, never as a timed test).

    .venv/bin/python bench/bench_gate_owners.py --projects 50

Each project has two path routes, two sender routes, two subject routes, a folder and an account; each thing a
message file, its account's root, an authenticated sender, a sentence of words, an account and a folder, as the mail
plugin describes a message. CPU time (process_time), so that a loaded machine's waits are not counted.
"""

from __future__ import annotations

import argparse
import statistics
import time

from gateway.gate.access import Gate, Manifest, Project
from gateway.gate.traits import Person, Traits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=50)
    parser.add_argument("--things", type=int, default=2000)
    options = parser.parse_args()
    projects = tuple(
        Project(id=f"p{i}", ai=bool(i % 2), paths=(f"~/src/p{i}", f"/data/p{i}/docs"),
                senders=(f"@client{i}.example.com", f"lee{i}@example.net"), subjects=(f"ACME-{1000 + i}", f"Case {i}"),
                folders=(f"work/P{i}",), accounts=(f"acct{i}",))
        for i in range(options.projects))
    gate = Gate(manifest=Manifest(projects=projects), outside_projects=True)
    things = [Traits(paths=(f"/home/pat/Mail/work/cur/{n}:2,S", "/home/pat/Mail/work"),
                     people=(Person(f"someone{n}@example.org", proven=True),),
                     words=(f"hello about the budget number {n} and plans",), account="work", folder="INBOX")
              for n in range(options.things)]
    gate.owners(things[0])
    passes = []
    for _ in range(5):
        started = time.process_time()
        for thing in things:
            gate.owners(thing)
        passes.append((time.process_time() - started) / len(things) * 1000)
    print(f"Gate.owners, {options.projects} projects: {statistics.median(passes):.3f} ms CPU per thing (median of 5 "
          f"passes over {len(things):,} things; passes {', '.join(f'{p:.3f}' for p in passes)})")


if __name__ == "__main__":
    main()
