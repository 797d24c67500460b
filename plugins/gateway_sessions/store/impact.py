"""Impact lists: the exact BM25 best messages for a query of ONE very common word or prefix, without FTS5 scoring
every match (issue 14; README, "Search").

For a query of one phrase, BM25 orders the matching messages by (tf = how many of its tokens match, dl = its length in
tokens) alone: the IDF and the average length are common to all. A class (tf, dl) *dominates* another when tf' >= tf
and dl' <= dl (not the same class); each of its messages then scores strictly better. For each phrase matching more than
THRESHOLD messages we keep the count of every class, and the messages of every class that fewer than DEPTH messages
dominate ("stored"). That set is closed upward and holds the true best DEPTH messages (one outside has DEPTH messages
ahead of it), so walking it best first is exact for the first DEPTH messages walked; past that, the caller falls back
to FTS5. The scores are computed with FTS5's own formula (fts5_aux.c, bm25) from the index's current totals.

Kept up to date in the import's own transaction (Writes.index_new): new messages are tokenized by FTS5 in a scratch
index (same tokenizer) and counted; a message goes into a list when its class is stored or is new with fewer than DEPTH
dominators (inserts never require removals). Removed or changed messages (the triggers fill impact_gone) are taken
out; each removal can bring an unstored class one dominator nearer DEPTH, so each phrase keeps `slack`, how many
removals it can take before one might be under: at 0 it is marked stale (the search uses FTS5) and rebuilt at the
import's commit. Which phrases have a list is worked out again when the store has grown by a tenth since the last time.
"""

from __future__ import annotations

import bisect
import math
import re
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

# The tokenizer of the messages' index (the store's schema uses it), and of the scratch index new messages are read with.
TOKENIZE = "unicode61 remove_diacritics 2"
# A phrase gets a list when it matches more than THRESHOLD messages: FTS5 ranks about 20,000-30,000 matches within
# 50 ms (1.4-2.4 us each, README "Search"), so below that the index of our own would buy nothing.
THRESHOLD = 20_000
# How many best messages a list guarantees: a search walks at most this many before answering (20 sessions nearly
# always come within a few hundred messages, even with a gate keeping back a tenth of the store).
DEPTH = 2_000
# Prefixes of up to this many characters are considered for a list: those the index has prefix indexes for (2-4) and
# single letters. Longer ones match fewer messages, and every list costs the import a pass per batch.
MAX_PREFIX = 4
# Work out which phrases have a list again once the store has this many times the messages it had last time.
REDISCOVER_GROWTH = 1.1
# ... and at least this many more (a small store is not worked out again at every import).
REDISCOVER_AT_LEAST = 1_000
# A phrase with no unstored class can take any number of removals.
UNBOUNDED = 1 << 60

# The queries answered from a list: one bareword of lowercase ASCII letters and digits, with or without a final `*`
# (the tokenizer leaves those as they are; anything else goes to FTS5).
_PHRASE = re.compile(r"[a-z0-9]+\*?")

SCHEMA = """
CREATE TABLE IF NOT EXISTS impact_phrases(
    id INTEGER PRIMARY KEY,
    phrase TEXT NOT NULL UNIQUE,
    df INTEGER NOT NULL,
    depth INTEGER NOT NULL,
    slack INTEGER NOT NULL,
    stale INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS impact_classes(
    phrase INTEGER NOT NULL,
    tf INTEGER NOT NULL,
    dl INTEGER NOT NULL,
    n INTEGER NOT NULL,
    stored INTEGER NOT NULL,
    PRIMARY KEY(phrase, tf, dl)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS impact_entries(
    phrase INTEGER NOT NULL,
    tf INTEGER NOT NULL,
    dl INTEGER NOT NULL,
    message INTEGER NOT NULL,
    PRIMARY KEY(phrase, tf, dl, message)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS impact_gone(rowid INTEGER PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS impact_touched(rowid INTEGER PRIMARY KEY);
-- How many messages the store held when the phrases with a list were last worked out (no row: never, a migration).
-- `indexed`: the index's row count when the lists were last brought up to date, so that a search can tell a write
-- made some other way than Writes (the lists would not know of it) and leave them aside.
CREATE TABLE IF NOT EXISTS impact_built(
    only INTEGER PRIMARY KEY CHECK (only = 1), messages INTEGER NOT NULL, indexed INTEGER NOT NULL DEFAULT -1
);
"""
# What a removed or changed message was, for Maintainer.changed (the first text since then: the one counted).
TRIGGERS = (
    """CREATE TRIGGER IF NOT EXISTS impact_message_deleted AFTER DELETE ON messages BEGIN
    INSERT OR IGNORE INTO impact_gone(rowid, text) VALUES (old.rowid, old.text);
END""",
    """CREATE TRIGGER IF NOT EXISTS impact_message_changed AFTER UPDATE OF text ON messages
WHEN old.text IS NOT new.text BEGIN
    INSERT OR IGNORE INTO impact_gone(rowid, text) VALUES (old.rowid, old.text);
    INSERT OR IGNORE INTO impact_touched(rowid) VALUES (new.rowid);
END""",
)
TRIGGER_NAMES = ("impact_message_deleted", "impact_message_changed")


