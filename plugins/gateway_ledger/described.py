"""What the person asks of the ledger's gate: a transaction's traits (`gateway access why ledger:txn/ID`) and every
transaction's, budget line's and account's (`gateway access list`, `gateway doctor`), read from the store."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

from gateway import PluginHost, Traits
from gateway_ledger import store
from gateway_ledger.gate import Described, whole

PREFIX = "ledger:txn/"
ACCOUNT_PREFIX = "ledger:account/"


def _reader(gateway: PluginHost) -> sqlite3.Connection | None:
    path = Path(gateway.folders.cache) / store.STORE_FILE
    if not path.exists():
        return None
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        connection.row_factory = sqlite3.Row
        connection.execute("SELECT 1 FROM transactions LIMIT 1")
    except sqlite3.Error:
        return None
    return connection


def _accounts_of(connection: sqlite3.Connection, txn: int) -> list[str]:
    return [r[0] for r in connection.execute("SELECT account FROM postings WHERE txn = ? ORDER BY seq", (txn,))]


def traits_of(gateway: PluginHost, address: str) -> Traits | None:
    """The traits of the transaction at `ledger:txn/ID` or of the account at `ledger:account/NAME`; None when not
    ours (or not in the store: the store is read by the tools' first call)."""
    if not address.startswith((PREFIX, ACCOUNT_PREFIX)):
        return None
    connection = _reader(gateway)
    if connection is None:
        return None
    try:
        described = Described(connection)
        if address.startswith(PREFIX):
            row = connection.execute("SELECT * FROM transactions WHERE key = ?", (address[len(PREFIX):],)).fetchone()
            if row is None:
                return None
            return whole(described.transaction(row, _accounts_of(connection, row["id"])), gateway.gate)
        name = address[len(ACCOUNT_PREFIX):]
        row = connection.execute("SELECT * FROM accounts WHERE name = ? OR shown = ? ORDER BY journal",
                                 (name, name)).fetchone()
        return whole(described.account(row), gateway.gate) if row is not None else None
    finally:
        connection.close()


def census(gateway: PluginHost) -> Iterator[tuple[str, Traits]]:
    """(`ledger transactions of <journal>`, traits) for every transaction, and likewise budget lines and accounts."""
    connection = _reader(gateway)
    if connection is None:
        return
    try:
        described = Described(connection)
        names = {journal: Path(path).name for journal, path in described.journals.items()}
        accounts: dict[int, list[str]] = {}
        for txn, account in connection.execute("SELECT txn, account FROM postings ORDER BY txn, seq"):
            accounts.setdefault(txn, []).append(account)
        for row in connection.execute("SELECT id, journal, file, payee, narration, projects FROM transactions"):
            yield (f"ledger transactions of {names.get(row['journal'], '?')}",
                   whole(described.transaction(row, accounts.get(row["id"], ())), gateway.gate))
        for row in connection.execute("SELECT * FROM budgets"):
            yield f"ledger budget lines of {names.get(row['journal'], '?')}", whole(described.budget(row), gateway.gate)
        for row in connection.execute("SELECT * FROM accounts"):
            yield f"ledger accounts of {names.get(row['journal'], '?')}", whole(described.account(row), gateway.gate)
    finally:
        connection.close()
