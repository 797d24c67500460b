"""The mail index: one SQLite file with FTS5 in the plugin's cache folder (0600), holding masked text only.

Refreshed incrementally. Each folder's `new/` and `cur/` directory times are recorded: a folder whose two
directories did not change is not listed at all (what makes a refresh at call time cost a stat per folder).
In a folder that changed, each file costs a stat; a file is keyed by its name without the info suffix, so
one that moved from `new/` to `cur/` or whose flags changed keeps its row (its place and flags updated,
never read again), and only a file of a new name, size or time is read. `MASKS_VERSION` is recorded: an
index made with other masks is emptied and made again, because it must hide exactly what answers hide.

A message's id (and so its FTS5 rowid) is made from its date (`date_key`): rowid order is date order, so a
search "newest first, at most n" walks the matches backwards by rowid and stops after n, where sorting every
match by date cost as much as the search itself on common words.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from maildirs import shield as shield_table
from maildirs.conversations import ids_of_headers

from gateway import MASKS_VERSION
from gateway_mail.docindex import bump, generation, meta, set_meta  # noqa: F401 (the index's meta, asked for here too)
from gateway_mail.mail import maildir
from gateway_mail.mail.accounts import Account
from gateway_mail.mail.attachments import indexed as indexed_attachments
from gateway_mail.mail.parse import Parsed, attachment_name, masked, parse_file, text_of_raw
from gateway_mail.mail.query import cjk_words
from gateway_mail.projects.placing import has_label

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS dirs (path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY, account TEXT NOT NULL, folder TEXT NOT NULL, unique_name TEXT NOT NULL,
    sub TEXT NOT NULL, filename TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    flags TEXT NOT NULL, message_id TEXT NOT NULL, date REAL NOT NULL, sender TEXT NOT NULL,
    sender_name TEXT NOT NULL, subject TEXT NOT NULL, recipients TEXT NOT NULL, in_reply_to TEXT NOT NULL,
    thread TEXT NOT NULL, auth TEXT NOT NULL, encrypted INTEGER NOT NULL, code INTEGER NOT NULL,
    password INTEGER NOT NULL, bulk INTEGER NOT NULL, attachments TEXT NOT NULL,
    UNIQUE (account, folder, unique_name)
);
CREATE INDEX IF NOT EXISTS messages_by_id ON messages (message_id);
CREATE INDEX IF NOT EXISTS messages_by_date ON messages (account, date);
CREATE INDEX IF NOT EXISTS messages_by_thread ON messages (thread);
CREATE INDEX IF NOT EXISTS messages_by_sender ON messages (sender);
-- What the Porch lists, each found without reading every message of the account.
CREATE INDEX IF NOT EXISTS messages_unseen ON messages (account, date) WHERE instr(flags, 'S') = 0;
CREATE INDEX IF NOT EXISTS messages_forged ON messages (account, date) WHERE auth = 'forged';
CREATE INDEX IF NOT EXISTS messages_by_folder ON messages (account, folder, date);
-- Messages read in part, and why (parse.Parsed.unreadable): counted, said by `gateway doctor`.
CREATE TABLE IF NOT EXISTS unreadable (id INTEGER PRIMARY KEY, reason TEXT NOT NULL);
"""
# What search_mail searches (query.py reads it): FTS5 over each message's masked fields, and a side table of the
# words written in scripts without spaces (Japanese, Chinese, Korean) under FTS5's `trigram` tokenizer, found by any
# part of a run. `FIELDS` is recorded: an index made with other fields has these two tables made again and every
# message read again (a new column needs every row's text).
FIELDS = "2"  # 2: To, Cc, List-Id and attachment names searchable; the side table messages_cjk
SEARCH_COLUMNS = ("subject", "sender", "body", "recipients", "cc", "list", "attachment")
SEARCH_SCHEMA = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5 ({", ".join(SEARCH_COLUMNS)}, tokenize = 'unicode61');
CREATE VIRTUAL TABLE IF NOT EXISTS messages_cjk USING fts5 ({", ".join(SEARCH_COLUMNS)}, tokenize = 'trigram');
-- is:flagged and is:answered read from indexes of those few, as is:unread from messages_unseen, not by testing
-- every row.
CREATE INDEX IF NOT EXISTS messages_flagged ON messages (account, date) WHERE instr(flags, 'F') > 0;
CREATE INDEX IF NOT EXISTS messages_answered ON messages (account, date) WHERE instr(flags, 'R') > 0;
"""
MAX_RECIPIENTS_TEXT = 20_000  # characters of To, and of Cc, kept searchable (masked, then cut)


def _search_tables(connection: sqlite3.Connection) -> None:
    """The search tables, made again with every message (see FIELDS) when the index was made with other fields."""
    if meta(connection, "fields") == FIELDS:
        connection.executescript(SEARCH_SCHEMA)
        return
    with connection:
        connection.execute("DROP TABLE IF EXISTS messages_fts")
        connection.execute("DROP TABLE IF EXISTS messages_cjk")
        for statement in SEARCH_SCHEMA.strip().split(";\n"):
            connection.execute(statement.rstrip(";"))
        connection.execute("DELETE FROM messages")
        connection.execute("DELETE FROM unreadable")
        connection.execute("DELETE FROM dirs")
        set_meta(connection, "fields", FIELDS)
        bump(connection)


def _searched(text: str) -> str:
    """A header's text as it is indexed: on one line, masked, cut."""
    from gateway import mask, one_line

    return one_line(mask(one_line(text[:MAX_RECIPIENTS_TEXT + 1000])))[:MAX_RECIPIENTS_TEXT]


