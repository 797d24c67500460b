"""Papers on a documents folder of 5,000: run by hand, `.venv/bin/python bench/bench_papers.py [--help]`.

Writes, in a temporary home, a documents folder of generated papers: real PDFs made with reportlab (one to three
pages, contracts and letters in their folders, an IBAN or a card number now and then, a tenth in a closed
project's folder), plain text files, and a paperless-ngx export of the rest. Then measures through the gateway as a
host calls it (arguments checked, gate, masks, audit): the first read (the first call, which reads the folder into
the plugin's store), beside the plainest read of the same PDFs (pypdf in this process, each page's text extracted,
nothing kept); a call when nothing changed; and the median of each tool over repeated calls, beside the same query
run bare on the store. The machine's load is printed before and after: the figures mean little on a busy machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gateway.api.context import home_environment  # noqa: E402

WORDS = ["lease", "deposit", "tenant", "renewal", "invoice", "statement", "account", "garden", "plumtree", "roof",
         "insurance", "premium", "notice", "council", "permit", "meter", "reading", "survey", "warranty", "repair"]
FIRMS = ["Acme Lettings", "Northbank", "City Council", "Harbor Works", "Example Insurance", "Plumtree Nursery"]


def words(n: int, count: int) -> str:
    return " ".join(WORDS[(n * k + k * k) % len(WORDS)] for k in range(1, count + 1))


def write_folder(folder: Path, papers: int) -> dict[str, int]:
    from gateway_papers import sample

    counts = {"pdf": 0, "text": 0, "paperless": 0}
    export_share = papers // 10
    text_share = papers // 10
    for n in range(papers - export_share - text_share):
        kind = ("contracts", "letters", "Research")[n % 3]
        where = folder / ("Vault" if n % 10 == 9 else kind) / FIRMS[n % len(FIRMS)]
        extra = f" Paid to {sample.IBAN}." if n % 17 == 0 else (f" Card {sample.CARD}." if n % 19 == 0 else "")
        pages = [f"Paper {n}: {words(n, 12)}.{extra}\n{words(n + 1, 12)}" for _page in range(1 + n % 3)]
        sample.pdf(where / f"2026-{1 + n % 12:02d}-{1 + n % 28:02d} Paper {n}.pdf", pages)
        counts["pdf"] += 1
    for n in range(text_share):
        path = folder / "letters" / FIRMS[n % len(FIRMS)] / f"Note {n}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Note {n}: {words(n, 40)}\n", encoding="utf-8")
        counts["text"] += 1
    export = folder / "paperless-export"
    export.mkdir(parents=True)
    records: list[dict] = [{"model": "documents.documenttype", "pk": 1, "fields": {"name": "Contract"}},
                           {"model": "documents.correspondent", "pk": 1, "fields": {"name": "Northbank"}}]
    for n in range(export_share):
        name = f"2026-03-01 Document {n}.txt"
        (export / name).write_text(f"Document {n}\n", encoding="utf-8")
        records.append({"model": "documents.document", "pk": n + 1, "fields": {
            "title": f"Document {n}", "content": f"Document {n}: {words(n, 60)}", "created": "2026-03-01",
            "correspondent": 1, "document_type": 1 if n % 2 else None, "tags": [], "mime_type": "text/plain",
            "page_count": 1}, "__exported_file_name__": name})
        counts["paperless"] += 1
    (export / "manifest.json").write_text(json.dumps(records), encoding="utf-8")
    (export / "metadata.json").write_text(json.dumps({"version": "2.14.7"}), encoding="utf-8")
    return counts


def bare_read(folder: Path) -> int:
    """The plainest read: every PDF's pages through pypdf, here, nothing kept."""
    from pypdf import PdfReader

    pages = 0
    for path in sorted(folder.rglob("*.pdf")):
        for page in PdfReader(path).pages:
            page.extract_text()
            pages += 1
    return pages


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=30, help="calls of each tool (default 30)")
    parser.add_argument("--no-bare", action="store_true", help="skip the plain pypdf read (it takes a while)")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        home.mkdir()
        os.environ.update(home_environment(home))
        import gateway_papers

        from gateway.testing import make_gateway

        folder = home / "Documents" / "Papers"
        start = time.perf_counter()
        counts = write_folder(folder, arguments.papers)
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        print(f"folder: {counts['pdf']:,} PDFs, {counts['text']:,} text files, {counts['paperless']:,} paperless-ngx "
              f"documents, {size / 2**20:.1f} MiB (written in {time.perf_counter() - start:.1f} s)")
        print(f"before: {load()}")
        config = {"gateway": {"refresh_budget_ms": 60_000}, "plugins": {"papers": {"folder": str(folder)}}}
        gateway = make_gateway([gateway_papers], home=home, config=config, projects=[
            {"id": "vault", "ai": False, "paths": [str(folder / "Vault")]}])
        start = time.perf_counter()
        while True:  # the core's refresh reads the folder; each call waits for it up to refresh_budget_ms
            answer = gateway.call("search_papers", {"query": "plumtree"})
            assert not answer.is_error, answer.text
            if "still being read" not in answer.text:
                break
        first = time.perf_counter() - start
        if arguments.no_bare:
            print(f"first read: {first:.2f} s through the gateway")
        else:
            start = time.perf_counter()
            pages = bare_read(folder)
            bare = time.perf_counter() - start
            print(f"first read: {first:.2f} s through the gateway; pypdf alone on the {pages:,} pages {bare:.2f} s "
                  f"(ratio {first / bare:.2f}x)")
        store = home / ".cache" / "gateway" / "plugins" / "papers" / "papers.sqlite3"
        connection = sqlite3.connect(store)
        address = gateway.call("search_papers", {"query": "plumtree"}).data["papers"][0]["address"]
        plays = {
            "search_papers": ({"query": "plumtree deposit"}, "SELECT d.address, snippet(docs_fts, 2, '', '', '…', 24) "
                              "FROM docs_fts f JOIN docs d ON d.id = f.rowid WHERE docs_fts MATCH "
                              "'\"plumtree\" \"deposit\"' ORDER BY f.rank LIMIT 10"),
            "search_papers kind": ({"query": "lease", "kind": "contract", "since": "2026-06-01"},
                                   "SELECT d.address FROM docs_fts f JOIN docs d ON d.id = f.rowid WHERE "
                                   "d.kind = 'contract' AND d.date >= '2026-06-01' AND docs_fts MATCH '\"lease\"' "
                                   "ORDER BY f.rank LIMIT 10"),
            "read_paper": ({"address": address}, f"SELECT * FROM docs WHERE address = '{address}'"),
        }
        print(f"{'tool':20} {'gateway median':>15} {'bare SQL median':>16} {'ratio':>7}")
        for tool, (args, sql) in plays.items():
            through, plain = [], []
            for _ in range(arguments.repeat):
                start = time.perf_counter()
                answer = gateway.call(tool.split()[0], args)
                through.append(time.perf_counter() - start)
                assert not answer.is_error, answer.text
                start = time.perf_counter()
                connection.execute(sql).fetchall()
                plain.append(time.perf_counter() - start)
            a, b = statistics.median(through) * 1000, statistics.median(plain) * 1000
            print(f"{tool:20} {a:12.2f} ms {b:13.2f} ms {a / b:6.1f}x")
        # One file changed: only it is read again.
        changed = next(folder.rglob("Note 0.txt"))
        changed.write_text("Note 0: a new word, quillfeather.\n")
        start = time.perf_counter()
        answer = gateway.call("search_papers", {"query": "quillfeather"})
        print(f"one file changed, the next call: {(time.perf_counter() - start) * 1000:.1f} ms "
              f"({len(answer.data['papers'])} found)")
        print(f"after: {load()}")


if __name__ == "__main__":
    main()
