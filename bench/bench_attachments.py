"""Benchmark of the attachments' text in the mail index, and of read_attachment (run by hand).

    .venv/bin/python bench/bench_attachments.py                    # the SpamAssassin corpus and 400 generated
    .venv/bin/python bench/bench_attachments.py --generated 100 --repeat 1

Two Maildirs: the SpamAssassin corpus (6,046 messages, from ../shared/tools/fetch-spamassassin.sh or --corpus),
and --generated messages each carrying made attachments (a 3-page invoice PDF with reportlab, a 20-page PDF, a
Word letter, an invitation; one kind per message, in turn). Each is indexed from nothing in one process (the
index's own `refresh`, a tool call's path: parse, mask, extract, write), with the attachments' text and without it
(`index.indexed_attachments` replaced by one giving ""), --repeat times each, alternating; the medians and their
ratio are printed side by side, with the machine's load average before and after. Then read_attachment through
the gateway's whole call path (make_gateway: arguments, gate, masks, audit line) on a PDF, a 200-page PDF (cut at
50 pages) and a Word letter: median and p95.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FETCH = Path("/work/shared/tools/fetch-spamassassin.sh")
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def corpus_maildir(corpus: Path, root: Path) -> int:
    inbox = root / "INBOX"
    for sub in ("cur", "new", "tmp"):
        (inbox / sub).mkdir(parents=True, exist_ok=True)
    files = sorted(p for p in corpus.rglob("*.txt") if p.is_file())
    for number, path in enumerate(files):
        shutil.copyfile(path, inbox / "cur" / f"{1700000000 + number}.M{number}P1.bench:2,S")
    return len(files)


def generated_maildir(root: Path, count: int) -> Counter:
    from gateway_mail.mail import sample

    made = [
        ("invoice.pdf", "application/pdf", sample.pdf([
            "Invoice 2026-118\nFor pruning the quince trees", "Hours: 6\nRate: 40 EUR", "Total: 240 EUR"])),
        ("report.pdf", "application/pdf", sample.pdf([f"Page {n} of the orchard report\n" + "soil and rain " * 8
                                                      for n in range(1, 21)])),
        ("letter.docx", DOCX, sample.docx(["Dear Pat,"] + ["The harvest went well this year."] * 30,
                                          [["Crate", "Weight"], ["A", "12 kg"], ["B", "9 kg"]])),
        ("invite.ics", "text/calendar", sample.invitation("Budget review", "2026-12-03 14:00", "2026-12-03 15:00")),
    ]
    kinds: Counter = Counter()
    inbox = root / "INBOX"
    for number in range(count):
        name, kind, data = made[number % len(made)]
        kinds[name] += 1
        sample.deliver(inbox, sample.with_attachments(
            [(name, kind, data)], subject=f"Papers {number}", message_id=f"{number}.attach@example.org",
            body="See the attached file.", date=1_700_000_000 + number), name=f"{1700000000 + number}.M{number}P1.g")
    return kinds


def index_once(root: Path, work: Path, with_text: bool) -> tuple[float, int]:
    """Seconds to index the Maildir from nothing in this process, and the messages indexed."""
    from gateway_mail.mail import attachments, index
    from gateway_mail.mail.accounts import Account

    path = work / f"index-{time.monotonic_ns()}.sqlite"
    connection = index.connect(path)
    account = Account(name="bench", maildir=root)
    index.indexed_attachments = attachments.indexed if with_text else (lambda _parsed: "")
    try:
        started = time.perf_counter()
        index.refresh(connection, [account])
        seconds = time.perf_counter() - started
        count = connection.execute("SELECT count(*) FROM messages").fetchone()[0]
    finally:
        index.indexed_attachments = attachments.indexed
        connection.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    return seconds, count


def attachment_census(root: Path) -> Counter:
    """The corpus's attachments by what read_attachment reads them as ("" : name, type and size only)."""
    from gateway_mail.mail import attachments, parse

    found: Counter = Counter()
    for path in sorted((root / "INBOX" / "cur").iterdir()):
        for attachment in parse.parse_file(path).attachments:
            found[attachments.kind_of(attachment.name, attachment.type) or f"not read ({attachment.type})"] += 1
    return found


def rates(label: str, root: Path, work: Path, repeat: int) -> None:
    runs: dict[bool, list[float]] = {True: [], False: []}
    count = 0
    for _ in range(repeat):
        for with_text in (False, True):
            seconds, count = index_once(root, work, with_text)
            runs[with_text].append(seconds)
    without, with_ = statistics.median(runs[False]), statistics.median(runs[True])
    print(f"{label}: {count:,} messages; index from nothing, one process, median of {repeat}:")
    print(f"  without attachments' text: {without:.2f} s, {count / without:,.0f} messages/s")
    print(f"  with attachments' text:    {with_:.2f} s, {count / with_:,.0f} messages/s  "
          f"(x{with_ / without:.2f} the time)")


def read_calls(work: Path, repeat: int) -> None:
    import gateway_mail
    from gateway_mail.mail import sample

    from gateway.testing import make_gateway

    home = work / "home"
    root = home / "Mail" / "personal"
    files = [("invoice.pdf", "application/pdf", sample.pdf(["Invoice 77", "Terms", "Total 120 EUR"])),
             ("long.pdf", "application/pdf", sample.pdf([f"Page {n} of the long report" for n in range(200)])),
             ("letter.docx", DOCX, sample.docx(["Dear Pat,"] + ["The harvest went well."] * 200))]
    sample.deliver(root / "INBOX", sample.with_attachments(files, message_id="read@example.org"))
    served = make_gateway([gateway_mail], home=home, config=sample.config(root))
    served.call("read_message", {"address": "mid:read@example.org"})  # the first index, imports
    for part, name in enumerate(("invoice.pdf (3 pages)", "long.pdf (200 pages, 50 read)", "letter.docx"), 1):
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            answer = served.call("read_attachment", {"address": "mid:read@example.org", "part": part})
            times.append(time.perf_counter() - started)
            assert not answer.is_error, answer.text
        ordered = sorted(times)
        p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
        print(f"  read_attachment {name}: median {statistics.median(times) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, help="the SpamAssassin corpus folder (else fetched)")
    parser.add_argument("--generated", type=int, default=400, help="generated messages with attachments")
    parser.add_argument("--repeat", type=int, default=3, help="index runs of each kind")
    parser.add_argument("--reads", type=int, default=20, help="read_attachment calls of each attachment")
    arguments = parser.parse_args()
    corpus = arguments.corpus or Path(subprocess.run(["bash", str(FETCH)], capture_output=True, text=True,
                                                     check=True).stdout.strip())
    print(f"load average before: {' '.join(f'{v:.1f}' for v in os.getloadavg())} ({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory(prefix="bench-attachments-") as folder:
        work = Path(folder)
        os.environ.setdefault("HOME", str(work))
        spam = work / "spamassassin"
        corpus_maildir(corpus, spam)
        census = attachment_census(spam)
        print(f"SpamAssassin corpus attachments: {sum(census.values())}: "
              + ", ".join(f"{kind} {n}" for kind, n in census.most_common()))
        rates("SpamAssassin corpus", spam, work, arguments.repeat)
        made = work / "generated"
        kinds = generated_maildir(made, arguments.generated)
        rates(f"generated ({', '.join(f'{n} {k}' for k, n in kinds.items())})", made, work, arguments.repeat)
        read_calls(work, arguments.reads)
    print(f"load average after: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    sys.exit(main())