# A directory changed less than this long ago may change again within its time's granularity: not trusted.
_SETTLE_NS = 2_000_000_000
_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()

COLUMNS = ("id", "account", "folder", "unique_name", "sub", "filename", "size", "mtime_ns", "flags", "message_id",
           "date", "sender", "sender_name", "subject", "recipients", "in_reply_to", "thread", "auth", "encrypted",
           "code", "password", "bulk", "attachments", "refs", "labels")


def index_path(cache: Path) -> Path:
    return cache / "mail-index.sqlite"


def _lock(path: Path) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(str(path), threading.Lock())


_connecting: dict[str, threading.Lock] = {}


def connect(path: Path) -> sqlite3.Connection:
    """The index, made 0600 when new, with its schema; emptied when it was made with other masks.

    One thread of the process at a time checks and makes the schema of one index: two threads opening a new index
    at once (the first calls of a server, asked together) would each read it as made by another version and empty
    it, one of them after the other's refresh had filled it, under a generation that readers had already taken."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with _locks_guard:
        connecting = _connecting.setdefault(str(path.resolve()), threading.Lock())
    with connecting:
        return _connect(path)


def _connect(path: Path) -> sqlite3.Connection:
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    os.chmod(path, 0o600)
    connection = sqlite3.connect(path, timeout=30, check_same_thread=False)
    connection.row_factory = sqlite3.Row
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    connection.executescript(SCHEMA)
    _add_traits_columns(connection)
    _search_tables(connection)
    _shield_table(connection)
    if meta(connection, "dirs_format") != "2":  # keys once held NUL, which SQLite's text functions stop at
        with connection:
            connection.execute("DELETE FROM dirs")
            set_meta(connection, "dirs_format", "2")
    version = meta(connection, "masks_version")
    if version != str(MASKS_VERSION) or meta(connection, "ids") != IDS:
        with connection:
            connection.execute("DELETE FROM messages")
            connection.execute("DELETE FROM messages_fts")
            connection.execute("DELETE FROM messages_cjk")
            connection.execute("DELETE FROM dirs")
            set_meta(connection, "masks_version", str(MASKS_VERSION))
            set_meta(connection, "ids", IDS)
            bump(connection)
    if meta(connection, "attachment_text") != ATTACHMENT_TEXT:  # made before attachments' text was indexed
        with connection:
            for table in ("messages", "messages_fts", "messages_cjk", "dirs", "unreadable"):
                connection.execute(f"DELETE FROM {table}")
            set_meta(connection, "attachment_text", ATTACHMENT_TEXT)
            bump(connection)
    return connection


# The attachments' text in `body` (attachments.indexed), and the bounds it was read within: an index made without
# it, or under other bounds, is made again.
ATTACHMENT_TEXT = "1"


def _add_traits_columns(connection: sqlite3.Connection) -> None:
    """The columns the gate's traits need, added to an index made before them, which is then made again (its rows
    lack them): `refs` (every id the message names: its own, In-Reply-To's, References'), `labels` (1 when its
    masked subject, text or attachment names hold a mask label)."""
    have = {row[1] for row in connection.execute("PRAGMA table_info(messages)")}
    if "refs" in have and "labels" in have:
        return
    with connection:
        for column, kind in (("refs", "TEXT NOT NULL DEFAULT ''"), ("labels", "INTEGER NOT NULL DEFAULT 0")):
            if column not in have:
                connection.execute(f"ALTER TABLE messages ADD COLUMN {column} {kind}")
        set_meta(connection, "ids", "")  # read below as an index of another kind: emptied and made again


def _shield_table(connection: sqlite3.Connection) -> None:
    """The AI shield's verdicts (`maildirs.shield.SCHEMA`, kept by gateway_mail/mail/shield.py), made empty
    again when its schema changed."""
    if meta(connection, "shield_schema") != shield_table.SCHEMA_VERSION:
        with connection:
            connection.execute("DROP TABLE IF EXISTS shield")
        connection.executescript(shield_table.SCHEMA)
        with connection:
            set_meta(connection, "shield_schema", shield_table.SCHEMA_VERSION)
            connection.execute("DELETE FROM meta WHERE key IN ('shield_looked', 'shield_addresses')")


# How ids are made (an index of another kind is made again): "date" = from the date, see `date_key`.
IDS = "date"
# An id is the date's second shifted left by this many bits, plus a count of messages of that same second.
SAME_SECOND_BITS = 22
_LAST_SECOND = (1 << 40) - 1  # 36,000 years: a later date (a bogus header) is taken as this one


def date_key(date: float) -> int:
    """The smallest id a message of this date can have (dates before 1970 share the first second)."""
    return min(max(int(date), 0), _LAST_SECOND) << SAME_SECOND_BITS


def _free_id(connection: sqlite3.Connection, date: float) -> int:
    first = date_key(date)
    last = connection.execute("SELECT max(id) FROM messages WHERE id BETWEEN ? AND ?",
                              (first, first + (1 << SAME_SECOND_BITS) - 1)).fetchone()[0]
    if last is None:
        return first
    if last + 1 < first + (1 << SAME_SECOND_BITS):
        return last + 1
    # Four million messages of one second (only a forged or broken Date does that): any free id of the second.
    taken = {r[0] for r in connection.execute("SELECT id FROM messages WHERE id BETWEEN ? AND ?",
                                              (first, last))}
    return next(i for i in range(first, last + 1) if i not in taken)


_per_thread = threading.local()
_KEPT_PER_THREAD = 4


def thread_connection(path: Path, inode: int | None = None) -> sqlite3.Connection:
    """This thread's connection to the index, opened once and kept (a tool's call runs on a worker thread).

    Opening and closing on every call cost more than the Porch's queries: the schema read again, and the last
    connection's close checkpointing the WAL into the file. One per thread, so no two threads ever share one. A
    file replaced or removed meanwhile (another inode, or none) is opened again. `inode`: the file's, as a look
    that file notifications stand in for found it (None: stat the file now).
    """
    kept: dict[str, tuple[sqlite3.Connection, int]] = _per_thread.__dict__.setdefault("connections", {})
    if inode is None:
        try:
            inode = os.stat(path).st_ino
        except OSError:
            inode = -1
    found = kept.get(str(path))
    if found is not None and found[1] == inode and inode != -1:
        if found[0].in_transaction:  # left open by a call interrupted mid-write
            found[0].rollback()
        return found[0]
    if found is not None:
        found[0].close()
        del kept[str(path)]
    while len(kept) >= _KEPT_PER_THREAD:  # indexes of other homes (tests, demos): the oldest closed
        kept.pop(next(iter(kept)))[0].close()
    connection = connect(path)
    kept[str(path)] = (connection, path.stat().st_ino)
    return connection


def thread_inode(path: Path) -> int | None:
    """The inode of the file this thread's kept connection to the index at `path` reads (None: none kept)."""
    found = _per_thread.__dict__.get("connections", {}).get(str(path))
    return None if found is None else found[1]


