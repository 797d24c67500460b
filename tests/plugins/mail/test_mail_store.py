"""The Maildir side: folders in every layout, flags, parsing, forged and encrypted mail, the masked index."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path

import pytest
from gateway_mail.mail import index, maildir, parse, sample
from gateway_mail.mail.accounts import (
    Account,
    ConfigProblem,
    accounts_of,
    in_window,
    next_opening,
    windows_of,
)

from gateway import MASKS_VERSION


def test_folders_are_found_in_every_layout(tmp_path: Path) -> None:
    mbsync, plusplus, offlineimap = tmp_path / "mbsync", tmp_path / "plusplus", tmp_path / "offlineimap"
    for folder in ("INBOX", "Archive/2026", "[Gmail]/Sent Mail"):
        sample.make_folder(mbsync / folder)
    sample.make_folder(plusplus)
    for folder in (".Archive.2026", ".Sent"):
        sample.make_folder(plusplus / folder)
    for folder in ("INBOX", "INBOX.Sent"):
        sample.make_folder(offlineimap / folder)
    (mbsync / ".mbsyncstate").write_text("")
    assert [f.name for f in maildir.folders(mbsync)] == ["INBOX", "[Gmail]/Sent Mail", "Archive/2026"]
    assert [f.name for f in maildir.folders(plusplus)] == ["INBOX", "Archive/2026", "Sent"]
    assert [f.name for f in maildir.folders(offlineimap)] == ["INBOX", "INBOX/Sent"]


def test_flags_come_from_the_info_suffix() -> None:
    assert maildir.flags_of("1700.M1P1.host,U=12:2,SR") == "RS"
    assert maildir.flags_of("1700.M1P1.host!2,FSa") == "FS"  # "!" on systems without ":"; "a" a keyword
    assert maildir.flags_of("1700.M1P1.host") == ""
    assert maildir.unique_of("1700.M1P1.host,U=12:2,SR") == "1700.M1P1.host,U=12"


def test_account_keys_are_checked_by_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigProblem, match="unknown key.*password"):
        accounts_of([{"name": "a", "maildir": "/m", "password": "x"}], Path)
    with pytest.raises(ConfigProblem, match="used twice"):
        accounts_of([{"name": "a", "maildir": "/m"}, {"name": "a", "maildir": "/n"}], Path)
    found = accounts_of([{"name": "a", "maildir": "~/Mail", "addresses": ["pat@example.org"]}],
                        lambda v: Path(v).expanduser())
    assert found[0].drafts == "Drafts" and found[0].maildir == Path("~/Mail").expanduser()


def test_admin_windows() -> None:
    from datetime import datetime

    windows = windows_of(["09:00-10:00", "22:00-01:00"])
    assert in_window(windows, datetime(2026, 11, 30, 9, 30))
    assert in_window(windows, datetime(2026, 11, 30, 0, 30))
    assert not in_window(windows, datetime(2026, 11, 30, 12, 0))
    assert next_opening(windows, datetime(2026, 11, 30, 12, 0)) == datetime(2026, 11, 30, 22, 0)
    with pytest.raises(ConfigProblem):
        windows_of(["9h-10h"])


def _bytes(**fields) -> bytes:
    return bytes(sample.message(**fields))


def test_forgery_is_judged_from_the_accounts_own_server_only() -> None:
    own = "mx.example.org"
    dmarc_fail = {"Authentication-Results": f"{own}; dmarc=fail header.from=client.example.com"}
    assert parse.parse(_bytes(sender="ceo@client.example.com", headers=dmarc_fail), authserv_id=own).auth == "forged"
    unaligned = {"Authentication-Results": f"{own}; spf=pass smtp.mailfrom=evil.example.net; dkim=none"}
    assert parse.parse(_bytes(sender="ceo@client.example.com", headers=unaligned), authserv_id=own).auth == "forged"
    aligned = {"Authentication-Results": f"{own}; dkim=pass header.d=mail.client.example.com"}
    assert parse.parse(_bytes(sender="ceo@client.example.com", headers=aligned), authserv_id=own).auth == "pass"
    # Another server's header is the sender's word: ignored, whatever it claims.
    theirs = {"Authentication-Results": "relay.example.net; dmarc=pass header.from=client.example.com"}
    assert parse.parse(_bytes(sender="ceo@client.example.com", headers=theirs), authserv_id=own).auth == (
        "unauthenticated")


def test_html_becomes_text_and_encrypted_mail_gives_no_text() -> None:
    parsed = parse.parse(_bytes(body="", html="<style>p{}</style><p>Hello <b>Pat</b></p><table><tr><td>1</td>"
                                              "<td>2</td></tr></table>"))
    assert "Hello" in parsed.text and "Pat" in parsed.text and "p{}" not in parsed.text
    sealed = parse.parse(b'Content-Type: application/pkcs7-mime; smime-type=enveloped-data\r\nFrom: a@example.org'
                         b'\r\n\r\nMIIB')
    assert sealed.encrypted and sealed.text == ""


def _account(root: Path) -> Account:
    return Account("personal", root, ("pat@example.org",), sample.OWN_SERVER)


def test_the_index_is_private_masked_and_versioned(tmp_path: Path) -> None:
    root = tmp_path / "Mail"
    sample.world(root, "zebracanary", time.time())
    path = tmp_path / "cache" / "mail-index.sqlite"
    connection = index.connect(path)
    counts = index.refresh(connection, [_account(root)])
    assert counts["read"] == 12
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert index.meta(connection, "masks_version") == str(MASKS_VERSION)
    for digits in ("482913", "482", "20041010", "4111", "Xy7", "abcdef0123456789", "739156"):
        assert not connection.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?",
                                      (f'"{digits}"',)).fetchall(), digits
    connection.close()
    raw = path.read_bytes() + (path.with_name(path.name + "-wal").read_bytes()
                               if path.with_name(path.name + "-wal").exists() else b"")
    for secret in (b"482 913", b"482913", b"3M02 606", b"4111 1111", b"Xy7!pq9Zk", b"abcdef0123456789"):
        assert secret not in raw


def test_an_index_of_other_masks_is_made_again(tmp_path: Path) -> None:
    root = tmp_path / "Mail"
    sample.world(root, "zebracanary", time.time())
    path = tmp_path / "mail-index.sqlite"
    connection = index.connect(path)
    index.refresh(connection, [_account(root)])
    index.set_meta(connection, "masks_version", "1")
    connection.commit()
    connection.close()
    connection = index.connect(path)
    assert connection.execute("SELECT count(*) FROM messages").fetchone()[0] == 0
    assert index.refresh(connection, [_account(root)])["read"] == 12


def test_a_moved_or_reflagged_file_is_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "Mail"
    sample.world(root, "zebracanary", time.time())
    connection = index.connect(tmp_path / "mail-index.sqlite")
    index.refresh(connection, [_account(root)])
    fresh = next((root / "INBOX" / "new").iterdir())
    os.rename(fresh, root / "INBOX" / "cur" / f"{fresh.name}:2,S")
    moved = f"{fresh.name}:2,S"  # not the file just moved: another one, flagged anew
    flagged = next(p for p in (root / "INBOX" / "cur").iterdir() if p.name.endswith(":2,S") and p.name != moved)
    os.rename(flagged, flagged.with_name(flagged.name.replace(":2,S", ":2,RS")))
    reads = []
    monkeypatch.setattr(index, "parse_file", lambda *a: reads.append(a) or parse.parse_file(*a))
    counts = index.refresh(connection, [_account(root)], full=True)
    assert reads == [] and counts["moved"] == 2 and counts["read"] == 0
    rows = dict(connection.execute("SELECT filename, flags FROM messages").fetchall())
    assert rows[f"{fresh.name}:2,S"] == "S" and rows[flagged.name.replace(":2,S", ":2,RS")] == "RS"
    # A new file is read, a deleted one leaves the index.
    sample.deliver(root / "INBOX", sample.message(subject="Later"), flags=None)
    os.unlink(root / "INBOX" / "cur" / f"{fresh.name}:2,S")
    counts = index.refresh(connection, [_account(root)], full=True)
    assert counts["read"] == 1 and counts["removed"] == 1 and len(reads) == 1


def test_an_unchanged_folder_is_not_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "Mail"
    sample.world(root, "zebracanary", time.time() - 10)
    for folder in maildir.folders(root):  # directories older than the settling time are trusted
        for sub in ("cur", "new"):
            os.utime(folder.path / sub, (time.time() - 60, time.time() - 60))
    connection = index.connect(tmp_path / "mail-index.sqlite")
    index.refresh(connection, [_account(root)])
    listed = []
    monkeypatch.setattr(maildir, "messages", lambda folder: listed.append(folder) or iter(()))
    index.refresh(connection, [_account(root)])
    assert listed == []


def test_the_index_file_rejects_nothing_but_is_sqlite(tmp_path: Path) -> None:
    connection = index.connect(tmp_path / "i.sqlite")
    assert isinstance(connection, sqlite3.Connection)
    assert {"messages", "messages_fts", "meta", "dirs"} <= {
        r[0] for r in connection.execute("SELECT name FROM sqlite_master")}


def test_a_folder_or_an_account_taken_away_leaves_the_index(tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "Mail"
    sample.world(root, "zebracanary", time.time())
    connection = index.connect(tmp_path / "mail-index.sqlite")
    index.refresh(connection, [_account(root)])
    shutil.rmtree(root / "Archive")
    assert index.refresh(connection, [_account(root)])["removed"] == 1
    assert connection.execute("SELECT count(*) FROM messages WHERE folder LIKE 'Archive%'").fetchone()[0] == 0
    assert index.refresh(connection, [])["removed"] == 11
    assert connection.execute("SELECT count(*) FROM messages").fetchone()[0] == 0


def test_ids_follow_the_dates_whatever_order_the_files_came_in(tmp_path: Path) -> None:
    root = tmp_path / "Mail"
    now = time.time()
    # Delivered oldest last, two of them in the same second: the ids must still sort as the dates do.
    for number, age in enumerate((10, 3000, 3000, 86400 * 400, 5)):
        sample.deliver(root / "INBOX", sample.message(message_id=f"d{number}@example.org", date=now - age,
                                                      body="datewalk"))
    connection = index.connect(tmp_path / "mail-index.sqlite")
    index.refresh(connection, [_account(root)])
    rows = connection.execute("SELECT id, date FROM messages ORDER BY id").fetchall()
    assert len({r[0] for r in rows}) == 5
    assert [r[1] for r in rows] == sorted(r[1] for r in rows)
    assert all(index.date_key(r[1]) <= r[0] < index.date_key(r[1] + 1) for r in rows)
    fts = [r[0] for r in connection.execute(
        "SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'datewalk' ORDER BY rowid DESC")]
    assert fts == sorted((r[0] for r in rows), reverse=True)


def test_search_walks_the_matches_newest_first_without_sorting_them(tmp_path: Path) -> None:
    """What makes a search of a common word stop after `limit` hits: no sort of every match (speed is in bench/)."""
    from gateway_mail.mail import answers as tools

    connection = index.connect(tmp_path / "mail-index.sqlite")
    statement = tools.SEARCH.format(since="AND messages_fts.rowid >= ?", where="m.account = ? AND m.date >= ?")
    plan = " | ".join(r[3] for r in connection.execute(
        f"EXPLAIN QUERY PLAN {statement}", ("word", 0, "personal", 0, "[]", "[]", "[]", 20)))
    assert "TEMP B-TREE" not in plan, plan
    assert plan.index("messages_fts") < plan.index("SEARCH m USING INTEGER PRIMARY KEY"), plan


def test_an_index_with_ids_of_another_kind_is_made_again(tmp_path: Path) -> None:
    root = tmp_path / "Mail"
    sample.world(root, "zebracanary", time.time())
    path = tmp_path / "mail-index.sqlite"
    connection = index.connect(path)
    index.refresh(connection, [_account(root)])
    connection.execute("DELETE FROM meta WHERE key = 'ids'")  # as an index made before ids followed dates
    connection.commit()
    connection.close()
    connection = index.connect(path)
    assert connection.execute("SELECT count(*) FROM messages").fetchone()[0] == 0
    assert index.refresh(connection, [_account(root)])["read"] == 12


def test_each_thread_keeps_its_own_connection_and_a_replaced_index_is_opened_again(tmp_path: Path) -> None:
    import threading

    path = tmp_path / "cache" / "mail-index.sqlite"
    first = index.thread_connection(path)
    assert index.thread_connection(path) is first
    others = []
    worker = threading.Thread(target=lambda: others.append(index.thread_connection(path)))
    worker.start()
    worker.join()
    assert others[0] is not first  # never shared between threads
    for leftover in path.parent.iterdir():
        leftover.unlink()
    again = index.thread_connection(path)
    assert again is not first and path.exists()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert index.meta(again, "masks_version") == str(MASKS_VERSION)


def test_a_refresh_stopped_at_its_deadline_still_moves_the_generation(tmp_path: Path) -> None:
    """The rows written before the stop are kept: what the gate remembers of the index (keyed by its generation) must
    be worked out again, or a row written then could be judged by what was remembered of another."""
    root = tmp_path / "Mail"
    sample.world(root, "zebracanary", time.time())
    connection = index.connect(tmp_path / "mail-index.sqlite")
    before = index.generation(connection)
    seen = []

    class Deadline(Exception):
        pass

    def check() -> None:
        seen.append(1)
        if len(seen) == 16:  # past the folders' listing, in the middle of the parsing
            raise Deadline

    with pytest.raises(Deadline):
        index.refresh(connection, [_account(root)], check=check)
    assert connection.execute("SELECT count(*) FROM messages").fetchone()[0] >= 1
    assert index.generation(connection) > before
