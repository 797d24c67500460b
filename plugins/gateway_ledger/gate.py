"""How transactions, budget lines and accounts are described to the gate (`gateway.Traits`), and its verdicts.

A transaction is described by every account it posts to (`Traits.account`; with the projects its account's
`open` metadata names, and its parent accounts'), the file it is written in and the journal (`paths`), its payee
and narration as masked (`words`, so a `subjects` route takes them), and what names a project itself (`projects`:
each tag and link, `project:` metadata of the transaction or a posting). The core decides which routes take each
(`Gate.owners`); a thing belongs to every project any of its traits is routed to. A thing posting to several
accounts is asked about one account at a time, each with its other traits, and its owners are the union, which is
what the core gives for a thing with all those accounts (any one route of a project suffices).

A budget line is described by its account (with the account's projects), its file and journal, and what its
metadata and tags name; an account by its name, its `open` directive's metadata and its file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from gateway import GateMemo, Traits

if TYPE_CHECKING:  # the store is opened when a tool first runs, not when the gateway starts
    import sqlite3

_verdicts: GateMemo[Verdicts] = GateMemo(gates=4)


def parents(account: str) -> list[str]:
    """The account and each account above it: `Expenses:Law:Fees`, `Expenses:Law`, `Expenses`."""
    parts = account.split(":")
    return [":".join(parts[:n]) for n in range(len(parts), 0, -1)]


class Described:
    """The traits of the store's things, read once per store generation."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self.journals = {r["id"]: r["path"] for r in connection.execute("SELECT id, path FROM journals")}
        own: dict[tuple[int, str], list[str]] = {}
        for row in connection.execute("SELECT journal, name, projects FROM accounts"):
            own[(row["journal"], row["name"])] = json.loads(row["projects"])
        self._own = own

    def account_projects(self, journal: int, account: str) -> tuple[str, ...]:
        """The projects an account's `open` metadata names, its parents' included."""
        return tuple(p for a in parents(account) for p in self._own.get((journal, a), ()))

    def transaction(self, row: sqlite3.Row, accounts: Iterable[str]) -> list[Traits]:
        journal = row["journal"]
        common = Traits(paths=(row["file"], self.journals.get(journal, "")),
                        words=[w for w in (row["payee"], row["narration"]) if w],
                        projects=json.loads(row["projects"]))
        parts = [common]
        for account in dict.fromkeys(accounts):
            parts.append(Traits(account=account, projects=self.account_projects(journal, account)))
        return parts

    def budget(self, row: sqlite3.Row) -> list[Traits]:
        journal = row["journal"]
        return [Traits(paths=(row["file"], self.journals.get(journal, "")), projects=json.loads(row["projects"])),
                Traits(account=row["account"], projects=self.account_projects(journal, row["account"]))]

    def account(self, row: sqlite3.Row) -> list[Traits]:
        journal = row["journal"]
        return [Traits(paths=(row["file"], self.journals.get(journal, "")), projects=json.loads(row["projects"])),
                Traits(account=row["name"], projects=self.account_projects(journal, row["name"]))]


def whole(parts: list[Traits], gate) -> Traits:  # noqa: ANN001
    """One Traits for the person's `gateway access why` and `access list`, which take one per thing: the shared
    traits, with the account a route takes (a closed project's first), else the first account."""
    common, accounts = parts[0], [p for p in parts[1:] if p.account]
    chosen = accounts[0] if accounts else Traits()
    taken = [(gate.allows(gate.owners(p)), p) for p in accounts if gate.owners(p)]
    if taken:
        chosen = sorted(taken, key=lambda pair: pair[0])[0][1]
    projects = tuple(dict.fromkeys((*common.projects, *(p for a in accounts for p in a.projects))))
    return Traits(paths=common.paths, words=common.words, account=chosen.account, projects=projects)


class Verdicts:
    """Whether an agent may have each transaction, budget line and account (by store id), for one gate."""

    def __init__(self, gate, connection: sqlite3.Connection) -> None:  # noqa: ANN001
        described = Described(connection)
        memo: dict[Traits, frozenset[str]] = {}

        def owners(parts: list[Traits]) -> frozenset[str]:
            found: set[str] = set()
            for part in parts:
                got = memo.get(part)
                if got is None:
                    got = memo[part] = gate.owners(part)
                found |= got
            return frozenset(found)

        accounts: dict[int, list[str]] = {}
        for row in connection.execute("SELECT txn, account FROM postings"):
            accounts.setdefault(row[0], []).append(row[1])
        self.transactions: dict[int, bool] = {}
        for row in connection.execute("SELECT id, journal, file, payee, narration, projects FROM transactions"):
            self.transactions[row["id"]] = gate.allows(owners(described.transaction(row, accounts.get(row["id"], ()))))
        self.budgets = {row["id"]: gate.allows(owners(described.budget(row))) for row in connection.execute(
            "SELECT id, journal, file, account, projects FROM budgets")}
        self.accounts = {row["id"]: gate.allows(owners(described.account(row))) for row in connection.execute(
            "SELECT id, journal, file, name, projects FROM accounts")}


def verdicts(gate, connection: sqlite3.Connection, generation: tuple) -> Verdicts:  # noqa: ANN001
    """The verdicts for this gate and this store generation, remembered while neither changes."""
    return _verdicts.get(gate, lambda: Verdicts(gate, connection), key=generation)