def thread_of(parsed: Parsed, fallback: str) -> str:
    """A conversation's key: the first message it refers to (References' first, else In-Reply-To), else its own id."""
    return (parsed.references[0] if parsed.references else parsed.in_reply_to) or parsed.message_id or fallback


def read_row(job: tuple[Account, str, str, str, str, int, int]) -> dict[str, Any] | None:
    """One file parsed and masked into a row (None when it cannot be opened): run in worker processes too.

    Never raises on what the file holds: a message past the parser's bounds, or one it fails on, is a row of what
    could be read (its envelope at least) with `_unreadable` saying why, so that it is counted and not read again
    until the file changes.
    """
    account, folder, path, name, sub, size, mtime_ns = job
    try:
        parsed = parse_file(Path(path), account.authserv_id)
    except OSError:
        return None
    unreadable = parsed.unreadable
    try:
        shown = masked(parsed)
        attachments = [[attachment_name(a.name), a.type, a.size] for a in parsed.attachments]
        headers = [_searched(parsed.to_text), _searched(parsed.cc_text), _searched(parsed.list_id)]
    except Exception as error:  # noqa: BLE001 - the masks failing on one text fails that message alone
        unreadable = unreadable or f"its text could not be masked ({type(error).__name__})"
        shown = masked(Parsed(**{**_fields(parsed), "subject": "", "text": ""}))
        attachments = []
        headers = ["", "", ""]
    try:
        attached = indexed_attachments(parsed) if attachments else ""
    except Exception:  # noqa: BLE001 - the attachments' masks failing leave the message's own text indexed
        attached = ""
    # The attachments' text (masked) follows the message's in the `body` column: search, subject routes and the
    # gate's traits read that column, so each takes it as it takes the message's text.
    body = "" if parsed.encrypted else "\n\n".join(t for t in (shown.text, attached) if t)
    row = {
        "account": account.name, "folder": folder, "unique_name": maildir.unique_of(name), "sub": sub,
        "filename": name, "size": size, "mtime_ns": mtime_ns,
        "flags": maildir.flags_of(name), "message_id": parsed.message_id, "date": parsed.date,
        "sender": parsed.sender, "sender_name": shown.sender_name, "subject": shown.subject,
        "recipients": " ".join(parsed.to + parsed.cc), "in_reply_to": parsed.in_reply_to,
        "thread": thread_of(parsed, f"file:{account.name}/{folder}/{name}"), "auth": parsed.auth,
        "encrypted": int(parsed.encrypted), "code": int(shown.code), "password": int(shown.password),
        "bulk": int(parsed.bulk), "attachments": json.dumps(attachments),
        "refs": " ".join(ids_of_headers(parsed.message_id, parsed.in_reply_to,
                                        " ".join(f"<{r}>" for r in parsed.references))),
        "labels": int(any(has_label(t) for t in (shown.subject, body, *(a[0] for a in attachments)))),
        "_body": body, "_unreadable": unreadable,
        "_to": headers[0], "_cc": headers[1], "_list": headers[2],
    }
    return {key: text_of_raw(value) if isinstance(value, str) else value for key, value in row.items()}