def phrase_of(query: str) -> str | None:
    """The phrase a query is, when it is one a list can answer (`kasa`, `kasa*`); else None."""
    query = query.strip()
    return query if _PHRASE.fullmatch(query) else None


def _varint(blob: bytes, at: int) -> tuple[int, int]:
    """SQLite's varint (as FTS5 writes its records): the value and the offset after it."""
    value = 0
    for i in range(8):
        byte = blob[at + i]
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, at + i + 1
    return (value << 8) | blob[at + 8], at + 9


def totals(connection: sqlite3.Connection, table: str = "messages_fts") -> tuple[int, int]:
    """(rows, tokens) of the index, read as FTS5 reads them: its averages record (`_data` id 1)."""
    row = connection.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0, 0
    rows, at = _varint(row[0], 0)
    tokens, _ = _varint(row[0], at)
    return rows, tokens


def bm25(tf: int, dl: int, df: int, rows: int, tokens: int) -> float:
    """FTS5's bm25() for a query of one phrase, in its order of operations (fts5_aux.c), so the value is the same."""
    k1, b = 1.2, 0.75
    idf = math.log((rows - df + 0.5) / (df + 0.5))
    if idf <= 0.0:
        idf = 1e-6
    avgdl = float(tokens) / float(rows)
    freq, size = float(tf), float(dl)
    score = 0.0 + idf * ((freq * (k1 + 1.0)) / (freq + k1 * (1 - b + b * size / avgdl)))
    return -1.0 * score


def _range(phrase: str) -> tuple[str, str, bool]:
    """The terms a phrase covers, as a range for fts5vocab: (low, high, whether high is included)."""
    if phrase.endswith("*"):
        stem = phrase[:-1]
        return stem, stem + "\U0010ffff", False
    return phrase, phrase, True


def _counted(connection: sqlite3.Connection, vocab: str, phrase: str) -> list[tuple[int, int]]:
    """(message, tf) of each message holding the phrase, from an fts5vocab `instance` table."""
    low, high, inclusive = _range(phrase)
    return connection.execute(
        f"SELECT doc, count(*) FROM {vocab} WHERE term >= ? AND term {'<=' if inclusive else '<'} ? GROUP BY doc",
        (low, high),
    ).fetchall()


def _sizes(connection: sqlite3.Connection, table: str, rowids: Iterable[int] | None = None) -> dict[int, int]:
    """Each message's length in tokens, from FTS5's own record of it (`_docsize`)."""
    if rowids is None:
        rows = connection.execute(f"SELECT id, sz FROM {table}_docsize")
    else:
        rows = connection.execute(
            f"SELECT id, sz FROM {table}_docsize WHERE id IN (SELECT value FROM json_each(?))",
            (_json(rowids),),
        )
    return {rowid: _varint(size, 0)[0] for rowid, size in rows}


def _json(values: Iterable[int]) -> str:
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def _dominators(classes: dict[tuple[int, int], int]) -> dict[tuple[int, int], int]:
    """For each class, how many messages of other classes dominate it (tf' >= tf, dl' <= dl)."""
    by_tf: dict[int, tuple[list[int], list[int]]] = {}
    for tf in {tf for tf, _dl in classes}:
        sizes = sorted(dl for t, dl in classes if t == tf)
        running, cumulative = 0, []
        for dl in sizes:
            running += classes[(tf, dl)]
            cumulative.append(running)
        by_tf[tf] = (sizes, cumulative)
    found = {}
    for tf, dl in classes:
        total = 0
        for other, (sizes, cumulative) in by_tf.items():
            if other >= tf:
                at = bisect.bisect_right(sizes, dl)
                total += cumulative[at - 1] if at else 0
        found[(tf, dl)] = total - classes[(tf, dl)]
    return found


