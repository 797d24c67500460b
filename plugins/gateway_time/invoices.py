"""Invoices: the PDFs read in a bounded process of their own, and what an invoice's status is.

Each PDF is handed to `gateway_time.reader`, a separate Python process with an address-space limit; when one file
takes longer than `max_seconds`, the process is killed, that file is said not read, and a new process reads the
next. So a hostile file costs at most its bounds and fails alone, and the gateway's own process never parses it.

The status, decided so (the factur-x XML carries no "paid" mark of its own, and the person's books are another
plugin's):

- **paid** when the PDF lies in a folder named `paid` anywhere below the invoices folder (the person moves a paid
  invoice there; the name is the setting `paid_folder`), or when its XML says nothing is left to pay (amount due
  for payment, BT-115, zero while the total, BT-112, is not);
- **overdue** when not paid and its due date (BT-9) is before today in the person's zone;
- **unpaid** otherwise (an invoice without a due date is never overdue).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from attrs import frozen

MAX_INVOICES = 20_000


@frozen
class Bounds:
    max_file_mb: int = 20
    max_seconds: float = 20.0
    max_memory_mb: int = 1024


def pdfs_in(folder: Path | None) -> list[Path]:
    """The PDFs under the folder, at any depth (hidden folders left out), at most MAX_INVOICES."""
    if folder is None or not folder.is_dir():
        return []
    found: list[Path] = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.lower().endswith(".pdf") and not name.startswith("."):
                found.append(Path(root) / name)
                if len(found) >= MAX_INVOICES:
                    return found
    return found


def read_pdfs(paths: Iterable[Path], bounds: Bounds) -> Iterator[tuple[Path, dict[str, Any] | None, str]]:
    """(path, fields, "") for each PDF read, (path, None, why) for each that could not be."""
    pending = list(paths)
    while pending:
        worker = _Worker(bounds)
        try:
            while pending:
                path = pending[0]
                answer = worker.ask(path)
                pending.pop(0)
                if answer is None:
                    worker.close(kill=True)
                    yield path, None, (f"took more than {bounds.max_seconds:g} s to read, or its reader stopped "
                                       "(max_seconds, max_memory_mb): a PDF or XML bomb, or a very large file; it "
                                       "was not read")
                    break  # that worker is gone: a new one reads the rest
                if answer.get("ok") and isinstance(answer.get("invoice"), dict):
                    yield path, answer["invoice"], ""
                else:
                    yield path, None, str(answer.get("error") or "could not be read")
        finally:
            worker.close()


class _Worker:
    """One reader process, asked one path at a time, each answer awaited at most `max_seconds`."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds
        limits = json.dumps({"max_file_mb": bounds.max_file_mb, "max_memory_mb": bounds.max_memory_mb})
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gateway_time.reader", limits], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, close_fds=True)
        self.buffer = b""
        self.started = False

    def ask(self, path: Path) -> dict[str, Any] | None:
        process = self.process
        try:
            assert process.stdin is not None
            process.stdin.write(os.fsencode(str(path)).replace(b"\n", b"") + b"\n")
            process.stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        # The reader's start-up (importing pypdf, lxml and factur-x) is paid by its first file only.
        deadline = time.monotonic() + self.bounds.max_seconds + (0 if self.started else 10)
        self.started = True
        out = process.stdout
        assert out is not None
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([out], [], [], left)
            if not ready:
                return None
            chunk = os.read(out.fileno(), 1 << 16)
            if not chunk:
                return None  # the reader died (out of memory, killed)
            self.buffer += chunk
            if len(self.buffer) > 4 << 20:
                return None
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            answer = json.loads(line)
        except ValueError:
            return None
        return answer if isinstance(answer, dict) else None

    def close(self, kill: bool = False) -> None:
        process = self.process
        if process.poll() is not None and process.stdout is None:
            return
        if kill:
            process.kill()
        try:
            if process.stdin:
                process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout:
            process.stdout.close()
            process.stdout = None


def amount(value: str) -> Decimal | None:
    try:
        return Decimal(value) if value else None
    except InvalidOperation:
        return None


def in_paid_folder(path: Path, folder: Path, paid_folder: str) -> bool:
    """Does the PDF lie in a folder of that name (without case) below the invoices folder?"""
    try:
        parts = path.relative_to(folder).parts[:-1]
    except ValueError:
        parts = path.parts[:-1]
    wanted = paid_folder.strip().casefold()
    return bool(wanted) and any(part.casefold() == wanted for part in parts)


def status(fields: dict[str, Any], paid_by_folder: bool, today: date) -> str:
    """`paid`, `overdue` or `unpaid`, by the rule in this module's docstring."""
    if paid_by_folder:
        return "paid"
    due_amount, total = amount(fields.get("amount_due", "")), amount(fields.get("total", ""))
    if due_amount is not None and due_amount == 0 and total:
        return "paid"
    due = fields.get("due") or ""
    try:
        if due and date.fromisoformat(due) < today:
            return "overdue"
    except ValueError:
        pass
    return "unpaid"