def _fields(parsed: Parsed) -> dict[str, Any]:
    import attrs

    return attrs.asdict(parsed, recurse=False)


Progress = Callable[[int], None]


def refresh(connection: sqlite3.Connection, accounts: Iterable[Account], *, full: bool = False,
            progress: Progress | None = None, check: Callable[[], None] | None = None,
            workers: int = 1, walked: dict[str, list[maildir.Folder]] | None = None) -> dict[str, int]:
    """Bring the index up to what is on disk; `full` lists every folder (a stat per file) even when unchanged.

    `workers` > 1 parses new files in that many processes (`gateway mail index`; a tool's call stays in its thread).
    `walked`, when given, is filled with each account's folders as this refresh found them (by account name; an
    account whose root is not there is absent), so that a caller need not walk the Maildirs a second time.

    Returns counts: read (files parsed), moved (rows whose place or flags changed), removed, unreadable.
    """
    counts = {"read": 0, "moved": 0, "removed": 0, "unreadable": 0}
    accounts = list(accounts)
    with _lock(Path(connection.execute("PRAGMA database_list").fetchone()[2] or ":memory:")):
        known = {a.name for a in accounts}
        # The accounts and folders indexed are read from `meta` and `dirs` (a few rows); a full refresh also
        # asks the messages themselves (every row), for rows a refresh stopped at its deadline left unrecorded.
        indexed = {key[5:] for (key,) in connection.execute("SELECT key FROM meta WHERE key LIKE 'root:%'")}
        if full:
            indexed |= {name for (name,) in connection.execute("SELECT DISTINCT account FROM messages")}
        with connection:
            for name in indexed - known:
                counts["removed"] += _delete(connection, "account = ?", (name,))
                connection.execute("DELETE FROM dirs WHERE substr(path, 1, ?) = ?", (len(name) + 1, name + "\x1f"))
                connection.execute("DELETE FROM meta WHERE key = ?", (f"root:{name}",))
        pool = None
        if workers > 1:
            import multiprocessing

            pool = multiprocessing.get_context("forkserver").Pool(workers)
        try:
            for account in accounts:
                found = _refresh_account(connection, account, full, counts, progress, check, pool)
                if walked is not None and found is not None:
                    walked[account.name] = found
        except BaseException:
            # Stopped (the call's deadline): the rows written and removed so far are kept, so the index changed,
            # whatever the counts say (a row replaced and not parsed again is counted nowhere). What the gate
            # remembers of the index (keyed by its generation) must be worked out again.
            with connection:
                bump(connection)
            raise
        finally:
            if pool is not None:
                pool.close()
                pool.join()
        if any(counts.values()):
            with connection:
                bump(connection)
        if check is None and (counts["read"] + counts["removed"] >= MERGE_AFTER or (full and segments(connection) > 1)):
            merge_segments(connection)
    return counts


