"""The plugin's own store: the journals' transactions, budgets and accounts, masked, in SQLite with FTS5.

Read incrementally: each journal is remembered with the signature (size and modification time) of every file
its tool read for it (the journal and what it includes); a call whose journals did not change reads nothing, and
a journal that changed is read again whole, in one transaction (its old rows go, its new ones come). What an
answer may show is stored masked (`numbers.masked_number`: the core's masks, then account numbers kept to their
last four), and the search index holds only that, so no search finds a masked number by its digits. The real
account names, tags and metadata that name a project are kept apart, for the gate only. When the masks change
(`MASKS_VERSION`) or the schema does, everything is read again.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable
from datetime import date
from pathlib import Path

from attrs import frozen

from gateway import MASKS_VERSION, Context, open_store
from gateway_ledger.journals import Bounds, JournalError, Read, kind_of
from gateway_ledger.journals import read as read_journal
from gateway_ledger.numbers import masked_account, masked_number

STORE_FILE = "ledger.sqlite3"
SCHEMA_VERSION = "1"
MAX_JOURNALS = 64

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS journals(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, kind TEXT NOT NULL,
    signature TEXT NOT NULL, error TEXT NOT NULL DEFAULT '', warnings TEXT NOT NULL DEFAULT '[]');
CREATE TABLE IF NOT EXISTS transactions(id INTEGER PRIMARY KEY, journal INTEGER NOT NULL, key TEXT UNIQUE NOT NULL,
    date TEXT NOT NULL, payee TEXT NOT NULL, narration TEXT NOT NULL, tags TEXT NOT NULL, meta TEXT NOT NULL,
    file TEXT NOT NULL, line INTEGER NOT NULL, projects TEXT NOT NULL, search TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS transactions_by_date ON transactions(date);
CREATE INDEX IF NOT EXISTS transactions_by_journal ON transactions(journal);
CREATE TABLE IF NOT EXISTS postings(txn INTEGER NOT NULL, seq INTEGER NOT NULL, account TEXT NOT NULL,
    shown TEXT NOT NULL, amount TEXT NOT NULL, commodity TEXT NOT NULL, meta TEXT NOT NULL, date TEXT NOT NULL,
    PRIMARY KEY(txn, seq)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS postings_by_date ON postings(date);
CREATE VIRTUAL TABLE IF NOT EXISTS transactions_fts USING fts5(search, content='transactions', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2');
CREATE TABLE IF NOT EXISTS budgets(id INTEGER PRIMARY KEY, journal INTEGER NOT NULL, date TEXT NOT NULL,
    account TEXT NOT NULL, shown TEXT NOT NULL, interval TEXT NOT NULL, amount TEXT NOT NULL,
    commodity TEXT NOT NULL, projects TEXT NOT NULL, file TEXT NOT NULL, line INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS accounts(id INTEGER PRIMARY KEY, journal INTEGER NOT NULL, name TEXT NOT NULL,
    shown TEXT NOT NULL, opened TEXT NOT NULL, closed TEXT NOT NULL, meta TEXT NOT NULL, projects TEXT NOT NULL,
    file TEXT NOT NULL, UNIQUE(journal, name));
"""

_lock = threading.Lock()


@frozen
class Found:
    """The journals configured and read, and those that could not be read (each with its sentence)."""

    journals: int
    problems: tuple[str, ...]
    warnings: tuple[str, ...]


def connect(ctx: Context) -> sqlite3.Connection:
    return open_store(Path(ctx.folders.cache), STORE_FILE, _SCHEMA, f"{SCHEMA_VERSION}/{MASKS_VERSION}",
                      emptied=("journals", "transactions", "postings", "budgets", "accounts"), fts=("transactions_fts",))


