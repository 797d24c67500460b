"""A new mail index, and a new notes index, opened by several threads at once (a server's first calls, asked
together): each thread's connection checks the schema and the masks' version, and none of them empties the index
that another one has filled meanwhile. An index emptied under a generation that readers had already taken would
let a reader keep, for that generation, the verdicts of an empty index (nothing closed) and apply them to the
messages it found: a closed project's message given. Every thread must also open the index without an error."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from email.message import EmailMessage
from email.utils import formatdate
from pathlib import Path

from gateway_mail import docindex
from gateway_mail.mail import index
from gateway_mail.mail.accounts import Account
from gateway_mail.notes import notes

THREADS = 6
TRIALS = 12  # before the fix, about one trial in three had an error or an index emptied after it was filled
MESSAGES = 12


def _maildir(root: Path) -> None:
    for sub in ("cur", "new", "tmp"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    now = time.time()
    for i in range(MESSAGES):
        message = EmailMessage()
        message["From"] = f"sender{i}@example.org"
        message["To"] = "pat@example.org"
        message["Subject"] = f"word{i}"
        message["Date"] = formatdate(now - 600)
        message["Message-ID"] = f"<m{i}@example.org>"
        message.set_content(f"text {i}\n")
        (root / "cur" / f"{int(now)}.M{i}P1.example:2,S").write_bytes(bytes(message))


def _watched(path: Path, table: str, stop: threading.Event, counts: list[int]) -> None:
    """Every row count of `table` the index went through, read on a connection of its own."""
    while not path.exists() and not stop.is_set():
        time.sleep(0.0005)
    connection = sqlite3.connect(path, timeout=30)
    try:
        while not stop.is_set():
            try:
                count = connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            except sqlite3.Error:  # the table not made yet
                count = 0
            if not counts or counts[-1] != count:
                counts.append(count)
            time.sleep(0.0005)
    finally:
        connection.close()


def _at_once(open_and_fill: Callable[[], None], path: Path, table: str) -> tuple[list[str], list[int]]:
    """`open_and_fill` run by THREADS threads released together; the errors, and the row counts seen meanwhile."""
    errors: list[str] = []
    counts: list[int] = []
    start = threading.Barrier(THREADS)
    stop = threading.Event()

    def one() -> None:
        start.wait()
        try:
            open_and_fill()
        except Exception as error:  # noqa: BLE001 - said by the assertion
            errors.append(f"{type(error).__name__}: {error}")

    watcher = threading.Thread(target=_watched, args=(path, table, stop, counts))
    watcher.start()
    threads = [threading.Thread(target=one) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    watcher.join()
    return errors, counts


def _emptied_once_filled(counts: list[int]) -> bool:
    return any(before > 0 and after < before for before, after in zip(counts, counts[1:], strict=False))


def test_a_new_mail_index_opened_by_threads_at_once_is_never_emptied_once_filled(tmp_path: Path) -> None:
    for trial in range(TRIALS):
        home = tmp_path / str(trial)
        _maildir(home / "Mail")
        account = Account("selftest", home / "Mail")
        path = index.index_path(home / "cache")

        def open_and_fill(path: Path = path, account: Account = account) -> None:
            connection = index.connect(path)
            try:
                index.refresh(connection, [account])
            finally:
                connection.close()

        errors, counts = _at_once(open_and_fill, path, "messages")
        assert errors == [], errors
        assert not _emptied_once_filled(counts), f"messages in the index as it went: {counts}"
        with sqlite3.connect(path) as connection:
            assert connection.execute("SELECT count(*) FROM messages").fetchone()[0] == MESSAGES


def test_a_new_notes_index_opened_by_threads_at_once_is_never_emptied_once_filled(tmp_path: Path) -> None:
    for trial in range(TRIALS):
        root = tmp_path / str(trial) / "Notes"
        root.mkdir(parents=True)
        for i in range(MESSAGES):
            (root / f"Note {i}.md").write_text(f"# Note {i}\n\nword{i}\n")
        path = tmp_path / str(trial) / "cache" / notes.INDEX_FILE

        def open_and_fill(root: Path = root, path: Path = path) -> None:
            connection = docindex.connect(path, root)
            try:
                docindex.refresh(connection, root, notes.SUFFIXES, notes.read_file)
            finally:
                connection.close()

        errors, counts = _at_once(open_and_fill, path, "files")
        assert errors == [], errors
        assert not _emptied_once_filled(counts), f"files in the index as it went: {counts}"