# FTS5 keeps what each batch of inserts wrote as a segment of its own and merges them only a few at a time, so a
# mailbox indexed in batches is searched through 15 or so segments: every word of every query is looked up in each.
# One segment halves a search's statement (the median of bench_mail_served.py's 22 queries, at 10,000 and 100,000
# messages; the rare word's from 213 to 156 us at 100,000). A refresh without a deadline (`gateway mail index`,
# `gateway watch`) that read or removed this many messages merges them all into one afterwards; so does a full one
# (`gateway mail index --full`) whenever there are several. A tool's call never does (at 100,000 messages the merge
# takes 2.6 s of CPU): the new segments of small deliveries are left to FTS5's own merging.
MERGE_AFTER = 1000


def segments(connection: sqlite3.Connection) -> int:
    """How many segments the search index is kept in (FTS5's `%_idx` table holds a row per segment and leaf)."""
    return connection.execute("SELECT count(*) FROM (SELECT DISTINCT segid FROM messages_fts_idx)").fetchone()[0]


def merge_segments(connection: sqlite3.Connection) -> None:
    """The search tables' segments merged into one each (FTS5's `optimize`): the same rows and matches, found with
    one look-up per word instead of one per segment."""
    with connection:
        for table in ("messages_fts", "messages_cjk"):
            connection.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")


def _delete(connection: sqlite3.Connection, where: str, values: tuple[Any, ...]) -> int:
    ids = [r[0] for r in connection.execute(f"SELECT id FROM messages WHERE {where}", values)]
    connection.executemany("DELETE FROM messages_fts WHERE rowid = ?", [(i,) for i in ids])
    connection.executemany("DELETE FROM messages_cjk WHERE rowid = ?", [(i,) for i in ids])
    connection.executemany("DELETE FROM unreadable WHERE id = ?", [(i,) for i in ids])
    connection.executemany("DELETE FROM messages WHERE id = ?", [(i,) for i in ids])
    return len(ids)


