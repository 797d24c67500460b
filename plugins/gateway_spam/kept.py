"""What the filter reads of each corpus message, kept between processes: `<cache>/facts.sqlite`.

A message's facts are its key (Message-ID, else its file's hash), its body's digest, its time and its tokens
(`training.facts_of`): tokenizing is most of what training costs. They are kept per file, by its path, size and
modification time (a Maildir message is never rewritten in place: a change makes a new name or a new time), and
the whole store is emptied when the tokenizer's version (`spamfilter.tokens.VERSION`) or this layout changes.
`gateway watch` fills it as mail arrives (the plugin's refresh), training reads the messages it has not seen and
writes them back, and spam_review takes the tokens of what it reviews from it. What it holds are the tokens the
model file already holds counts of, under the person's own cache folder, 0600; no tool shows them.

A label taken back subtracts the tokens a model counted for its message: `tokens_counted` finds them here by the
message's key and the identity the model recorded (`Model.counted_tokens`).

It also keeps the last training's online evaluation (`online`): per message in the order it was evaluated, its key,
label, the identity of its tokens (a digest of their stored text) and its score and strength, with the score's
stamp (`spamfilter.score.STAMP`). The next training takes the outcomes of the run of messages at the start of its
stream that are the same (key, label, tokens) from it instead of scoring them again (`evaluation.online`).

Nothing here may fail a call or a job: a store that cannot be opened, read or written is as if empty.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from spamfilter.tokens import VERSION

from gateway import open_store

NAME = "facts.sqlite"
STAMP = f"facts 3, tokens {VERSION}"
# A row holds a message's tokens (kilobytes): an ordinary table, rows packed in rowid order, with the index of paths
# beside it. (Layout 2 kept them in a WITHOUT ROWID table, whose B-tree is meant for small rows: a file 60% larger
# for the SpamAssassin corpus, twice the time to write.) A store of another layout gets this table anew (`_anew`).
FACTS = """
CREATE TABLE IF NOT EXISTS facts (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime INTEGER NOT NULL,
    readable INTEGER NOT NULL, key TEXT, digest TEXT, moment REAL, tokens TEXT
);
"""
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value);
""" + FACTS + """
CREATE TABLE IF NOT EXISTS online (
    position INTEGER PRIMARY KEY, key TEXT NOT NULL, label TEXT NOT NULL, tokens BLOB NOT NULL,
    probability REAL NOT NULL, strength REAL NOT NULL
);
"""
SEPARATOR = "\n"  # between tokens (`_joined` writes a message whose token holds one as a JSON list instead)
LISTED = "\x00"  # what starts a JSON list of tokens
WRITE_BATCH = 500

Facts = tuple  # (key, digest, time or None, tokens or None): `training.facts_of`'s answer for a readable message


