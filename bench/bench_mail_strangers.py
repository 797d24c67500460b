"""What reading a stranger's message costs at the parser's bounds: time and peak memory per kind (run by hand).

    .venv/bin/python bench/bench_mail_strangers.py            # every kind, each in a fresh process
    .venv/bin/python bench/bench_mail_strangers.py --work DIR --keep

Each kind is written once into a work folder, then `parse.parse_file` reads it in a process of its own, so that
each peak (the growth of VmHWM over the process's imports) is that file's alone. Beside each, the same file
read by the standard library's `email.message_from_bytes` with no bound, where that ends at all (the nested
kinds end in RecursionError there; the bomb takes minutes and gigabytes and is left out unless --unbounded, as
are the 2,000,000 header fields).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HEAD = ("From: Mallory <mallory@example.net>\r\nTo: pat@example.org\r\nSubject: {subject}\r\n"
        "Message-ID: <{subject}@example.net>\r\nDate: Tue, 01 Dec 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\n")


def bomb(parts: int = 450_000) -> bytes:
    part = b"--B\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=a\r\n\r\nx\r\n"
    return (HEAD.format(subject="bomb") + "Content-Type: multipart/mixed; boundary=B\r\n\r\n").encode() + \
        part * parts + b"--B--\r\n"


def attachment(megabytes: int) -> bytes:
    data = base64.encodebytes(os.urandom(megabytes * 1024 * 1024 * 3 // 4))
    return (HEAD.format(subject=f"attachment{megabytes}") + "Content-Type: multipart/mixed; boundary=B\r\n\r\n"
            "--B\r\nContent-Type: text/plain\r\n\r\nSee the file.\r\n--B\r\nContent-Type: application/pdf\r\n"
            "Content-Transfer-Encoding: base64\r\nContent-Disposition: attachment; filename=x.pdf\r\n\r\n").encode() \
        + data + b"\r\n--B--\r\n"


def text(megabytes: int) -> bytes:
    line = b"All work and no play makes a long message for the gateway.\r\n"
    return (HEAD.format(subject=f"text{megabytes}") + "\r\n").encode() + line * (megabytes * 1024 * 1024 // len(line))


def nested(kind: str, levels: int = 1100) -> bytes:
    if kind == "multipart":
        opening = "".join(f"Content-Type: multipart/mixed; boundary=b{i}\r\n\r\n--b{i}\r\n" for i in range(levels))
        closing = "".join(f"\r\n--b{i}--\r\n" for i in reversed(range(levels)))
        return (HEAD.format(subject="nested") + opening + "Content-Type: text/plain\r\n\r\ndeep" + closing).encode()
    opening = "".join("Content-Type: message/rfc822\r\n\r\nFrom: x@example.net\r\n" for _ in range(levels))
    return (HEAD.format(subject="messages") + opening + "\r\ndeep\r\n").encode()


def fields(count: int = 2_000_000) -> bytes:
    return HEAD.format(subject="fields").encode() + b"X-H: y\r\n" * count + b"\r\nThe text.\r\n"


def short_lines(count: int = 8_000_000) -> bytes:
    return (HEAD.format(subject="lines") + "\r\n").encode() + b"a\n" * count


KINDS = {
    "bomb of 450,000 parts (48 MB)": lambda: bomb(),
    "1,100 nested multiparts": lambda: nested("multipart"),
    "1,100 nested message/rfc822": lambda: nested("rfc822"),
    "one 12 MB attachment": lambda: attachment(12),
    "one 30 MB attachment": lambda: attachment(30),
    "a 15 MB text": lambda: text(15),
    "a 20 MB text": lambda: text(20),
    "2,000,000 header fields (16 MB)": lambda: fields(),
    "8,000,000 short lines (16 MB)": lambda: short_lines(),
}

# Peaks read from /proc (VmHWM): ru_maxrss is kept across exec, so a child started by this process would carry
# this process's own peak (the files it wrote) as its start.
MEASURE = """
import json, sys, time
from pathlib import Path
from gateway_mail.mail import parse
import email, email.policy
def peak():
    line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith("VmHWM:"))
    return int(line.split()[1])
base = peak()
started = time.perf_counter()
how = sys.argv[2]
try:
    if how == "bounded":
        found = parse.parse_file(Path(sys.argv[1])).unreadable or "read whole"
    else:
        message = email.message_from_bytes(Path(sys.argv[1]).read_bytes(), policy=email.policy.default)
        message.get_body(); list(message.iter_attachments())
        found = "read whole"
except Exception as error:
    found = type(error).__name__
print(json.dumps({"seconds": time.perf_counter() - started, "mb": (peak() - base) / 1024, "found": found}))
"""


def measure(path: Path, how: str) -> dict:
    done = subprocess.run([sys.executable, "-c", MEASURE, str(path), how], capture_output=True, text=True,
                          timeout=1800)
    if done.returncode:
        return {"seconds": float("nan"), "mb": float("nan"), "found": done.stderr.strip().splitlines()[-1][:60]}
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--unbounded", action="store_true", help="the bomb read with no bound too (minutes, GBs)")
    arguments = parser.parse_args()
    work = arguments.work or Path(tempfile.mkdtemp(prefix="strangers-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        print(f"{'kind':34} {'bounded s':>9} {'MB':>6}  {'what was read':46} {'unbounded s':>11} {'MB':>6}  result")
        for number, (kind, make) in enumerate(KINDS.items()):
            path = work / f"{number}.eml"
            if not path.exists():
                path.write_bytes(make())
            bounded = measure(path, "bounded")
            plain = (measure(path, "unbounded") if arguments.unbounded or not kind.startswith(("bomb", "2,000,000"))
                     else {"seconds": float("nan"), "mb": float("nan"), "found": "not run (--unbounded)"})
            print(f"{kind:34} {bounded['seconds']:9.2f} {bounded['mb']:6.0f}  {bounded['found'][:46]:46} "
                  f"{plain['seconds']:11.2f} {plain['mb']:6.0f}  {plain['found']}")
    finally:
        if not arguments.keep and arguments.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