def _refresh_account(connection: sqlite3.Connection, account: Account, full: bool, counts: dict[str, int],
                     progress: Progress | None, check: Callable[[], None] | None,
                     pool: Any) -> list[maildir.Folder] | None:
    """One account brought up to date; the folders found under its root (None: the root is not there)."""
    root_key = f"root:{account.name}"
    if not account.maildir.is_dir():
        return None  # a root gone (a disk not mounted, a typo): its rows are kept, and come back with it
    # The account's root and its server's name: either changed, its mail is read again (the verdicts depend on both).
    root_value = f"{account.maildir}\x1fauthserv_id={account.authserv_id}"
    if meta(connection, root_key) != root_value:
        with connection:
            counts["removed"] += _delete(connection, "account = ?", (account.name,))
            connection.execute("DELETE FROM dirs WHERE substr(path, 1, ?) = ?",
                               (len(account.name) + 1, account.name + "\x1f"))
            set_meta(connection, root_key, root_value)
    found = maildir.folders(account.maildir)
    names = {f.name for f in found}
    prefix = account.name + "\x1f"
    indexed = {path.split("\x1f")[1] for (path,) in connection.execute(
        "SELECT path FROM dirs WHERE substr(path, 1, ?) = ?", (len(prefix), prefix))}
    if full:
        indexed |= {folder for (folder,) in connection.execute(
            "SELECT DISTINCT folder FROM messages WHERE account = ?", (account.name,))}
    with connection:
        for folder in indexed - names:
            counts["removed"] += _delete(connection, "account = ? AND folder = ?", (account.name, folder))
            connection.execute("DELETE FROM dirs WHERE path IN (?, ?)",
                               *[(f"{prefix}{folder}\x1fnew", f"{prefix}{folder}\x1fcur")])
    now = time.time_ns()
    for folder in found:
        times = {}
        for sub in maildir.SUBDIRS:
            try:
                times[sub] = os.stat(folder.path / sub).st_mtime_ns
            except OSError:
                times[sub] = -1
        keys = {sub: f"{account.name}\x1f{folder.name}\x1f{sub}" for sub in maildir.SUBDIRS}
        recorded = {sub: connection.execute("SELECT mtime_ns FROM dirs WHERE path = ?", (keys[sub],)).fetchone()
                    for sub in maildir.SUBDIRS}
        if not full and all(recorded[s] is not None and recorded[s][0] == times[s] for s in maildir.SUBDIRS):
            continue
        _refresh_folder(connection, account, folder, counts, progress, check, pool)
        with connection:
            for sub in maildir.SUBDIRS:
                settled = times[sub] if now - times[sub] > _SETTLE_NS else 0
                connection.execute("INSERT OR REPLACE INTO dirs (path, mtime_ns) VALUES (?, ?)", (keys[sub], settled))
    return found


_BATCH = 500


def _refresh_folder(connection: sqlite3.Connection, account: Account, folder: maildir.Folder, counts: dict[str, int],
                    progress: Progress | None, check: Callable[[], None] | None, pool: Any = None) -> None:
    listing = connection.cursor()
    listing.row_factory = None  # plain tuples: this runs once per message of the folder
    rows = {
        r[1]: r
        for r in listing.execute(
            "SELECT id, unique_name, sub, filename, size, mtime_ns FROM messages WHERE account = ? AND folder = ?",
            (account.name, folder.name),
        )
    }
    seen: set[str] = set()
    jobs: list[tuple[Account, str, str, str, str, int, int]] = []
    replaced: list[int] = []
    for entry in maildir.messages(folder.path):
        if check:
            check()
        unique = maildir.unique_of(entry.name)
        if unique in seen:
            continue
        seen.add(unique)
        sub = entry.path[-len(entry.name) - 4:-len(entry.name) - 1]  # "new" or "cur", without a Path
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        known = rows.get(unique)
        if known is not None and known[4] == info.st_size and known[5] == info.st_mtime_ns:
            if known[3] != entry.name or known[2] != sub:
                connection.execute("UPDATE messages SET sub = ?, filename = ?, flags = ? WHERE id = ?",
                                   (sub, entry.name, maildir.flags_of(entry.name), known[0]))
                counts["moved"] += 1
            if progress:
                progress(1)
            continue
        if known is not None:
            replaced.append(known[0])
        jobs.append((account, folder.name, entry.path, entry.name, sub, info.st_size, info.st_mtime_ns))
    with connection:
        for message_id in replaced:
            _delete(connection, "id = ?", (message_id,))
    parsed = pool.imap(read_row, jobs, chunksize=64) if pool is not None else map(read_row, jobs)
    pending: list[dict[str, Any]] = []
    try:
        for row in parsed:  # each file is parsed as the loop asks for it: the deadline is looked at between two
            if progress:
                progress(1)
            if row is None:
                counts["unreadable"] += 1
            else:
                pending.append(row)
                counts["read"] += 1
                counts["unreadable"] += bool(row["_unreadable"])
                if len(pending) >= _BATCH:
                    _insert(connection, pending)
            if check:
                check()
    except BaseException:
        _keep(connection, pending)
        raise
    _insert(connection, pending)
    gone = [r[0] for u, r in rows.items() if u not in seen]
    with connection:
        for message_id in gone:
            _delete(connection, "id = ?", (message_id,))
    counts["removed"] += len(gone)


