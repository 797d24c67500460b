"""The tie store: a tie between two addresses the gateway knows, or an address and an http(s) page, made once.

Kept in SQLite in the plugin's data folder (`ties.sqlite3`, 0600). A tie has no direction: `of(a)` gives what a is
tied to whichever side it was written on. Nothing is ever taken out or changed, a tie made twice is kept once.
What is written is checked here as mail is (one line, a known scheme, http(s) only for pages, never a file or
another program's scheme); whether the thing exists and may be tied is the caller's work (the gate, the stores).
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from gateway import Context, ToolError

FILE_NAME = "ties.sqlite3"
MAX_ADDRESS = 2048
KINDS = ("task", "event", "note", "contact", "project", "draft", "remind")
_BLANK = re.compile(r"[\x00-\x20\x7f\x85\xa0\u1680\u2000-\u200f\u2028-\u202f\u205f\u3000\ufeff]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")
# What stays as it is in an id of a sioul: address; anything else (a space, %, a line break) is %-escaped.
_SAFE = "/@:+=,;~!$&'()*-._"


def address(kind: str, ident: str) -> str:
    """The address of a thing: `sioul:<kind>/<id>`, the id %-escaped where it holds a space or a symbol."""
    return f"sioul:{kind}/{quote(ident, safe=_SAFE)}"


def ident_of(value: str, kind: str) -> str | None:
    """The id of `sioul:<kind>/<id>` (unescaped), or None if `value` is no address of that kind."""
    prefix = f"sioul:{kind}/"
    if kind == "project" and value.startswith("sioul:case/"):
        value = prefix + value[len("sioul:case/"):]
    if not value.startswith(prefix) or len(value) == len(prefix):
        return None
    return unquote(value[len(prefix):])
_SCHEMA = """
CREATE TABLE IF NOT EXISTS ties (
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    made REAL NOT NULL,
    PRIMARY KEY (a, b)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ties_b ON ties (b);
"""


def canonical(value: str) -> str:
    """One end of a tie as it is kept, or a ToolError saying what is wrong.

    `sioul:<kind>/<id>` (`sioul:case/` read as `sioul:project/`), `mid:<Message-ID>` (angle brackets dropped), or
    an http(s) URL with a host. No line break or control character (escaped or not), no space in a mail or web address: a tie's words could reach a file
    that the next sync sends (a task's RELATED-TO, a note's text).
    """
    if not isinstance(value, str) or not value:
        raise ToolError("an address is needed: sioul:<kind>/<id>, mid:<Message-ID> or an http(s) URL")
    if len(value) > MAX_ADDRESS:
        raise ToolError(f"an address has at most {MAX_ADDRESS} characters")
    if _CONTROL.search(value):
        raise ToolError("an address may hold no line break or control character")
    scheme, _, rest = value.partition(":")
    scheme = scheme.lower()
    if scheme != "sioul" and _BLANK.search(value):
        raise ToolError("a mail or web address may hold no space")
    if scheme == "mid":
        rest = rest.removeprefix("<").removesuffix(">")
        if not rest or "<" in rest or ">" in rest:
            raise ToolError(f"{value!r:.80} is not a mail address: mid:<Message-ID>")
        return f"mid:{rest}"
    if scheme == "sioul":
        kind, slash, ident = rest.partition("/")
        kind = "project" if kind == "case" else kind
        if not slash or kind not in KINDS or not ident:
            raise ToolError(f"{value!r:.80} is not an address the gateway gives: sioul:<kind>/<id>, kind one of "
                            + ", ".join(KINDS))
        # An escaped line break (%0A) is one all the same once the id is read back.
        if _CONTROL.search(unquote(ident)):
            raise ToolError("an address may hold no line break or control character, escaped or not")
        return address(kind, unquote(ident))
    if scheme in ("http", "https"):
        parts = urlsplit(value)
        if not parts.hostname or "@" in parts.netloc:
            raise ToolError(f"{value!r:.80} is not a web page's address (a host is needed, no user name)")
        return value
    raise ToolError(f"a tie goes only to what the gateway knows (sioul:..., mid:...) or to an http(s) page, "
                    f"never to a file or another scheme: {value!r:.80}")


def is_page(address: str) -> bool:
    return address.lower().startswith(("http:", "https:"))


class Ties:
    """An open tie store; one per call (a connection is not shared across threads). Use as a context manager."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    @classmethod
    def open(cls, ctx: Context) -> Ties:
        return cls.at(Path(ctx.folders.data) / FILE_NAME)

    @classmethod
    def at(cls, path: Path) -> Ties:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # Made 0600 before SQLite opens it, whatever the umask of the process that first writes a tie.
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW, 0o600))
        if os.stat(path).st_mode & 0o077:
            os.chmod(path, 0o600)
        connection = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.executescript(_SCHEMA)
        return cls(connection)

    def add(self, a: str, b: str) -> bool:
        """Tie a to b (both checked by `canonical`); False if they were tied already."""
        first, second = sorted((canonical(a), canonical(b)))
        if first == second:
            raise ToolError("a thing cannot be tied to itself")
        if is_page(first) and is_page(second):
            raise ToolError("a tie joins a thing the gateway knows to another, or to a web page: not two pages")
        cursor = self.connection.execute("INSERT OR IGNORE INTO ties (a, b, made) VALUES (?, ?, ?)",
                                         (first, second, time.time()))
        return cursor.rowcount == 1

    def of(self, address: str) -> list[str]:
        """What `address` is tied to, oldest tie first."""
        key = canonical(address)
        rows = self.connection.execute(
            "SELECT b, made FROM ties WHERE a = ? UNION ALL SELECT a, made FROM ties WHERE b = ? ORDER BY 2, 1",
            (key, key)).fetchall()
        return [row[0] for row in rows]

    def all(self) -> list[tuple[str, str]]:
        """Every tie (for working out what belongs to a project in one pass)."""
        return [(a, b) for a, b in self.connection.execute("SELECT a, b FROM ties ORDER BY made, a, b")]

    def version(self) -> tuple[int, float]:
        """Changes whenever a tie is made (for what is remembered of who owns what)."""
        count, newest = self.connection.execute("SELECT count(*), coalesce(max(made), 0) FROM ties").fetchone()
        return int(count), float(newest)

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> Ties:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None,
                 ) -> Any:
        self.close()
        return None
