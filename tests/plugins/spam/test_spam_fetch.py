"""spam_fetch against a real IMAP server: Dovecot on a loopback port with a Maildir of invented mail, through a
real `gateway serve`. Nothing on the server may change (EXAMINE, BODY.PEEK); a wrong password ends the job saying so.
"""

from __future__ import annotations

import imaplib
import json
import time
from pathlib import Path

import anyio
import pytest
from gateway_spam import sample
from maildirs.testing import DOVECOT, dovecot, login, server_state

from gateway.testing import folders_of, serve_client, write_config

pytestmark = pytest.mark.skipif(DOVECOT is None, reason="needs Dovecot: apt-get install dovecot-imapd")
FOLDERS = ("INBOX", "Junk", "Archive")


def _seed(imap: imaplib.IMAP4, now: float) -> None:
    imap.create("Junk")
    imap.create("Archive")
    rows = [("INBOX", "()", sample.message("Ada <ada@example.org>", "Garden tuesday", "plumtree compost", now - 60,
                                           "fetched-ham1@example.org")),
            ("INBOX", "(\\Seen)", sample.message("Ben <ben@example.net>", "Choir rehearsal", "violin quartet",
                                                 now - 120, "fetched-ham2@example.org")),
            ("Junk", "()", sample.message("Prize <prize@winner.example.net>", "Jackpot winner", "lottery casino",
                                          now - 180, "fetched-spam1@winner.example.net")),
            ("Junk", "(\\Flagged)", sample.message("Pills <deals@pills.example.com>", "Cheapest pharmacy",
                                                   "pills discount", now - 240, "fetched-spam2@pills.example.com"))]
    for folder, flags, raw in rows:
        status, _ = imap.append(folder, flags, imaplib.Time2Internaldate(now), raw)
        assert status == "OK"


async def _fetch_and_follow(client, arguments: dict) -> tuple[object, dict]:
    started = await client.call_tool("spam_fetch", arguments)
    assert not started.is_error, started.content
    job_id = started.structured_content["id"]
    for _ in range(600):
        followed = await client.call_tool("spam_job", {"id": job_id})
        if followed.structured_content["state"] != "running":
            return followed, followed.structured_content
        await anyio.sleep(0.2)
    raise AssertionError("the fetch job did not end")


def _config(home: Path, port: int, password_command: str) -> None:
    root = home / "Mail" / "personal"
    root.mkdir(parents=True, exist_ok=True)
    # Dovecot here offers no TLS (ssl = no): clear text is allowed on a loopback host, and only when said.
    imap = [{"account": "personal", "host": "127.0.0.1", "port": port, "user": "pat", "tls": False,
             "password_command": password_command}]
    write_config(home, sample.config(root, imap=imap, spam_folders=["Junk"], ham_folders=["INBOX", "Archive"]),
                 projects=sample.PROJECTS)


def test_fetch_reads_the_server_read_only_and_a_wrong_password_ends_the_job(gateway_home: Path) -> None:
    with dovecot() as port:
        imap = login(port)
        _seed(imap, time.time())
        before = server_state(imap, FOLDERS)
        _config(gateway_home, port, "echo invented-secret")

        async def play() -> tuple:
            async with serve_client(gateway_home) as client:
                good = await _fetch_and_follow(client, {"days": 7})
                _config(gateway_home, port, "echo not-the-password")
                bad = await _fetch_and_follow(client, {"account": "personal"})
                return good, bad

        (good_answer, good), (bad_answer, bad) = anyio.run(play)
        assert good["state"] == "done", good
        assert good["result"]["added"] == {"spam": 2, "ham": 2} and good["result"]["folders_missing"] == []
        corpus = folders_of(gateway_home).data / "plugins" / "spam" / "corpus"
        assert len(list((corpus / "spam").glob("*.eml"))) == 2 and len(list((corpus / "ham").glob("*.eml"))) == 2
        assert all((p.stat().st_mode & 0o777) == 0o600 for p in corpus.rglob("*.eml"))
        assert server_state(imap, FOLDERS) == before  # no flag, no message changed
        assert bad["state"] == "failed" and "refused the login" in bad["error"]
        text = "".join(getattr(b, "text", "") for b in bad_answer.content)
        assert "refused the login" in text and "not-the-password" not in text + json.dumps(bad)
        jobs = folders_of(gateway_home).state / "plugins" / "spam" / "jobs"
        assert not any("invented-secret" in p.read_text() for p in jobs.iterdir() if p.is_file())  # never stored
        imap.logout()
