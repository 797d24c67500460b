"""The mail ties read through file notifications (`belonging.mail_ties`: no stat of the tie store while its folder
has been quiet) give what reading the store afresh gives, after every kind of change made between two calls: a first
tie, a tie made by a connection kept open, by another process, a checkpoint, the store removed and made again, the
data folder removed and made again. Each change is made once the notifications stand in for the stats, so the test
plays the shortcut, not the stat pass."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from gateway_mail.projects import belonging
from gateway_mail.projects.ties import FILE_NAME, Ties


def _long_way(data: Path) -> dict[str, frozenset[str]]:
    """The ties read afresh: each message (`mid:`) and the projects (`sioul:project/...`) it is tied to."""
    path = data / FILE_NAME
    if not path.exists():
        return {}
    connection = sqlite3.connect(path)
    try:
        rows = connection.execute("SELECT a, b FROM ties").fetchall()
    finally:
        connection.close()
    found: dict[str, set[str]] = {}
    for pair in rows:
        for one, other in (pair, pair[::-1]):
            if one.startswith("sioul:project/") and other.startswith("mid:"):
                found.setdefault(other[4:], set()).add(one[len("sioul:project/"):])
    return {message: frozenset(projects) for message, projects in found.items()}


def _settled(data: Path) -> None:
    """Calls until the notifications stand in for the stats (a folder watched anew is trusted from the next pass)."""
    for _ in range(4):
        belonging.mail_ties(data)
        noted = belonging._ties_noted.get(str(data / FILE_NAME))
        if noted is not None and noted.seen() is not None:
            return
    raise AssertionError("the tie store's notifications were never trusted")


def _same(data: Path) -> None:
    assert dict(belonging.mail_ties(data).projects) == _long_way(data)


def _tie(path: Path, message: str, project: str) -> None:
    with Ties.at(path) as ties:
        ties.add(f"mid:{message}", f"sioul:project/{project}")


ANOTHER_PROCESS = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("PRAGMA journal_mode=WAL")
connection.execute("INSERT INTO ties (a, b, made) VALUES (?, ?, ?)", (sys.argv[2], sys.argv[3], time.time()))
connection.close()
"""


def test_mail_ties_through_notifications_are_the_ties_read_afresh_after_each_change(tmp_path: Path) -> None:
    data = tmp_path / "data"
    path = data / FILE_NAME
    # No data folder, then no store: none, and nothing made to find that out.
    _settled(data)
    _same(data)
    assert not data.exists()
    data.mkdir()
    _same(data)
    _settled(data)
    _tie(path, "first@example.org", "vault")  # the store made by the first tie
    _same(data)
    assert belonging.mail_ties(data).projects == {"first@example.org": frozenset({"vault"})}

    # A connection kept open (its log not checkpointed) ties another message.
    kept = Ties.at(path)
    try:
        _settled(data)
        kept.add("mid:second@example.org", "sioul:project/client")
        _same(data)
        _settled(data)
        kept.add("sioul:project/vault", "mid:second@example.org")  # the project at either end
        _same(data)
        assert belonging.mail_ties(data).projects["second@example.org"] == frozenset({"client", "vault"})
    finally:
        kept.close()  # the last connection: the log checkpointed into the store and removed
    _same(data)

    # Another process, on its own connection.
    _settled(data)
    subprocess.run([sys.executable, "-c", ANOTHER_PROCESS, str(path), "mid:third@example.org",
                    "sioul:project/plumbing"], check=True)
    _same(data)
    assert "third@example.org" in belonging.mail_ties(data).projects

    # A checkpoint alone, then a tie made in the same second as the last (the store's size and time may not move
    # much: the log's event is what says it).
    _settled(data)
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    _same(data)
    _settled(data)
    _tie(path, "fourth@example.org", "client")
    _same(data)

    # The store removed, then made again with other ties.
    _settled(data)
    for name in (FILE_NAME, f"{FILE_NAME}-wal", f"{FILE_NAME}-shm"):
        (data / name).unlink(missing_ok=True)
    _same(data)
    assert belonging.mail_ties(data).projects == {}
    _settled(data)
    _tie(path, "fifth@example.org", "vault")
    _same(data)
    assert belonging.mail_ties(data).projects == {"fifth@example.org": frozenset({"vault"})}

    # The whole data folder removed and made again.
    _settled(data)
    shutil.rmtree(data)
    _same(data)
    data.mkdir()
    _tie(path, "sixth@example.org", "plumbing")
    _same(data)
    assert belonging.mail_ties(data).projects == {"sixth@example.org": frozenset({"plumbing"})}


def test_a_store_with_a_second_name_is_stat_ed_on_every_call(tmp_path: Path) -> None:
    """A hard link elsewhere to the store: an edit through it makes no event in the store's folder, so the
    notifications never stand in for the stats there."""
    data = tmp_path / "data"
    data.mkdir()
    _tie(data / FILE_NAME, "first@example.org", "vault")
    os.link(data / FILE_NAME, tmp_path / "elsewhere.sqlite3")
    for _ in range(4):
        _same(data)
        assert belonging._ties_noted[str(data / FILE_NAME)].seen() is None
    time.sleep(0.01)
    (tmp_path / "elsewhere.sqlite3").unlink()
    _settled(data)
    _same(data)
