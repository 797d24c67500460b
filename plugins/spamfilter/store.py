"""The model file: SQLite, a row per token, looked up by the tokens of the message at hand rather than loaded whole.

Tables: `meta` (format, message counts, when trained, the cutoffs of the config that wrote it), `tokens` (token,
spam, ham; WITHOUT ROWID, so a lookup is one B-tree descent) and `trained` (message key, label: so a label can
take back a message's earlier training). A model may also record the tokenizer's version it was counted with
(`tokens` in `meta`) and, in a table `sources` (message key, digest, counted), the digest of the bytes each trained
message was counted from and whether its tokens are in the counts: the AI shield's model of the person's labels
writes both (so that a label is taken back exactly and the model counted again when the tokenizer changes); the
spam plugin's model writes neither, and its files are as they were.

It is written whole under a temporary name (0600, one transaction, the file fsynced), then renamed over the old one:
a reader has the old model or the new one, never half of one, and a reader that opened the old file keeps reading it
(it is never changed in place, so it is opened `immutable`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterable, Mapping
from urllib.parse import quote

# No pathlib: a delivery rule's process would pay for its import; paths are str or os.PathLike here.
PathLike = str | os.PathLike

FORMAT = 2
NAME = "model.sqlite"
LOOKUP_BATCH = 500  # tokens per SELECT (SQLite's bound on parameters is 32,766 since 3.32, 999 before)

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE tokens (token TEXT PRIMARY KEY, spam INTEGER NOT NULL, ham INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE trained (key TEXT PRIMARY KEY, label TEXT NOT NULL) WITHOUT ROWID;
"""
_SOURCES = "CREATE TABLE sources (key TEXT PRIMARY KEY, digest TEXT NOT NULL, counted INTEGER NOT NULL) WITHOUT ROWID"


class ModelError(Exception):
    """The model file is missing, unreadable, or of another format."""


def write(path: PathLike, spam: int, ham: int, counts: Mapping[str, list[int]], trained: Mapping[str, str],
          cutoffs: tuple[float, float] | None = None, trained_at: float | None = None, *,
          tokens_version: int | None = None, sources: Mapping[str, tuple[str, bool]] | None = None) -> float:
    """Write the model to `path` atomically; returns the time it records as trained. `tokens_version` and
    `sources` (key: (digest, counted)) are written only when given."""
    trained_at = time.time() if trained_at is None else trained_at
    path = os.fspath(path)
    folder, name = os.path.split(path)
    temporary = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    _remove(temporary)  # a leftover of this pid's crash: never a live reader's file
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        connection = sqlite3.connect(temporary, isolation_level=None)
        try:
            connection.execute("PRAGMA journal_mode = OFF")  # a fresh file, renamed only once complete
            connection.execute("PRAGMA synchronous = OFF")  # fsynced once, below
            connection.execute("BEGIN")
            for statement in filter(str.strip, _SCHEMA.split(";")):
                connection.execute(statement)
            meta = {"format": FORMAT, "spam": spam, "ham": ham, "trained_at": trained_at}
            if cutoffs is not None:
                meta["ham_cutoff"], meta["spam_cutoff"] = cutoffs
            if tokens_version is not None:
                meta["tokens"] = tokens_version
            connection.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
            # Sorted: rows go in key order, so the B-tree fills page after page rather than splitting pages. The
            # tokens alone are sorted (strings compared directly), then looked up: sorting the (token, counts) items
            # made a tuple of each and compared tuples, four times the time for a hundred thousand tokens.
            connection.executemany("INSERT INTO tokens VALUES (?, ?, ?)",
                                   ((token, *counts[token]) for token in sorted(counts)))
            connection.executemany("INSERT INTO trained VALUES (?, ?)", sorted(trained.items()))
            if sources is not None:
                connection.execute(_SOURCES)
                connection.executemany("INSERT INTO sources VALUES (?, ?, ?)",
                                       ((key, *sources[key]) for key in sorted(sources)))
            connection.execute("COMMIT")
        finally:
            connection.close()
        os.fsync(descriptor)
        os.close(descriptor)
        descriptor = -1
        os.replace(temporary, path)
    except BaseException:
        if descriptor >= 0:
            os.close(descriptor)
        _remove(temporary)
        raise
    return trained_at


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _open(path: PathLike) -> sqlite3.Connection:
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise ModelError("the filter has no model yet")
    try:
        connection = sqlite3.connect(f"file:{quote(path)}?mode=ro&immutable=1", uri=True)
        connection.execute("SELECT 1 FROM meta LIMIT 1")
    except sqlite3.Error as error:
        raise ModelError(f"the model file cannot be read ({error})") from error
    return connection


class Table:
    """The model file opened for lookups: the message counts and cutoffs at once, the tokens as asked."""

    def __init__(self, path: PathLike) -> None:
        self.connection = _open(path)
        self._sources: bool | None = None  # whether the file has the table `sources`, once asked
        try:
            meta = dict(self.connection.execute("SELECT key, value FROM meta"))
        except sqlite3.Error as error:
            raise ModelError(f"the model file cannot be read ({error})") from error
        if meta.get("format") != FORMAT:
            raise ModelError(f"the model file is of format {meta.get('format')}, not {FORMAT}")
        self.spam, self.ham = int(meta["spam"]), int(meta["ham"])
        self.trained_at = float(meta.get("trained_at", 0.0))
        self.cutoffs = ((float(meta["ham_cutoff"]), float(meta["spam_cutoff"])) if "ham_cutoff" in meta
                        else None)
        self.tokens_version = meta.get("tokens")  # None: not recorded (the spam plugin's, or written before it was)

    def counts(self, tokens: Iterable[str]) -> list[tuple[str, int, int]]:
        """(token, spam, ham) of each of `tokens` the model knows."""
        wanted = list(tokens)
        found: list[tuple[str, int, int]] = []
        for start in range(0, len(wanted), LOOKUP_BATCH):
            batch = wanted[start:start + LOOKUP_BATCH]
            found.extend(self.connection.execute(
                f"SELECT token, spam, ham FROM tokens WHERE token IN ({','.join('?' * len(batch))})", batch))
        return found

    def everything(self) -> tuple[dict[str, list[int]], dict[str, str]]:
        """Every token's counts and every trained message (the in-memory model, for training and labels)."""
        counts = {token: [spam, ham] for token, spam, ham in self.connection.execute("SELECT * FROM tokens")}
        return counts, dict(self.connection.execute("SELECT key, label FROM trained"))

    def sources(self, uncounted_only: bool = False) -> dict[str, tuple[str, bool]]:
        """Each trained message's (digest, counted), as `write` was given them; {} when none were."""
        if not self._has_sources():
            return {}
        rows = self.connection.execute("SELECT key, digest, counted FROM sources"
                                       + (" WHERE counted = 0" if uncounted_only else ""))
        return {key: (digest, bool(counted)) for key, digest, counted in rows}

    def label_of(self, key: str) -> tuple[str, str] | None:
        """A trained message's label and the digest of its source ("" when none was written), or None."""
        found = self.connection.execute(
            "SELECT t.label, coalesce(s.digest, '') FROM trained t LEFT JOIN sources s ON s.key = t.key "
            "WHERE t.key = ?" if self._has_sources() else "SELECT label, '' FROM trained WHERE key = ?",
            (key,)).fetchone()
        return (found[0], found[1]) if found is not None else None

    def _has_sources(self) -> bool:
        if self._sources is None:
            self._sources = self.connection.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'sources'").fetchone() is not None
        return self._sources

    def close(self) -> None:
        self.connection.close()