def _insert(connection: sqlite3.Connection, pending: list[dict[str, Any]]) -> None:
    """Write the rows parsed, in one transaction; `pending` is emptied once they are in (kept when it fails)."""
    with connection:
        for parsed_row in pending:
            row = {key: value for key, value in parsed_row.items() if not key.startswith("_")}
            row["id"] = _free_id(connection, row["date"])
            columns = ", ".join(row)
            cursor = connection.execute(
                f"INSERT INTO messages ({columns}) VALUES ({', '.join('?' * len(row))})", tuple(row.values())
            )
            fields = _search_fields(row, parsed_row)
            connection.execute(_INSERT_FTS.format(table="messages_fts"), (cursor.lastrowid, *fields))
            side = [cjk_words(field) for field in fields]
            if any(side):
                connection.execute(_INSERT_FTS.format(table="messages_cjk"), (cursor.lastrowid, *side))
            if parsed_row["_unreadable"]:
                connection.execute("INSERT INTO unreadable (id, reason) VALUES (?, ?)",
                                   (cursor.lastrowid, parsed_row["_unreadable"]))
    pending.clear()


_NO_NAME = "(no name)"  # what parse names an attachment whose part gives no name: not a word to search
_INSERT_FTS = (f"INSERT INTO {{table}} (rowid, {', '.join(SEARCH_COLUMNS)}) "
               f"VALUES (?, {', '.join('?' * len(SEARCH_COLUMNS))})")


def _search_fields(row: dict[str, Any], parsed_row: dict[str, Any]) -> tuple[str, ...]:
    """A message's searchable text, one value per column of SEARCH_COLUMNS (all masked but the sender's address)."""
    names = " ".join(a[0] for a in json.loads(row["attachments"]) if a[0] != _NO_NAME)
    return (row["subject"], f"{row['sender_name']} {row['sender']}", parsed_row["_body"], parsed_row["_to"],
            parsed_row["_cc"], parsed_row["_list"], names)


def _keep(connection: sqlite3.Connection, pending: list[dict[str, Any]]) -> None:
    """The rows parsed before a refresh stopped (its deadline, an interruption) written all the same: parsing was
    the cost, writing them is milliseconds, and a row dropped here would be parsed again by every call. The
    deadline's SQLite interruption is lifted for this write (the caller's `interrupting` block removes it anyway)."""
    if not pending:
        return
    connection.set_progress_handler(None, 0)
    if connection.in_transaction:
        connection.rollback()
    with contextlib.suppress(sqlite3.Error):  # the index itself failing: the next call parses them again
        _insert(connection, pending)


def unreadable(connection: sqlite3.Connection, account: str, limit: int = 5) -> tuple[int, list[tuple[str, str]]]:
    """How many of an account's indexed messages were read in part, and the first few (file under the account's
    Maildir, why)."""
    total = connection.execute("SELECT count(*) FROM unreadable u JOIN messages m ON m.id = u.id WHERE m.account = ?",
                               (account,)).fetchone()[0]
    rows = connection.execute(
        "SELECT m.folder, m.sub, m.filename, u.reason FROM unreadable u JOIN messages m ON m.id = u.id "
        "WHERE m.account = ? ORDER BY m.folder, m.filename LIMIT ?", (account, limit)).fetchall()
    return total, [(f"{r[0]}/{r[1]}/{r[2]}", r[3]) for r in rows]


def count_files(accounts: Iterable[Account]) -> int:
    """How many message files the accounts hold (for a progress bar)."""
    return sum(1 for a in accounts for f in maildir.folders(a.maildir) for _ in maildir.messages(f.path))