def journals_of(ctx: Context) -> list[Path]:
    """The configured journals, `~` expanded and relative paths taken from the config folder, at most MAX_JOURNALS."""
    found: list[Path] = []
    for value in list(ctx.settings.get("journals") or ())[:MAX_JOURNALS]:
        path = _resolve(ctx, str(value))
        if path is not None and path not in found:
            found.append(path)
    return found


def _resolve(ctx: Context, value: str) -> Path | None:
    """As `path_setting` reads a path: `~` the home, a relative path from the gateway's config folder."""
    if not value.strip():
        return None
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = Path(ctx.folders.config).parent.parent / path
    return path


def _stat(path: str) -> tuple[int, int] | None:
    try:
        status = Path(path).stat()
    except OSError:
        return None
    return status.st_size, status.st_mtime_ns


def signature(files: Iterable[str]) -> str:
    return json.dumps([[f, _stat(f)] for f in files])


def stored(connection: sqlite3.Connection) -> tuple:
    return tuple((r["path"], r["signature"]) for r in connection.execute("SELECT path, signature FROM journals"))


def refresh(ctx: Context, connection: sqlite3.Connection, bounds: Bounds, today: date | None = None) -> int:
    """Bring the store up to the configured journals: read what changed, forget what is no longer configured.
    Returns how many journals were read."""
    paths = journals_of(ctx)
    read = 0
    with _lock:
        known = {row["path"]: row for row in connection.execute("SELECT * FROM journals")}
        for gone in set(known) - {str(p) for p in paths}:
            with connection:
                _forget(connection, known[gone]["id"])
                connection.execute("DELETE FROM journals WHERE id = ?", (known[gone]["id"],))
        for path in paths:
            row = known.get(str(path))
            if row is not None:
                files = [f for f, _s in json.loads(row["signature"])]
                if signature(files) == row["signature"]:
                    continue
            _read_one(connection, path, bounds, today)
            read += 1
    return read


def found(connection: sqlite3.Connection, configured: list[Path]) -> Found:
    """The configured journals, each that could not be read with its tool's sentence, and what their tools warned of."""
    said = per_journal(connection, configured)
    problems = tuple(f"{path.name}: {said[str(path)][0]}" for path in configured if said.get(str(path), ("",))[0])
    warnings = tuple(f"{path.name}: {w}" for path in configured for w in said.get(str(path), ("",))[1:])
    return Found(len(configured), problems, warnings)


def per_journal(connection: sqlite3.Connection, configured: list[Path]) -> dict[str, tuple[str, ...]]:
    """Per journal read: its error ("" when it was read), then its tool's warnings."""
    rows = {r["path"]: r for r in connection.execute("SELECT path, error, warnings FROM journals")}
    return {str(p): (rows[str(p)]["error"], *json.loads(rows[str(p)]["warnings"])) for p in configured
            if str(p) in rows}


def _read_one(connection: sqlite3.Connection, path: Path, bounds: Bounds, today: date | None) -> None:
    error, result = "", None
    try:
        result = read_journal(path, bounds, today)
    except JournalError as failed:
        error = str(failed)
    files = list(result.files) if result is not None else [str(path)]
    if str(path) not in files:
        files.insert(0, str(path))
    with connection:
        row = connection.execute("SELECT id FROM journals WHERE path = ?", (str(path),)).fetchone()
        warnings = json.dumps([masked_number(w) for w in (result.warnings if result else ())])
        if row is None:
            journal = connection.execute(
                "INSERT INTO journals(path, kind, signature, error, warnings) VALUES (?, ?, ?, ?, ?)",
                (str(path), kind_of(path), signature(files), masked_number(error), warnings)).lastrowid
        else:
            journal = row["id"]
            _forget(connection, journal)
            connection.execute("UPDATE journals SET kind = ?, signature = ?, error = ?, warnings = ? WHERE id = ?",
                               (kind_of(path), signature(files), masked_number(error), warnings, journal))
        if result is not None:
            _add(connection, journal, str(path), result)