def build(connection: sqlite3.Connection, phrase: str, depth: int, sizes: dict[int, int] | None = None) -> None:
    """(Re)make one phrase's list from the store's index (one pass over its matches), in the caller's transaction."""
    _vocab(connection)
    counted = _counted(connection, "temp.impact_vocab", phrase)
    if sizes is None:
        sizes = _sizes(connection, "messages_fts", (doc for doc, _tf in counted))
    classes: dict[tuple[int, int], int] = {}
    members: dict[tuple[int, int], list[int]] = {}
    for doc, tf in counted:
        key = (tf, sizes[doc])
        classes[key] = classes.get(key, 0) + 1
        members.setdefault(key, []).append(doc)
    dominated = _dominators(classes)
    unstored = [count for count in dominated.values() if count >= depth]
    slack = min(unstored) - depth + 1 if unstored else UNBOUNDED
    row = connection.execute("SELECT id FROM impact_phrases WHERE phrase = ?", (phrase,)).fetchone()
    if row is None:
        pid = connection.execute(
            "INSERT INTO impact_phrases(phrase, df, depth, slack) VALUES (?, ?, ?, ?)",
            (phrase, len(counted), depth, slack),
        ).lastrowid
    else:
        pid = row[0]
        connection.execute("DELETE FROM impact_classes WHERE phrase = ?", (pid,))
        connection.execute("DELETE FROM impact_entries WHERE phrase = ?", (pid,))
        connection.execute(
            "UPDATE impact_phrases SET df = ?, depth = ?, slack = ?, stale = 0 WHERE id = ?",
            (len(counted), depth, slack, pid),
        )
    connection.executemany(
        "INSERT INTO impact_classes(phrase, tf, dl, n, stored) VALUES (?, ?, ?, ?, ?)",
        ((pid, tf, dl, n, int(dominated[(tf, dl)] < depth)) for (tf, dl), n in classes.items()),
    )
    connection.executemany(
        "INSERT INTO impact_entries(phrase, tf, dl, message) VALUES (?, ?, ?, ?)",
        ((pid, tf, dl, doc) for (tf, dl), docs in members.items() if dominated[(tf, dl)] < depth for doc in docs),
    )


def _vocab(connection: sqlite3.Connection) -> None:
    connection.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.impact_vocab USING fts5vocab(main, messages_fts, instance)")
    connection.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.impact_terms USING fts5vocab(main, messages_fts, row)")


def candidates(connection: sqlite3.Connection, threshold: int, listed: set[str] = frozenset()) -> list[str]:
    """The words and prefixes (of up to MAX_PREFIX characters) that match more than `threshold` messages, but for
    those `listed` already."""
    _vocab(connection)
    words: list[str] = []
    bounds: dict[str, int] = {}
    for term, docs in connection.execute("SELECT term, doc FROM temp.impact_terms"):
        if not _PHRASE.fullmatch(term):
            continue
        if docs > threshold:
            words.append(term)
        for length in range(1, min(MAX_PREFIX, len(term)) + 1):
            bounds[term[:length]] = bounds.get(term[:length], 0) + docs
    found = [word for word in words if word not in listed]
    for stem, bound in sorted(bounds.items()):
        if bound > threshold and stem + "*" not in listed:  # the sum of its words' counts is only an upper bound: count the messages
            exact = connection.execute(
                "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", (stem + "*",)
            ).fetchone()[0]
            if exact > threshold:
                found.append(stem + "*")
    return found


def rebuild_all(
    connection: sqlite3.Connection, threshold: int | None = None, depth: int | None = None
) -> int:
    """Work out which phrases have a list and make them all again, in the caller's transaction; how many."""
    threshold = THRESHOLD if threshold is None else threshold
    depth = DEPTH if depth is None else depth
    connection.execute("DELETE FROM impact_entries")
    connection.execute("DELETE FROM impact_classes")
    connection.execute("DELETE FROM impact_phrases")
    connection.execute("DELETE FROM impact_gone")
    connection.execute("DELETE FROM impact_touched")
    phrases = candidates(connection, threshold)
    sizes = _sizes(connection, "messages_fts") if phrases else {}
    for phrase in phrases:
        build(connection, phrase, depth, sizes)
    count = connection.execute("SELECT count(*) FROM messages").fetchone()[0]
    # Every message is in the index here (Writes indexes before it commits); FTS5's own record of its row count may
    # not be written yet inside the transaction.
    connection.execute("INSERT OR REPLACE INTO impact_built(only, messages, indexed) VALUES (1, ?, ?)", (count, count))
    return len(phrases)


