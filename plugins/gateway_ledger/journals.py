"""Journals read by their own tools: beancount's loader (in a child process) and the `hledger` program's JSON.

Each journal is read whole or not at all: a syntax error, a file past the size bound, a read past the time bound,
or output that is not what the tool documents fails that journal alone, with a sentence naming the tool's own
error. Nothing here decides what is shown: `Read` is the journal as its tool understood it, in one shape for both
formats.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from attrs import field, frozen

BEANCOUNT_SUFFIXES = (".beancount", ".bean")
OUTPUT_FACTOR, MAX_OUTPUT = 40, 2 << 30
_LAUNCHER = ("import os, resource, sys; limit = int(sys.argv[1]); "
             "resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)); os.execv(sys.argv[2], sys.argv[2:])")
# The errors after which beancount's reading of a journal cannot be trusted whole (a line it could not parse may
# be the one naming a transaction's project): the journal is not read. Others (a failed balance assertion) are said.
FATAL_BEANCOUNT = {"ParserError", "ParserSyntaxError", "LexerError", "LoadError"}
# hledger's forecast is asked for goals in these years around today (documented in the README).
FORECAST_YEARS_BACK, FORECAST_YEARS_AHEAD = 5, 1
HLEDGER_NEEDED = ("reading an hledger or ledger journal needs the hledger program, which is not installed (Debian "
                  "and Ubuntu: apt-get install hledger; others: hledger.org); no maintained Python library reads "
                  "that format")


class JournalError(Exception):
    """A journal that cannot be read; the message says why and what to do."""


@frozen
class Bounds:
    max_bytes: int
    max_seconds: float
    max_transactions: int
    max_memory: int = 4 << 30


@frozen
class Posting:
    account: str
    amount: Decimal
    commodity: str
    meta: tuple[tuple[str, str], ...] = ()


@frozen
class Transaction:
    date: str
    payee: str
    narration: str
    tags: tuple[str, ...]
    links: tuple[str, ...]
    meta: tuple[tuple[str, str], ...]
    file: str
    line: int
    postings: tuple[Posting, ...]


@frozen
class BudgetLine:
    """A budget goal: beancount's `custom "budget"` (a rule in force from its date, `interval` set) or one of
    hledger's periodic transactions' postings as hledger generated it for a date (`interval` empty)."""

    date: str
    account: str
    interval: str
    amount: Decimal
    commodity: str
    meta: tuple[tuple[str, str], ...]
    tags: tuple[str, ...]
    file: str
    line: int


@frozen
class Account:
    name: str
    opened: str = ""
    closed: str = ""
    meta: tuple[tuple[str, str], ...] = ()
    file: str = ""


@frozen
class Read:
    kind: str  # "beancount" or "hledger"
    files: tuple[str, ...]
    transactions: tuple[Transaction, ...] = ()
    budgets: tuple[BudgetLine, ...] = ()
    accounts: tuple[Account, ...] = ()
    warnings: tuple[str, ...] = field(default=())


def kind_of(path: Path) -> str:
    return "beancount" if path.suffix.lower() in BEANCOUNT_SUFFIXES else "hledger"


def read(path: Path, bounds: Bounds, today: date | None = None) -> Read:
    """The journal as its own tool reads it; raises JournalError with a sentence when it cannot be read whole."""
    try:
        size = path.stat().st_size
    except OSError as error:
        raise JournalError(f"cannot be opened ({error.strerror or error})") from None
    if not path.is_file():
        raise JournalError("is not a file")
    if size > bounds.max_bytes:
        raise JournalError(f"is {size >> 20} MiB, over the bound of {bounds.max_bytes >> 20} MiB (max_file_mb)")
    try:
        if kind_of(path) == "beancount":
            return _beancount(path, bounds)
        return _hledger(path, bounds, today or date.today())
    except JournalError as error:
        # The tools write the journal's whole path; the answer names its file (the folders are the person's).
        raise JournalError(str(error).replace(f"{path.parent}{os.sep}", "")) from None


def _run(command: list[str], bounds: Bounds, tool: str, output_limit: int) -> bytes:
    """Run a reader, bounded in time and in what it may write (its output goes to a temporary file that the system
    stops it from growing past `output_limit`); its own error sentence when it fails."""

    with tempfile.TemporaryFile() as output:
        try:
            # The bound is set by a small launcher that then becomes the reader (exec): a preexec_fn is not safe in
            # the server, whose refresh runs on a thread.
            launcher = [sys.executable, "-c", _LAUNCHER, str(output_limit), *command]
            done = subprocess.run(launcher, stdout=output, stderr=subprocess.PIPE, timeout=bounds.max_seconds,
                                  stdin=subprocess.DEVNULL, env={**os.environ, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"})
        except subprocess.TimeoutExpired:
            raise JournalError(f"{tool} took longer than {bounds.max_seconds:g} s to read it (max_seconds)") from None
        except OSError as error:
            raise JournalError(f"{tool} could not be run ({error.strerror or error})") from None
        if done.returncode == -signal.SIGXFSZ or output.tell() >= output_limit:
            raise JournalError(f"{tool}'s reading of it is larger than {output_limit >> 20} MiB, the bound for a "
                               "journal of its size")
        if done.returncode != 0:
            said = " ".join(done.stderr.decode("utf-8", "replace").split())
            said = said.removeprefix("hledger: ").removeprefix("Error: ")
            raise JournalError(f"{tool} says: {said[:400] or 'it failed with code ' + str(done.returncode)}")
        output.seek(0)
        return output.read()


def _output_limit(path: Path) -> int:
    """What a reader may write for a journal: many times its size (hledger's JSON is some 17 times the journal),
    never more than MAX_OUTPUT."""
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    return min(OUTPUT_FACTOR * size + (16 << 20), MAX_OUTPUT)


def _pairs(meta: Any) -> tuple[tuple[str, str], ...]:
    if isinstance(meta, dict):
        return tuple((str(k), str(v)) for k, v in meta.items())
    return tuple((str(k), str(v)) for k, v in meta or ())


def _decimal(text: str) -> Decimal:
    try:
        return Decimal(text)
    except (InvalidOperation, ValueError):
        return Decimal(0)


def _beancount(path: Path, bounds: Bounds) -> Read:
    output = _run([sys.executable, "-m", "gateway_ledger.bean_reader", str(path), str(bounds.max_memory)], bounds,
                  "beancount", _output_limit(path))
    try:
        found = json.loads(output)
    except ValueError:
        raise JournalError("beancount's reader gave no readable answer") from None
    errors = found.get("errors") or []
    fatal = [e for e in errors if e[0] in FATAL_BEANCOUNT]
    if fatal:
        kind, file, line, message = fatal[0]
        where = f"{Path(file).name}:{line}" if file else path.name
        more = f" ({len(fatal)} errors; bean-check {path.name} lists them)" if len(fatal) > 1 else ""
        raise JournalError(f"beancount says: {where}: {message}{more}")
    if len(found.get("transactions") or ()) > bounds.max_transactions:
        raise JournalError(f"holds more than {bounds.max_transactions:,} transactions (max_transactions)")
    warnings = tuple(f"beancount says: {Path(f).name}:{line}: {message}" for _k, f, line, message in errors[:20])
    transactions = tuple(
        Transaction(d, payee, narration, tuple(tags), tuple(links), _pairs(meta), file, line,
                    tuple(Posting(a, _decimal(n), c, _pairs(m)) for a, n, c, m in postings))
        for d, payee, narration, tags, links, meta, file, line, postings in found.get("transactions") or ())
    budgets = tuple(BudgetLine(d, account, interval.strip().lower(), _decimal(n), c, _pairs(meta), (), file, line)
                    for d, account, interval, n, c, meta, file, line in found.get("budgets") or ())
    accounts = tuple(Account(name, a.get("opened") or "", a.get("closed") or "", _pairs(a.get("meta")),
                             a.get("file") or "") for name, a in (found.get("accounts") or {}).items())
    return Read("beancount", tuple(found.get("files") or (str(path),)), transactions, budgets, accounts, warnings)


def _quantity(amounts: list[dict]) -> tuple[Decimal, str]:
    if not amounts:
        return Decimal(0), ""
    first = amounts[0]
    quantity = first.get("aquantity") or {}
    mantissa, places = quantity.get("decimalMantissa"), quantity.get("decimalPlaces")
    number = Decimal(mantissa).scaleb(-int(places)) if mantissa is not None and places is not None else Decimal(0)
    return number, str(first.get("acommodity") or "")


def _hledger_tags(tags: list) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """hledger's tags: a tag with no value (`vault:`) is a tag; one with a value is metadata; hidden ones dropped."""
    plain, meta = [], []
    for name, value in tags or ():
        if str(name).startswith("_"):
            continue
        if value:
            meta.append((str(name), str(value)))
        else:
            plain.append(str(name))
    return tuple(plain), tuple(meta)


def _hledger(path: Path, bounds: Bounds, today: date) -> Read:
    program = shutil.which("hledger")
    if program is None:
        raise JournalError(HLEDGER_NEEDED)
    first, last = date(today.year - FORECAST_YEARS_BACK, 1, 1), date(today.year + FORECAST_YEARS_AHEAD + 1, 1, 1)
    output = _run([program, "-f", str(path), "print", f"--forecast={first}..{last}", "-O", "json"], bounds,
                  "hledger", _output_limit(path))
    try:
        found = json.loads(output)
    except ValueError:
        raise JournalError("hledger gave no readable JSON") from None
    if not isinstance(found, list):
        raise JournalError("hledger gave JSON of another shape than print's")
    if len(found) > bounds.max_transactions:
        raise JournalError(f"holds more than {bounds.max_transactions:,} transactions (max_transactions)")
    files: dict[str, None] = {str(path): None}
    transactions, budgets = [], []
    for item in found:
        raw_tags = item.get("ttags") or []
        generated = any(str(name) == "_generated-transaction" for name, _v in raw_tags)
        tags, meta = _hledger_tags(raw_tags)
        where = (item.get("tsourcepos") or [{}])[0] if isinstance(item.get("tsourcepos"), list) else {}
        file, line = str(where.get("sourceName") or path), int(where.get("sourceLine") or 0)
        if not generated:
            files[file] = None
        description = str(item.get("tdescription") or "")
        payee, bar, note = description.partition("|")
        postings = []
        for posting in item.get("tpostings") or ():
            number, commodity = _quantity(posting.get("pamount") or [])
            posting_tags, posting_meta = _hledger_tags(posting.get("ptags") or [])
            postings.append(Posting(str(posting.get("paccount") or ""), number, commodity,
                                    posting_meta + tuple((t, "") for t in posting_tags)))
        if generated:
            for posting in postings:
                if posting.account.split(":", 1)[0].casefold() in ("assets", "liabilities", "equity"):
                    continue  # the periodic transaction's balancing side: not a category
                budgets.append(BudgetLine(str(item.get("tdate")), posting.account, "", posting.amount,
                                          posting.commodity, meta, tags, file, line))
            continue
        transactions.append(Transaction(str(item.get("tdate")), payee.strip() if bar else "",
                                        note.strip() if bar else description.strip(), tags, (), meta, file, line,
                                        tuple(postings)))
    return Read("hledger", tuple(files), tuple(transactions), tuple(budgets))