def signature(path: Path) -> tuple[int, int] | None:
    """(size, modification time in ns) of a message file, None when it is gone."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def _joined(tokens: Iterable[str]) -> str:
    """The tokens as one text, sorted (so that a set gives the same text in every process): joined by newlines, or,
    when a token holds one (a Message-ID's domain can) or the text would start with a NUL, a NUL and then a JSON
    list."""
    listed = sorted(tokens)
    text = SEPARATOR.join(listed)
    if text.count(SEPARATOR) == max(0, len(listed) - 1) and not text.startswith(LISTED) and "" not in listed:
        return text
    return LISTED + json.dumps(listed)


def identity(text: str) -> bytes:
    """What tells one stored text of tokens from another: the same identity, the same tokens."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def identity_of(tokens: Iterable[str]) -> bytes:
    """The identity of a message's tokens as they would be stored (`identity` of their sorted text)."""
    return identity(_joined(tokens))


def stored(tokens: Iterable[str]) -> tuple[str, bytes]:
    """A message's tokens as the store keeps them, and their identity: what a reading process sends back (one
    string is pickled and unpickled in a fraction of the time a set of a few hundred strings takes), made there so
    that the process that gathers them neither sorts nor joins them."""
    text = _joined(tokens)
    return text, identity(text)


def tokens_of_text(text: str) -> set[str]:
    """The tokens of a stored text (`rows(..., texts=True)` gives texts)."""
    return _split(text)


def _split(text: str) -> set[str]:
    if text.startswith(LISTED):
        return set(json.loads(text[len(LISTED):]))
    return set(text.split(SEPARATOR)) if text else set()


def _anew(connection: sqlite3.Connection) -> None:
    """The facts table made again, empty, in this layout (the store's stamp changed: another tokenizer or layout)."""
    connection.execute("DROP TABLE IF EXISTS facts")
    connection.execute(FACTS)


class Kept:
    """The store opened for one pass (a training job, a refresh, a review): every row read at once, new facts
    written back in batches."""

    def __init__(self, folder: Path | str | None) -> None:
        self.connection: sqlite3.Connection | None = None
        self.given = 0  # files whose facts were given to `put` (read this pass)
        self._pending: list[tuple] = []
        if folder is None:
            return
        try:
            self.connection = open_store(Path(folder), NAME, SCHEMA, STAMP, emptied=("online",), on_emptied=_anew)
            self.connection.row_factory = None  # plain tuples: thousands of rows are read at once
            os.chmod(Path(folder) / NAME, 0o600)
        except (OSError, sqlite3.Error):
            self.connection = None

    def rows(self, paths: Iterable[str] | None = None, identities: bool = False) -> dict[str, tuple]:
        """path -> (size, mtime, facts) of every kept file (or of these paths); with `identities`, (size, mtime,
        facts, the identity of its tokens or None), the tokens in the facts left as their stored text (for
        `tokens_of_text`)."""
        if self.connection is None:
            return {}
        found: dict[str, tuple] = {}
        try:
            if paths is None:
                cursor = self.connection.execute("SELECT * FROM facts")
                rows = cursor.fetchall()
            else:
                wanted, rows = list(paths), []
                for start in range(0, len(wanted), 500):
                    batch = wanted[start:start + 500]
                    rows += self.connection.execute(
                        f"SELECT * FROM facts WHERE path IN ({','.join('?' * len(batch))})", batch).fetchall()
        except sqlite3.Error:
            return {}
        for path, size, mtime, readable, key, digest, moment, tokens in rows:
            if not readable:
                continue
            if identities:
                found[path] = (size, mtime, (key, digest, moment, tokens),
                               None if tokens is None else identity(tokens))
            else:
                found[path] = (size, mtime, (key, digest, moment, None if tokens is None else _split(tokens)))
        return found

    def tokens_counted(self, key: str, wanted: bytes) -> set[str] | None:
        """The tokens of a message `key` whose identity is `wanted` (what a model recorded it counted), from any
        file kept under that key; None when no kept file has them. A label taken back subtracts these. (The key
        has no index: a scan of the table, for a label, never for a training or a delivery.)"""
        if self.connection is None:
            return None
        try:
            rows = self.connection.execute("SELECT tokens FROM facts WHERE key = ? AND readable = 1 AND tokens IS NOT "
                                           "NULL", (key,)).fetchall()
        except sqlite3.Error:
            return None
        for (text,) in rows:
            if identity(text) == wanted:
                return _split(text)
        return None

    def signatures(self) -> dict[str, tuple[int, int]]:
        """path -> (size, mtime) of every kept file, without its facts (what a refresh compares; a file found
        unreadable is kept as such, so that watch does not read it again until it changes)."""
        if self.connection is None:
            return {}
        try:
            return {path: (size, mtime) for path, size, mtime in
                    self.connection.execute("SELECT path, size, mtime FROM facts")}
        except sqlite3.Error:
            return {}

    def put(self, path: str, stat: tuple[int, int], facts: Facts | None) -> None:
        """Keep one file's facts (written with the next batch, or by `close`); their tokens a set, or the text
        `stored` made of them."""
        self.given += 1
        if self.connection is None:
            return
        if facts is None:  # not readable: kept so for watch; training reads it again (`rows` leaves it out)
            self._pending.append((path, *stat, 0, None, None, None, None))
            if len(self._pending) >= WRITE_BATCH:
                self.flush()
            return
        key, digest, moment, tokens = facts
        text = tokens if tokens is None or isinstance(tokens, str) else _joined(tokens)
        row = (path, *stat, 1, key, digest, moment, text)
        self._pending.append(row)
        if len(self._pending) >= WRITE_BATCH:
            self.flush()

    def flush(self) -> None:
        if self.connection is None or not self._pending:
            return
        try:
            with self.connection:
                self.connection.executemany("INSERT OR REPLACE INTO facts VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                            self._pending)
        except sqlite3.Error:
            pass  # a store another process holds, a full disk: these are read again next time
        self._pending = []

    def stream(self, stamp: str) -> list[tuple[str, str, bytes, float, float]]:
        """The last training's online evaluation, (key, label, tokens' identity, probability, strength) per message in
        its order; none when it was scored under another stamp."""
        if self.connection is None:
            return []
        try:
            row = self.connection.execute("SELECT value FROM meta WHERE key = 'online'").fetchone()
            if row is None or row[0] != stamp:
                return []
            return self.connection.execute(
                "SELECT key, label, tokens, probability, strength FROM online ORDER BY position").fetchall()
        except sqlite3.Error:
            return []

    def model_written(self) -> float | None:
        """When the model the last kept evaluation ended with was written (its `trained_at`), if it was."""
        if self.connection is None:
            return None
        try:
            row = self.connection.execute("SELECT value FROM meta WHERE key = 'online model'").fetchone()
        except sqlite3.Error:
            return None
        return None if row is None else float(row[0])

    def keep_stream(self, stamp: str, outcomes: Iterable[tuple[str, str, bytes, float, float]],
                    written: float | None) -> None:
        """Keep this training's online evaluation in place of the last one's, with when the model it ended with was
        written (None: not written), in one transaction."""
        if self.connection is None:
            return
        try:
            with self.connection:
                self.connection.execute("DELETE FROM online")
                self.connection.execute("DELETE FROM meta WHERE key = 'online model'")
                if written is not None:
                    self.connection.execute("INSERT INTO meta VALUES ('online model', ?)", (repr(written),))
                self.connection.execute("INSERT OR REPLACE INTO meta VALUES ('online', ?)", (stamp,))
                self.connection.executemany("INSERT INTO online VALUES (?, ?, ?, ?, ?, ?)",
                                            ((number, *row) for number, row in enumerate(outcomes)))
        except sqlite3.Error:
            pass  # the next training scores every message again

    def forget_except(self, paths: set[str]) -> None:
        """Remove the rows of files no longer in the corpus (moved, deleted)."""
        if self.connection is None:
            return
        try:
            gone = [(path,) for (path,) in self.connection.execute("SELECT path FROM facts") if path not in paths]
            if gone:
                with self.connection:
                    self.connection.executemany("DELETE FROM facts WHERE path = ?", gone)
        except sqlite3.Error:
            pass

    def close(self) -> None:
        if self.connection is None:
            return
        self.flush()
        self.connection.close()
        self.connection = None
