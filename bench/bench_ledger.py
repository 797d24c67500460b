"""Budgets and bank accounts on years of journals: run by hand, `.venv/bin/python bench/bench_ledger.py [--help]`.

Writes a beancount file and an hledger journal holding 50,000 transactions between them (half each by default:
payees, a tag now and then, an IBAN in some metadata, monthly budgets), in a temporary home, then measures through
the gateway as a host calls it (arguments checked, gate, masks, audit): the first read of each journal (the first
call, which has the journal's own tool read it into the plugin's store), beside that tool's plain read of the same
file (beancount's loader in-process; `hledger print -O json`), and the median of each tool over repeated calls
once the store is read, beside the plainest query of the store for the same thing. Prints the machine's load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gateway.api.context import home_environment  # noqa: E402

PAYEES = ["Grocer Example", "Bakery Sample", "Train Example", "Power Example", "Cafe Sample", "Bookshop Example",
          "Pharmacy Sample", "Cinema Example", "Garage Sample", "Florist Example"]
ACCOUNTS = ["Expenses:Food", "Expenses:Food:Bakery", "Expenses:Travel", "Expenses:Utilities", "Expenses:Leisure",
            "Expenses:Books", "Expenses:Health", "Expenses:Car", "Expenses:Gifts", "Expenses:Lawsuit:Fees"]
IBAN = "DE89 3704 0044 0532 0130 00"


def write_beancount(path: Path, count: int, today: date) -> None:
    start = today - timedelta(days=5 * 365)
    lines = ['option "operating_currency" "EUR"', f"{start} open Assets:Bank:Checking EUR", f'  number: "{IBAN}"',
             f"{start} open Equity:Opening EUR"]
    lines += [f"{start} open {a} EUR" for a in sorted(set(ACCOUNTS) | {"Expenses:Lawsuit"})]
    lines += [f'{start} custom "budget" {a} "monthly" {100 + 10 * n}.00 EUR' for n, a in enumerate(ACCOUNTS)]
    for n in range(count):
        day = start + timedelta(days=(n * 5 * 365) // count)
        tag = " #vault" if n % 97 == 0 else ""
        meta = f'\n  iban: "{IBAN}"' if n % 50 == 0 else ""
        lines.append(f'{day} * "{PAYEES[n % 10]}" "purchase {n} of the week"{tag}{meta}\n'
                     f"  {ACCOUNTS[(n * 7) % 10]}  {1 + n % 90}.{n % 100:02d} EUR\n  Assets:Bank:Checking\n")
    path.write_text("\n".join(lines), encoding="utf-8")


def write_hledger(path: Path, count: int, today: date) -> None:
    start = (today - timedelta(days=5 * 365)).replace(day=1)
    lines = [f"account Assets:Joint  ; number: {IBAN}", f"~ monthly from {start}"]
    lines += [f"    {a}  {50 + 5 * n}.00 EUR" for n, a in enumerate(ACCOUNTS)] + ["    Assets:Joint", ""]
    for n in range(count):
        day = start + timedelta(days=(n * 5 * 365) // count)
        tag = "  ; vault:" if n % 97 == 0 else ""
        lines.append(f"{day} {PAYEES[(n + 3) % 10]} | shared cost {n}{tag}\n"
                     f"    {ACCOUNTS[(n * 3) % 10]}  {1 + n % 70}.{n % 100:02d} EUR\n    Assets:Joint\n")
    path.write_text("\n".join(lines), encoding="utf-8")


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transactions", type=int, default=50_000, help="in all, half in each journal")
    parser.add_argument("--repeat", type=int, default=15, help="calls of each tool (default 15)")
    arguments = parser.parse_args()
    today = date.today()
    print(load())
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        home.mkdir()
        os.environ.update(home_environment(home))
        import gateway_ledger

        from gateway.testing import make_gateway

        bean, journal = home / "main.beancount", home / "shared.journal"
        write_beancount(bean, arguments.transactions // 2, today)
        write_hledger(journal, arguments.transactions - arguments.transactions // 2, today)
        print(f"journals: {arguments.transactions:,} transactions; {bean.stat().st_size / 2**20:.1f} MiB beancount, "
              f"{journal.stat().st_size / 2**20:.1f} MiB hledger")
        projects = [{"id": "vault", "ai": False, "accounts": ["Expenses:Lawsuit"]}]
        firsts = {}
        for name, paths in (("beancount", [bean]), ("hledger", [bean, journal])):
            gateway = make_gateway([("ledger", gateway_ledger)], home=home, projects=projects, config={
                "gateway": {"plugins": ["ledger"], "refresh_budget_ms": 60_000},
                "plugins": {"ledger": {"journals": [str(p) for p in paths]}}})
            start = time.perf_counter()
            while True:  # the core's refresh reads the journals; each call waits for it up to refresh_budget_ms
                answer = gateway.call("accounts")
                assert not answer.is_error and "journal not read" not in answer.text, answer.text
                if "still being read" not in answer.text:
                    break
            firsts[name] = time.perf_counter() - start
        start = time.perf_counter()
        from beancount import loader

        loader.initialize(use_cache=False)
        loader.load_file(str(bean))
        bare_bean = time.perf_counter() - start
        start = time.perf_counter()
        subprocess.run([shutil.which("hledger") or "hledger", "-f", str(journal), "print", "-O", "json"], check=True,
                       capture_output=True)
        bare_hledger = time.perf_counter() - start
        print(f"first read, beancount ({arguments.transactions // 2:,}): {firsts['beancount']:.2f} s through the "
              f"gateway; beancount's loader alone {bare_bean:.2f} s (ratio {firsts['beancount'] / bare_bean:.1f}x)")
        print(f"first read, hledger ({arguments.transactions - arguments.transactions // 2:,}): "
              f"{firsts['hledger']:.2f} s through the gateway; hledger print -O json alone {bare_hledger:.2f} s "
              f"(ratio {firsts['hledger'] / bare_hledger:.1f}x)")
        store = home / ".cache" / "gateway" / "plugins" / "ledger" / "ledger.sqlite3"
        connection = sqlite3.connect(store)
        month = today.strftime("%Y-%m")
        plays = {
            "budgets": ({}, "SELECT account, SUM(CAST(amount AS REAL)) FROM postings WHERE date >= "
                        f"'{month}-01' GROUP BY account"),
            "budgets (a year)": ({"period": str(today.year)}, "SELECT account, SUM(CAST(amount AS REAL)) FROM "
                                 f"postings WHERE date >= '{today.year}-01-01' GROUP BY account"),
            "accounts": ({}, "SELECT account, commodity, SUM(CAST(amount AS REAL)) FROM postings GROUP BY 1, 2"),
            "search_transactions": ({"query": "grocer week"}, "SELECT t.id FROM transactions_fts f JOIN transactions "
                                    "t ON t.id = f.rowid WHERE transactions_fts MATCH '\"grocer\" \"week\"' "
                                    "ORDER BY t.date DESC LIMIT 20"),
        }
        print(f"{'tool':22} {'gateway median':>15} {'bare SQL median':>16} {'ratio':>7}")
        for tool, (args, sql) in plays.items():
            name = tool.split(" ")[0]
            through, plain = [], []
            for _ in range(arguments.repeat):
                start = time.perf_counter()
                answer = gateway.call(name, args)
                through.append(time.perf_counter() - start)
                assert not answer.is_error, answer.text
                start = time.perf_counter()
                connection.execute(sql).fetchall()
                plain.append(time.perf_counter() - start)
            a, b = statistics.median(through) * 1000, statistics.median(plain) * 1000
            print(f"{tool:22} {a:12.2f} ms {b:13.2f} ms {a / b:6.1f}x")
        print(load())


if __name__ == "__main__":
    main()
