"""Benchmark of the mail plugin on real mail, side by side with notmuch on the same files (run by hand).

    .venv/bin/python bench/bench_mail.py                       # the SpamAssassin corpus replicated to 100,000
    .venv/bin/python bench/bench_mail.py --messages 20000      # a quicker look
    .venv/bin/python bench/bench_mail.py --corpus DIR --work DIR --keep
    .venv/bin/python bench/bench_mail.py --work DIR            # again: the Maildir and both indexes reused
    .venv/bin/python bench/bench_mail.py --work DIR --only-language   # the query language and the total alone
                                                                      # (beside notmuch when its database is there)

The corpus (6,046 messages) comes from ../shared/tools/fetch-spamassassin.sh (or --corpus); it is replicated into
one Maildir folder up to --messages, each copy's Message-ID rewritten so that every message is distinct. Then, on
the same files and cores, in one run:

- a cold index, in messages/s: ours (`gateway mail index`'s code, parsing in one process per core) and
  `notmuch new` (Debian's notmuch, its own Xapian database);
- a refresh with nothing changed: ours as a tool's call does it (a stat per folder), ours listing every file
  (`--full`: a stat per file), and `notmuch new` again;
- search_mail through the gateway (make_gateway's call path: argument checks, gate, masks, audit line) for a few
  words, median and p95, beside `notmuch search --limit=20` for the same words (a process per search: its
  start-up is in its figure, as it is for anyone who calls it);
- the porch's median through the gateway; masking throughput in MB/s over the corpus's text;
- the index's size on disk beside notmuch's database;
- search_mail's query language (`LANGUAGE`): for each query, the median through the gateway, then in process the
  statement alone as the previous code ran it (the words given to FTS5 as typed, no total) beside the query
  language's (read, planned, then the total counted up to its bound), their difference (what the language and the
  count cost a search), and `notmuch count` and `notmuch search --limit=20` on the same query.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
FETCH = Path("/work/shared/tools/fetch-spamassassin.sh")
WORDS = ["money", "linux", "click here", "python", "free OR offer", "razor"]
# Queries in the query language, each with what the previous code gave FTS5 for it (None: it could not be asked).
LANGUAGE = [
    ("money", "money"), ("linux", "linux"), ("free OR offer", "free OR offer"), ("spamass*", "spamass*"),
    ("razor AND NOT spam", "razor NOT spam"), ("to:spamassassin-talk", None), ("from:rssfeeds@spamassassin.taint.org", None),
    ("list:freshrpms", None), ("attachment:signature.asc", None),
    ("linux date:2002-08..2002-09", None), ("date:2002-08-01..2002-08-15", None), ("(linux OR python) -razor", None),
    ("subject:free is:flagged", None), ("is:unread", None),
]
_MESSAGE_ID = re.compile(rb"^message-id:[^\n]*\n", re.IGNORECASE | re.MULTILINE)


def corpus_files(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.rglob("*.txt") if p.is_file())


def build_maildir(sources: list[Path], root: Path, count: int) -> None:
    inbox = root / "INBOX"
    for sub in ("cur", "new", "tmp"):
        (inbox / sub).mkdir(parents=True, exist_ok=True)
    contents = [p.read_bytes() for p in sources]
    for number in range(count):
        data = contents[number % len(contents)]
        header = f"Message-ID: <{number}.bench@example.org>\n".encode()
        data = _MESSAGE_ID.sub(lambda _m, h=header: h, data, count=1) if _MESSAGE_ID.search(data) else header + data
        (inbox / "cur" / f"{1700000000 + number}.M{number}P1.bench:2,S").write_bytes(data)


def built(root: Path) -> int:
    """How many messages an earlier run left in the work folder (0: none), so that --work reuses them."""
    cur = root / "INBOX" / "cur"
    return sum(1 for _ in os.scandir(cur)) if cur.is_dir() else 0


def _indexed(connection) -> int:
    return connection.execute("SELECT count(*) FROM messages").fetchone()[0]


def timed(function, *args, **kwargs) -> tuple[float, object]:
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - started, result


def notmuch(config: Path, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(["notmuch", f"--config={config}", *arguments], capture_output=True, text=True, check=True)


def summary(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return f"median {statistics.median(ordered) * 1000:7.1f} ms, p95 {p95 * 1000:7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--messages", type=int, default=100_000, help="how many messages (default 100,000)")
    parser.add_argument("--corpus", type=Path, default=None, help="the corpus folder (default: fetched)")
    parser.add_argument("--work", type=Path, default=None, help="where to build the Maildir (default: a temp folder)")
    parser.add_argument("--repeat", type=int, default=20, help="calls per search word and for the porch")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--notmuch-as-is", action="store_true",
                        help="search notmuch's database as it is, without `notmuch new` (one may still be filling it: "
                             "the bench says how many messages it held)")
    parser.add_argument("--reindex", action="store_true", help="time cold indexes even when --work holds them")
    parser.add_argument("--no-notmuch", action="store_true", help="skip notmuch (when it is not installed)")
    parser.add_argument("--only-language", action="store_true",
                        help="on the Maildir and index --work holds: only the query language's statements in process")
    options = parser.parse_args()

    corpus = options.corpus or Path(subprocess.run(["bash", str(FETCH)], capture_output=True, text=True,
                                                    check=True).stdout.strip())
    work = options.work or Path(tempfile.mkdtemp(prefix="bench-mail-"))
    home = work / "home"
    from gateway.api.context import home_environment

    os.environ.update(home_environment(home))
    import gateway_mail
    from gateway_mail.mail import index
    from gateway_mail.mail.accounts import Account

    from gateway import mask
    from gateway.engine.core import Caller
    from gateway.testing import folders_of, make_gateway

    sources = corpus_files(corpus)
    root = home / "Mail" / "bench"
    print(f"corpus: {len(sources)} files in {corpus}; building {options.messages:,} messages in {root}")
    if built(root) == options.messages:
        print(f"  reusing the {options.messages:,} messages already there; {os.cpu_count()} cores")
    else:
        took, _ = timed(build_maildir, sources, root, options.messages)
        print(f"  built in {took:.1f} s; {os.cpu_count()} cores")
    account = Account("bench", root, ("pat@example.org",), "mx.example.org")

    # Masking throughput over the corpus's text (each file's bytes as text, once).
    if options.only_language:
        cache = folders_of(home).for_plugin("mail").cache
        config = work / "notmuch-config"
        # notmuch's side when its database is there (built by an earlier run, or by hand: `notmuch new`)
        beside = (config if not options.no_notmuch and shutil.which("notmuch") and config.is_file()
                  and (root / ".notmuch").is_dir() else None)
        _language(cache, None, options.repeat, beside)
        return
    texts = [p.read_bytes().decode("utf-8", "replace") for p in sources]
    size = sum(len(t.encode()) for t in texts)
    took, _ = timed(lambda: [mask(t) for t in texts])
    print(f"masking: {size / took / 1e6:.1f} MB/s ({size / 1e6:.1f} MB in {took:.2f} s, one core)")

    cache = folders_of(home).for_plugin("mail").cache
    cache.mkdir(parents=True, exist_ok=True)
    connection = index.connect(index.index_path(cache))
    workers = os.cpu_count() or 1
    ours_rate = None
    if options.reindex or _indexed(connection) != options.messages:
        took, counts = timed(index.refresh, connection, [account], full=True, workers=workers)
        ours_rate = options.messages / took
        print(f"cold index, ours ({workers} processes): {took:.1f} s, {ours_rate:,.0f} messages/s "
              f"({counts['read']:,} read, {counts['unreadable']} unreadable)")
    else:
        print("cold index, ours: reused (--reindex to time it again)")
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    index_bytes = index.index_path(cache).stat().st_size
    print(f"index size, ours: {index_bytes / 1e6:.1f} MB ({index_bytes / options.messages:,.0f} bytes a message)")
    took_dirs, _ = timed(index.refresh, connection, [account])
    took_full, _ = timed(index.refresh, connection, [account], full=True)
    print(f"no-change refresh, ours: {took_dirs * 1000:.1f} ms as a call does it (a stat per folder), "
          f"{took_full:.2f} s listing every file (a stat per file)")
    connection.close()

    config = work / "notmuch-config"
    have_notmuch = not options.no_notmuch and shutil.which("notmuch")
    if have_notmuch:
        config.write_text(f"[database]\npath={root}\n[new]\ntags=inbox;\n[search]\nexclude_tags=\n"
                          "[maildir]\nsynchronize_flags=false\n")
        if options.notmuch_as_is:
            held = notmuch(config, "count", "*").stdout.strip()
            print(f"notmuch: its database searched as it is, holding {int(held):,} messages (no `notmuch new`)")
        elif options.reindex or not (root / ".notmuch").is_dir():
            shutil.rmtree(root / ".notmuch", ignore_errors=True)
            took, _ = timed(notmuch, config, "new", "--quiet")
            ratio = f" (ours/notmuch: {ours_rate / (options.messages / took):.2f})" if ours_rate else ""
            print(f"cold index, notmuch new: {took:.1f} s, {options.messages / took:,.0f} messages/s{ratio}")
        else:
            print("cold index, notmuch new: reused (--reindex to time it again)")
        if not options.notmuch_as_is:
            took, _ = timed(notmuch, config, "new", "--quiet")
            print(f"no-change refresh, notmuch new: {took:.2f} s")
        theirs_bytes = sum(p.stat().st_size for p in (root / ".notmuch").rglob("*") if p.is_file())
        print(f"index size, notmuch: {theirs_bytes / 1e6:.1f} MB (ours/notmuch: {index_bytes / theirs_bytes:.2f})")

    gateway = make_gateway([gateway_mail], home=home, config={"plugins": {"mail": {"accounts": [
        {"name": "bench", "maildir": str(root), "addresses": ["pat@example.org"], "authserv_id": "mx.example.org"}]}}},
        projects=[{"id": "closed", "ai": False, "senders": ["@example.com"]}])

    async def calls():
        results = {}
        caller = Caller("bench", "1", "direct")
        await gateway.call_tool("porch", {}, caller)  # the gate's first pass over the index, once
        for words in WORDS:
            times = []
            for _ in range(options.repeat):
                took, answer = await _timed_async(gateway.call_tool, "search_mail", {"query": words}, caller)
                assert not answer.is_error, answer.text
                times.append(took)
            results[words] = (times, len(answer.data["hits"]))
        porch = []
        for _ in range(options.repeat):
            took, answer = await _timed_async(gateway.call_tool, "porch", {}, caller)
            porch.append(took)
        return results, porch

    results, porch = anyio.run(calls)
    language = anyio.run(_language_calls, gateway, options.repeat)
    for words, (times, hits) in results.items():
        line = f"search {words!r:16}: ours {summary(times)} ({hits} hits)"
        if have_notmuch:
            theirs = []
            query = words if " OR " in words else " AND ".join(words.split()) if " " not in words else f'"{words}"'
            for _ in range(options.repeat):
                took, _ = timed(notmuch, config, "search", "--limit=20", "--output=messages", query)
                theirs.append(took)
            line += f" | notmuch search {summary(theirs)}"
        print(line)
    print(f"porch: {summary(porch)}")
    _language(cache, language, options.repeat, config if have_notmuch else None)
    if not options.keep and options.work is None:
        shutil.rmtree(work, ignore_errors=True)


async def _language_calls(gateway, repeat: int) -> dict[str, list[float]]:
    from gateway.engine.core import Caller

    caller, found = Caller("bench", "1", "direct"), {}
    for query, _old in LANGUAGE:
        times = []
        for _ in range(repeat):
            took, answer = await _timed_async(gateway.call_tool, "search_mail", {"query": query}, caller)
            assert not answer.is_error, (query, answer.text)
            times.append(took)
        found[query] = times
    return found


def _language(cache: Path, served: dict[str, list[float]] | None, repeat: int, config: Path | None) -> None:
    """The query language's cost in process, statement by statement, beside the previous path (without, then with
    the total it had counted since the total was added) and notmuch."""
    from datetime import UTC

    from gateway_mail.mail import answers, index

    connection = index.connect(index.index_path(cache))
    limit, none = 20, "[]"

    def previous(words: str, total: bool = False) -> None:
        sql = answers.SEARCH.format(since="", where="1")
        if len(connection.execute(sql, [words, none, none, none, limit]).fetchall()) >= limit and total:
            connection.execute(f"SELECT count(*) FROM ({sql})", [words, none, none, none, answers.TOTAL_BOUND + 1]).fetchone()

    generation = (str(index.index_path(cache)), index.generation(connection))

    def language(query: str, remembered: bool = False) -> int:
        """search_answer's path: the statements, the page, then the total (counted anew unless `remembered`)."""
        search = answers.statements(UTC, query, "1", [], None, none, none)
        rows = connection.execute(search.sql, [*search.arguments, limit]).fetchall()
        if len(rows) < limit:
            return len(rows)
        if not remembered:
            answers._totals.clear()
        return answers.total_of(connection, generation, search)

    print(f"query language (in process, CPU time: the previous statement, FTS5 as typed and no total | the language's, "
          f"read, planned and counted up to {answers.TOTAL_BOUND:,} (the total counted anew each time; "
          "remembered: the same search again on an unchanged index); through the gateway; notmuch count | search):")
    differences, language_only, remembered = [], [], []
    for query, old in LANGUAGE:
        # The ways taken in turn, each repetition: a burst of load from other work falls on all of them alike.
        # CPU time of this thread: on a shared machine wall time mostly measures the wait for the other work.
        ours, again, before, counted = [], [], [], []
        for _ in range(repeat):
            ours.append(cpu_timed(language, query))
            again.append(cpu_timed(language, query, True))
            if old is not None:
                before.append(cpu_timed(previous, old))
                counted.append(cpu_timed(previous, old, True))
        total = language(query)
        line = (f"  {query!r:34}: {('more than ' if total > answers.TOTAL_BOUND else '')}"
                f"{min(total, answers.TOTAL_BOUND):>5} | language {statistics.median(ours) * 1000:6.2f} ms "
                f"(remembered {statistics.median(again) * 1000:6.2f})")
        if old is not None:
            difference = statistics.median(ours) - statistics.median(before)
            differences.append(difference)
            remembered.append(statistics.median(again) - statistics.median(before))
            language_only.append(statistics.median(ours) - statistics.median(counted))
            line += (f", previous {statistics.median(before) * 1000:6.2f} ms (with its total "
                     f"{statistics.median(counted) * 1000:6.2f} ms), costs {difference * 1000:+6.2f} ms")
        if served:
            line += f" | served {summary(served[query])}"
        if config is not None and query.startswith("list:"):
            line += " | notmuch: no list: prefix"
        elif config is not None:
            theirs = notmuch(config, "count", query).stdout.strip()
            count = [timed(notmuch, config, "count", query)[0] for _ in range(max(3, repeat // 4))]
            search = [timed(notmuch, config, "search", "--limit=20", "--output=messages", query)[0]
                      for _ in range(max(3, repeat // 4))]
            line += (f" | notmuch counts {int(theirs):>5}: count {statistics.median(count) * 1000:6.1f} ms, search "
                     f"{statistics.median(search) * 1000:6.1f} ms")
        print(line)
    if differences:
        print(f"  the language and the total cost a search {statistics.median(differences) * 1000:+.2f} ms, the "
              f"language alone {statistics.median(language_only) * 1000:+.2f} ms, with the total remembered "
              f"{statistics.median(remembered) * 1000:+.2f} ms (medians over the queries the previous path took; "
              "target <= 2 ms)")
    connection.close()


def cpu_timed(function, *args) -> float:
    started = time.thread_time()
    function(*args)
    return time.thread_time() - started


async def _timed_async(function, *args):
    started = time.perf_counter()
    result = await function(*args)
    return time.perf_counter() - started, result


if __name__ == "__main__":
    sys.exit(main())