def _key(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8", "replace")).hexdigest()[:16]


def _projects(tags: Iterable[str], meta: Iterable[tuple[str, str]]) -> list[str]:
    """What names a project itself: each tag and link (a project is named by its id), and `project:` metadata."""
    named = [t for t in tags if t]
    named += [v.strip() for k, v in meta if k.strip().casefold() == "project" and v.strip()]
    return sorted(set(named))


def _masked_meta(meta: Iterable[tuple[str, str]]) -> list[list[str]]:
    return [[masked_number(k), masked_number(v)] for k, v in meta]


def _add(connection: sqlite3.Connection, journal: int, path: str, result: Read) -> None:
    seen: dict[str, int] = {}
    last = connection.execute("SELECT COALESCE(MAX(id), 0) FROM transactions").fetchone()[0]
    rows, postings = [], []
    for number, txn in enumerate(result.transactions, start=last + 1):
        content = _key(path, txn.date, txn.payee, txn.narration,
                       *(f"{p.account} {p.amount} {p.commodity}" for p in txn.postings))
        occurrence = seen.get(content, 0)
        seen[content] = occurrence + 1
        key = content if not occurrence else _key(content, occurrence)
        payee, narration = masked_number(txn.payee), masked_number(txn.narration)
        meta = _masked_meta(txn.meta)
        names = _projects((*txn.tags, *txn.links), [*txn.meta, *(m for p in txn.postings for m in p.meta)])
        shown_accounts = [masked_account(p.account) for p in txn.postings]
        words = [payee, narration, *shown_accounts, *(f"#{t}" for t in txn.tags), *(f"^{t}" for t in txn.links),
                 *(f"{k} {v}" for k, v in meta)]
        rows.append((number, journal, key, txn.date, payee, narration,
                     json.dumps({"tags": list(txn.tags), "links": list(txn.links)}), json.dumps(meta), txn.file,
                     txn.line, json.dumps(names), " ".join(words)))
        for seq, p in enumerate(txn.postings):
            postings.append((number, seq, p.account, shown_accounts[seq], str(p.amount), p.commodity,
                             json.dumps(_masked_meta(p.meta)), txn.date))
    connection.executemany("INSERT INTO transactions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    connection.executemany("INSERT INTO postings VALUES (?, ?, ?, ?, ?, ?, ?, ?)", postings)
    connection.execute("INSERT INTO transactions_fts(rowid, search) SELECT id, search FROM transactions "
                       "WHERE id > ?", (last,))
    connection.executemany(
        "INSERT INTO budgets(journal, date, account, shown, interval, amount, commodity, projects, file, line) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(journal, b.date, b.account, masked_account(b.account), b.interval, str(b.amount), b.commodity,
          json.dumps(_projects(b.tags, b.meta)), b.file, b.line) for b in result.budgets])
    accounts = {a.name: a for a in result.accounts}
    for txn in result.transactions:
        for p in txn.postings:
            accounts.setdefault(p.account, None)  # type: ignore[arg-type]
    connection.executemany(
        "INSERT OR IGNORE INTO accounts(journal, name, shown, opened, closed, meta, projects, file) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(journal, name, masked_account(name), a.opened if a else "", a.closed if a else "",
          json.dumps(_masked_meta(a.meta) if a else []), json.dumps(_projects((), a.meta) if a else []),
          (a.file if a else "") or path) for name, a in accounts.items()])


def _forget(connection: sqlite3.Connection, journal: int) -> None:
    connection.execute("INSERT INTO transactions_fts(transactions_fts, rowid, search) SELECT 'delete', id, search "
                       "FROM transactions WHERE journal = ?", (journal,))
    connection.execute("DELETE FROM postings WHERE txn IN (SELECT id FROM transactions WHERE journal = ?)", (journal,))
    for table in ("transactions", "budgets", "accounts"):
        connection.execute(f"DELETE FROM {table} WHERE journal = ?", (journal,))  # noqa: S608 (fixed names)