def is_built(connection: sqlite3.Connection) -> bool:
    """Whether the lists were made and saw every write since (none made some other way than Writes)."""
    return connection.execute("SELECT 1 FROM impact_built").fetchone() is not None and is_current(connection)


def is_current(connection: sqlite3.Connection, rows: int | None = None) -> bool:
    """Whether the lists saw every write to the index: its row count is the one they last saw, and no message was
    removed or changed since without being counted out (a write made some other way than Writes)."""
    rows = totals(connection)[0] if rows is None else rows
    current = connection.execute(
        "SELECT indexed = ? AND NOT EXISTS (SELECT 1 FROM impact_gone) AND NOT EXISTS (SELECT 1 FROM impact_touched) "
        "FROM impact_built",
        (rows,),
    ).fetchone()
    return current is not None and bool(current[0])


def migrate(connection: sqlite3.Connection, say: Callable[[str], None]) -> None:
    """Make the lists of a store that has none yet (one transaction), told to `say` with its time."""
    count = connection.execute("SELECT count(*) FROM messages").fetchone()[0]
    started = time.monotonic()
    if count:
        say(f"making the search's lists of very common words ({count:,} messages; once)…")
    connection.execute("BEGIN IMMEDIATE")
    try:
        made = rebuild_all(connection)
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
    if count:
        say(f"search lists made: {made:,} words and prefixes in {time.monotonic() - started:.1f} s")


