"""Time and invoices at a working life's size: run by hand, `.venv/bin/python bench/bench_time.py [--help]`.

Writes, in a temporary home, timewarrior month files holding 50,000 intervals (about five years of tracking, a
few tags each, one project closed) and 2,000 Factur-X invoice PDFs (made by the factur-x library on a pypdf page),
then measures through the gateway as a host calls it (arguments checked, gate, masks, audit): the first read (the
first call, which reads every file into the plugin's store), beside the plainest read of the same files in one
process (timewarrior's lines parsed, each PDF's XML got and parsed by the library, nothing kept), and the median
of each tool over repeated calls once the store is read. The machine's load average is printed before and after,
since the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gateway.api.context import home_environment  # noqa: E402

TAGS = ["acme", "website", "deep work", "meetings", "email", "writing", "review", "support", "project:harbor",
        "admin", "travel", "reading"]


def write_time(db: Path, intervals: int) -> None:
    from gateway_time import sample

    data = db / "data"
    data.mkdir(parents=True)
    start = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(days=5 * 365)
    step = timedelta(days=5 * 365) / intervals
    months: dict[str, list[str]] = {}
    for n in range(intervals):
        begin = start + n * step
        tags = [TAGS[(n * 7) % len(TAGS)], TAGS[(n * 13 + 1) % len(TAGS)]]
        months.setdefault(f"{begin:%Y-%m}", []).append(
            sample.interval_line(begin, begin + step * 0.8, tags, "call with the team" if n % 9 == 0 else ""))
    for month, lines in months.items():
        (data / f"{month}.data").write_text("".join(lines))


def write_invoices(folder: Path, count: int) -> None:
    import facturx
    from gateway_time import sample

    page = sample.blank_pdf()
    today = date.today()
    for n in range(count):
        issued = today - timedelta(days=n % 700)
        xml = sample.invoice_xml(f"INV-{n:05d}", f"Seller {n % 40}", f"Client {n % 25}", f"{100 + n % 900}.00",
                                 issued=issued, due=issued + timedelta(days=30), reference="acme" if n % 5 else
                                 "project:harbor", iban=sample.IBAN if n % 3 == 0 else "")
        where = folder / ("paid" if n % 2 else str(issued.year)) / f"inv-{n:05d}.pdf"
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_bytes(facturx.generate_from_binary(page, xml, check_xsd=False))


def bare_read(db: Path, folder: Path) -> tuple[float, float]:
    import facturx
    from gateway_time import timewarrior
    from lxml import etree

    start = time.perf_counter()
    for path in timewarrior.data_files(db):
        timewarrior.read_file(path, 1 << 30)
    lines = time.perf_counter() - start
    start = time.perf_counter()
    for path in sorted(folder.rglob("*.pdf")):
        _name, xml = facturx.get_xml_from_pdf(path.read_bytes(), check_xsd=False)
        facturx.parse_ubl_cii_xml(etree.fromstring(xml), check_xsd=False)
    return lines, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--intervals", type=int, default=50_000)
    parser.add_argument("--invoices", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=20, help="calls of each tool (default 20)")
    arguments = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        home.mkdir()
        os.environ.update(home_environment(home))
        import gateway_time

        from gateway.testing import make_gateway

        db, folder = home / ".local" / "share" / "timewarrior", home / "Invoices"
        start = time.perf_counter()
        write_time(db, arguments.intervals)
        write_invoices(folder, arguments.invoices)
        print(f"made {arguments.intervals:,} intervals and {arguments.invoices:,} invoices in "
              f"{time.perf_counter() - start:.1f} s")
        config = {"gateway": {"refresh_budget_ms": 60_000},
                  "plugins": {"time": {"timewarrior": str(db), "invoices": str(folder), "timezone": "UTC"}}}
        gateway = make_gateway([gateway_time], home=home, config=config, projects=[
            {"id": "acme", "ai": True}, {"id": "harbor", "ai": False}])
        lines, pdfs = bare_read(db, folder)
        start = time.perf_counter()
        while True:
            answer = gateway.call("time_spent", {})
            assert not answer.is_error, answer.text
            if "still being read" not in answer.text:
                break
        first = time.perf_counter() - start
        bare = lines + pdfs
        print(f"first read: {first:.2f} s through the gateway; the same files read bare in one process {bare:.2f} s "
              f"(lines {lines:.2f} s, PDFs {pdfs:.2f} s; ratio {first / bare:.1f}x)")
        today = date.today()
        plays = {
            "time_spent, a week": ("time_spent", {}),
            "time_spent, a year": ("time_spent", {"since": str(today - timedelta(days=365))}),
            "time_spent, 30 days by day": ("time_spent", {"since": str(today - timedelta(days=30)), "by": "day"}),
            "time_spent, a year, one tag": ("time_spent", {"since": str(today - timedelta(days=365)),
                                                           "project": "acme"}),
            "invoices unpaid": ("invoices", {}),
            "invoices all, a query": ("invoices", {"status": "all", "query": "Client 7"}),
        }
        print(f"{'call':30} {'median':>10} {'min':>10}")
        for label, (tool, args) in plays.items():
            times = []
            for _ in range(arguments.repeat):
                start = time.perf_counter()
                answer = gateway.call(tool, args)
                times.append(time.perf_counter() - start)
                assert not answer.is_error, answer.text
            print(f"{label:30} {statistics.median(times) * 1000:7.1f} ms {min(times) * 1000:7.1f} ms")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