class Maintainer:
    """Keeps the lists right as an import writes (its methods run inside the import's transaction)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self._scratch: sqlite3.Connection | None = None

    def _phrases(self) -> list[tuple[int, str, int]]:
        return self.connection.execute("SELECT id, phrase, depth FROM impact_phrases WHERE NOT stale").fetchall()

    def changed(self, new_after: int) -> None:
        """Take out the messages removed or changed since the last call, and count those added (rowid > new_after)."""
        connection = self.connection
        phrases = self._phrases()
        gone = connection.execute("SELECT rowid, text FROM impact_gone").fetchall()
        touched = [row[0] for row in connection.execute("SELECT rowid FROM impact_touched")]
        connection.execute("DELETE FROM impact_gone")
        connection.execute("DELETE FROM impact_touched")
        if phrases and gone:
            self._apply(phrases, gone, removing=True)
        added = []
        if phrases:  # two statements: with an OR, SQLite would scan every message
            added = connection.execute("SELECT rowid, text FROM messages WHERE rowid > ?", (new_after,)).fetchall()
            new = len(added)
            if touched:
                added += connection.execute(
                    "SELECT rowid, text FROM messages WHERE rowid IN (SELECT value FROM json_each(?)) AND rowid <= ?",
                    (_json(touched), new_after),
                ).fetchall()
        else:
            new = connection.execute("SELECT count(*) FROM messages WHERE rowid > ?", (new_after,)).fetchone()[0]
        if phrases and added:
            self._apply(phrases, added, removing=False)
        # The index's row count as it will be once committed (its averages record, which a search compares with, is
        # written by FTS5 only when it flushes): the new rows in, the deleted ones (gone, not changed) out.
        deleted = len({rowid for rowid, _text in gone} - set(touched))
        connection.execute("UPDATE impact_built SET indexed = indexed + ?", (new - deleted,))

    def _apply(self, phrases: list[tuple[int, str, int]], texts: list[tuple[int, str]], removing: bool) -> None:
        """Tokenize `texts` with FTS5 (a scratch index) and count them in or out of every phrase's classes.

        The counting is done in SQL (C) in one pass for all phrases: each (term, message, count) of the batch once,
        then joined to every phrase's word or range of words, grouped into (phrase, tf, dl) with their messages.
        """
        scratch = self._scratch_index()
        scratch.execute("BEGIN")
        try:
            scratch.executemany("INSERT INTO scratch_text(rowid, text) VALUES (?, ?)", texts)
            scratch.execute("INSERT INTO scratch(rowid, text) SELECT rowid, text FROM scratch_text")
            scratch.execute(
                "CREATE TABLE counted(term TEXT, doc INTEGER, n INTEGER, PRIMARY KEY(term, doc)) WITHOUT ROWID"
            )
            scratch.execute("INSERT INTO counted SELECT term, doc, count(*) FROM scratch_vocab GROUP BY term, doc")
            scratch.execute("CREATE TABLE sizes(doc INTEGER PRIMARY KEY, dl INTEGER)")
            scratch.executemany("INSERT INTO sizes(doc, dl) VALUES (?, ?)", _sizes(scratch, "scratch").items())
            scratch.execute("CREATE TABLE phrases(id INTEGER PRIMARY KEY, low TEXT, high TEXT)")
            scratch.executemany(
                "INSERT INTO phrases(id, low, high) VALUES (?, ?, ?)",
                ((pid, *_range(phrase)[:2]) for pid, phrase, _depth in phrases),
            )
            depth_of = {pid: depth for pid, _phrase, depth in phrases}
            classes: dict[int, dict[tuple[int, int], list[int]]] = {}
            for join in ("c.term = p.low AND p.low = p.high", "c.term >= p.low AND c.term < p.high AND p.low != p.high"):
                for pid, tf, dl, docs in scratch.execute(
                    "SELECT x.id, x.tf, s.dl, group_concat(x.doc) FROM ("
                    f"SELECT p.id AS id, c.doc AS doc, sum(c.n) AS tf FROM phrases AS p JOIN counted AS c ON {join} "
                    "GROUP BY p.id, c.doc) AS x JOIN sizes AS s ON s.doc = x.doc GROUP BY x.id, x.tf, s.dl"
                ):
                    classes.setdefault(pid, {})[(tf, dl)] = [int(doc) for doc in docs.split(",")]
            for pid, by_class in classes.items():
                self._count(pid, depth_of[pid], by_class, removing)
        finally:
            scratch.execute("ROLLBACK")

    def _count(self, pid: int, depth: int, by_class: dict[tuple[int, int], list[int]], removing: bool) -> None:
        """Count messages ((tf, dl) -> their rowids) in or out of one phrase's classes, a class at a time."""
        connection = self.connection
        found = sum(len(docs) for docs in by_class.values())
        if removing:
            connection.executemany(
                "UPDATE impact_classes SET n = n - ? WHERE phrase = ? AND tf = ? AND dl = ?",
                ((len(docs), pid, tf, dl) for (tf, dl), docs in by_class.items()),
            )
            connection.executemany(
                "DELETE FROM impact_entries WHERE phrase = ? AND tf = ? AND dl = ? AND message = ?",
                ((pid, tf, dl, doc) for (tf, dl), docs in by_class.items() for doc in docs),
            )
            connection.execute("DELETE FROM impact_classes WHERE phrase = ? AND n <= 0", (pid,))
            # Each removal may bring every unstored class one dominator nearer `depth`.
            connection.execute(
                "UPDATE impact_phrases SET df = df - ?, slack = slack - ?, stale = (slack - ? <= 0) WHERE id = ?",
                (found, found, found, pid),
            )
            return
        known = {
            (tf, dl): bool(stored)
            for tf, dl, stored in connection.execute(
                "SELECT tf, dl, stored FROM impact_classes WHERE phrase = ?", (pid,)
            )
        }
        slack = UNBOUNDED
        entries: list[tuple[int, int, int, int]] = []
        # A new class's dominators are those counted so far: a class of this batch counted later can only add to
        # them, so a class stored for it is still rightly stored (a superset), and an unstored one has enough.
        for (tf, dl), docs in by_class.items():
            if (tf, dl) in known:
                stored = known[(tf, dl)]
                connection.execute(
                    "UPDATE impact_classes SET n = n + ? WHERE phrase = ? AND tf = ? AND dl = ?",
                    (len(docs), pid, tf, dl),
                )
            else:
                dominators = connection.execute(
                    "SELECT coalesce(sum(n), 0) FROM impact_classes WHERE phrase = ? AND tf >= ? AND dl <= ?",
                    (pid, tf, dl),
                ).fetchone()[0]
                stored = dominators < depth
                if not stored:
                    slack = min(slack, dominators - depth + 1)
                connection.execute(
                    "INSERT INTO impact_classes(phrase, tf, dl, n, stored) VALUES (?, ?, ?, ?, ?)",
                    (pid, tf, dl, len(docs), int(stored)),
                )
            if stored:
                entries.extend((pid, tf, dl, doc) for doc in docs)
        connection.executemany("INSERT INTO impact_entries(phrase, tf, dl, message) VALUES (?, ?, ?, ?)", entries)
        connection.execute(
            "UPDATE impact_phrases SET df = df + ?, slack = min(slack, ?) WHERE id = ?", (found, slack, pid)
        )

    def finish(self) -> None:
        """At the import's commit: rebuild the stale lists, or all of them once the store has grown enough."""
        connection = self.connection
        row = connection.execute("SELECT messages, indexed FROM impact_built").fetchone()
        if row is None:
            return  # lists never made: open_for_writing makes them
        count = row[1]  # every message is in the index by now: its row count as kept above, not counted
        making = connection.execute("SELECT phrase, depth FROM impact_phrases WHERE stale").fetchall()
        grown = count > int(row[0]) * REDISCOVER_GROWTH and count - int(row[0]) >= REDISCOVER_AT_LEAST
        if grown:
            # The lists there are kept up to date: only the phrases that crossed the threshold since get one.
            listed = {phrase for (phrase,) in connection.execute("SELECT phrase FROM impact_phrases")}
            making += [(phrase, DEPTH) for phrase in candidates(connection, THRESHOLD, listed)]
        sizes = _sizes(connection, "messages_fts") if len(making) > 1 else None  # read once for many lists
        for phrase, depth in making:
            build(connection, phrase, depth, sizes)
        if grown:
            connection.execute("UPDATE impact_built SET messages = ?", (count,))

    def _scratch_index(self) -> sqlite3.Connection:
        if self._scratch is None:
            scratch = sqlite3.connect(":memory:", isolation_level=None)
            scratch.execute("CREATE TABLE scratch_text(rowid INTEGER PRIMARY KEY, text TEXT NOT NULL)")
            scratch.execute(
                "CREATE VIRTUAL TABLE scratch USING fts5("
                f"text, content='scratch_text', content_rowid='rowid', tokenize='{TOKENIZE}')"
            )
            scratch.execute("CREATE VIRTUAL TABLE scratch_vocab USING fts5vocab(scratch, instance)")
            self._scratch = scratch
        return self._scratch

    def close(self) -> None:
        if self._scratch is not None:
            self._scratch.close()
            self._scratch = None


@dataclass
class Walked:
    """What a search from a list found: session -> (rank, message rowid), best first; None when FTS5 must answer."""

    best: dict[int, tuple[float, int]]
    walked: int


def search(connection: sqlite3.Connection, query: str, limit: int, gated: bool) -> Walked | None:
    """The best `limit` sessions for a one-phrase query from its list, or None (no list, stale, or walked too far)."""
    phrase = phrase_of(query)
    if phrase is None:
        return None
    try:
        row = connection.execute(
            "SELECT id, df, depth FROM impact_phrases WHERE phrase = ? AND NOT stale", (phrase,)
        ).fetchone()
    except sqlite3.OperationalError:  # a store made before the lists
        return None
    if row is None:
        return None
    pid, df, depth = row
    rows, tokens = totals(connection)
    if not rows or not is_current(connection, rows):  # written to some other way since: FTS5 answers
        return None
    by_score: dict[float, list[tuple[int, int]]] = {}
    for tf, dl in connection.execute("SELECT tf, dl FROM impact_classes WHERE phrase = ? AND stored", (pid,)):
        by_score.setdefault(bm25(tf, dl, df, rows, tokens), []).append((tf, dl))
    kept = (
        {r for (r,) in connection.execute("SELECT rowid FROM temp.kept_back")} if gated else set()
    )
    best: dict[int, tuple[float, int]] = {}
    walked = 0
    for score in sorted(by_score):
        messages: list[int] = []
        for tf, dl in by_score[score]:
            messages.extend(
                r
                for (r,) in connection.execute(
                    "SELECT message FROM impact_entries WHERE phrase = ? AND tf = ? AND dl = ?", (pid, tf, dl)
                )
            )
        messages.sort(reverse=True)  # equal scores: the newer message first, as FTS5's ranking with rowid DESC
        if walked + len(messages) > depth:
            messages = messages[: depth - walked]
            if not messages:
                return None
        sessions = dict(
            connection.execute(
                "SELECT rowid, session FROM messages WHERE rowid IN (SELECT value FROM json_each(?))",
                (_json(messages),),
            )
        )
        for message in messages:
            walked += 1
            session = sessions[message]
            if session in kept or session in best:
                continue
            best[session] = (score, message)
            if len(best) == limit:
                return Walked(best, walked)
        if walked >= depth:
            return None
    return Walked(best, walked)
