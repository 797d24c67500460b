"""End to end with the real components a person's mail goes through: Dovecot serves invented mail over IMAP on a
loopback port, mbsync brings it into a local Maildir in its own layout, the gateway indexes it and serves the
tools, then mbsync pushes the agent's draft and the test reads it back from Dovecot's Drafts over IMAP, checking
that no other message or flag on the server changed.

Bounded: Dovecot runs in the foreground from a config written into a temporary folder, listening on 127.0.0.1
only, as the current user (as root, Dovecot refuses to run its login and mail processes as root: they run as
Debian's `dovenull` and `dovecot` users then), and is stopped at the end; no system service is touched.
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import imaplib
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import pytest
from gateway_mail import sample

from gateway.context import home_environment
from gateway.testing import serve_client, write_config

INSTALL = "apt-get install dovecot-imapd isync"
DOVECOT = shutil.which("dovecot") or ("/usr/sbin/dovecot" if os.path.exists("/usr/sbin/dovecot") else None)
MBSYNC = shutil.which("mbsync")
CANARY = "quinceboxcanary"

pytestmark = pytest.mark.skipif(not (DOVECOT and MBSYNC), reason=f"needs Dovecot and mbsync: {INSTALL}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _dovecot_config(folder: Path, port: int) -> Path:
    if os.getuid() == 0:
        mail_user, login_user, internal = pwd.getpwnam("dovecot"), "dovenull", "dovecot"
    else:
        mail_user = login_user = internal = None
    me = pwd.getpwuid(os.getuid())
    uid, gid = (mail_user.pw_uid, mail_user.pw_gid) if mail_user else (me.pw_uid, me.pw_gid)
    server = folder / "server"
    server.mkdir()
    os.chown(server, uid, gid)
    config = folder / "dovecot.conf"
    config.write_text(f"""
first_valid_uid = 0
base_dir = {folder}/run
state_dir = {folder}/state
log_path = {folder}/dovecot.log
instance_name = gateway-test-{port}
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
mail_location = maildir:{server}/%u/Maildir:LAYOUT=fs
default_internal_user = {internal or me.pw_name}
default_internal_group = {internal or pwd.getpwuid(os.getuid()).pw_name}
default_login_user = {login_user or me.pw_name}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
  chroot =
}}
service anvil {{
  chroot =
}}
passdb {{
  driver = static
  args = password=invented-secret
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={server}/%u
}}
""")
    if not internal:
        config.write_text(config.read_text().replace(f"default_internal_group = {me.pw_name}",
                                                     f"default_internal_group = {_group_name()}"))
    return config


def _group_name() -> str:
    import grp

    return grp.getgrgid(os.getgid()).gr_name


def _imap(port: int) -> imaplib.IMAP4:
    deadline = time.monotonic() + 20
    while True:
        try:
            connection = imaplib.IMAP4("127.0.0.1", port)
            connection.login("pat", "invented-secret")
            return connection
        except (OSError, imaplib.IMAP4.error):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _seed(imap: imaplib.IMAP4, now: float) -> dict[str, str]:
    ids = {}
    imap.create("Drafts")
    imap.create("Archive/2026")
    messages = [
        ("INBOX", "friend", "(\\Seen)", dict(sender="Ada Example <ada@example.net>", subject="Tuesday?",
                                             body="Does Tuesday work for the plumtree visit?",
                                             headers=sample.authenticated("example.net"))),
        ("INBOX", "code", "()", dict(sender="Bank <noreply@bank.example.com>", subject="Your code",
                                     body="Your verification code is 482 913.",
                                     headers=sample.authenticated("bank.example.com"))),
        ("INBOX", "vault", "(\\Seen)", dict(sender="Keeper <keeper@vault.example.com>", subject="Vault matters",
                                            body=f"The plumtree word is {CANARY}.",
                                            headers=sample.authenticated("vault.example.com"))),
        ("Archive/2026", "old", "(\\Seen \\Answered)", dict(sender="Ada Example <ada@example.net>",
                                                            subject="Last year", body="An old plumtree letter.")),
    ]
    for offset, (folder, role, flags, fields) in enumerate(messages):
        ids[role] = f"{role}-e2e@example.org"
        data = bytes(sample.message(message_id=ids[role], date=now - 3600 * (1 + offset), **fields))
        status, _ = imap.append(folder, flags, imaplib.Time2Internaldate(now), data)
        assert status == "OK"
    return ids


def _server_state(imap: imaplib.IMAP4) -> dict[str, list[tuple[str, str, str]]]:
    """Every folder's messages on the server: UID, flags and a hash of the whole message."""
    state = {}
    for folder in ("INBOX", "Archive/2026", "Drafts"):
        imap.select(f'"{folder}"', readonly=True)
        status, data = imap.uid("FETCH", "1:*", "(UID FLAGS BODY.PEEK[])")
        rows = []
        for item in data if status == "OK" else []:
            if isinstance(item, tuple):
                head = item[0].decode()
                uid = head.split("UID ", 1)[1].split()[0]
                flags = head.split("FLAGS (", 1)[1].split(")", 1)[0]
                # \\Recent belongs to an IMAP session, not to the message: left out of the comparison.
                kept = sorted(f for f in flags.split() if f != "\\Recent")
                rows.append((uid, " ".join(kept), hashlib.sha256(item[1]).hexdigest()))
        state[folder] = sorted(rows)
    return state


def _mbsyncrc(folder: Path, port: int, local: Path) -> Path:
    rc = folder / "mbsyncrc"
    rc.write_text(f"""IMAPAccount test
Host 127.0.0.1
Port {port}
User pat
Pass invented-secret
SSLType None
AuthMechs LOGIN

IMAPStore remote
Account test

MaildirStore local
Path {local}/
Inbox {local}/INBOX
SubFolders Verbatim

Channel mail
Far :remote:
Near :local:
Patterns *
Create Near
Expunge None
SyncState *
""")
    return rc


def _mbsync(rc: Path, *flags: str) -> None:
    run = subprocess.run([MBSYNC, "-c", str(rc), *flags, "mail"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr


def _text(result) -> str:
    return "\n".join(getattr(b, "text", "") for b in result.content) + json.dumps(result.structured_content or {})


def test_mail_synchronised_by_mbsync_from_dovecot_and_a_draft_pushed_back(gateway_home: Path) -> None:
    folder = Path(tempfile.mkdtemp(prefix="gateway-dovecot-"))
    os.chmod(folder, 0o755)  # Dovecot's unprivileged processes reach its sockets here
    port = _free_port()
    config = _dovecot_config(folder, port)
    dovecot = subprocess.Popen([DOVECOT, "-F", "-c", str(config)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        imap = _imap(port)
        ids = _seed(imap, time.time())
        before = _server_state(imap)
        local = gateway_home / "Mail" / "personal"
        local.mkdir(parents=True)
        rc = _mbsyncrc(folder, port, local)
        _mbsync(rc, "--pull")
        assert (local / "Archive" / "2026" / "cur").is_dir() and (local / "Drafts" / "cur").is_dir()
        assert any(",U=" in p.name for p in (local / "INBOX" / "cur").iterdir())

        write_config(gateway_home, sample.config(local), projects=sample.PROJECTS)
        env = {**os.environ, **home_environment(gateway_home)}
        indexed = subprocess.run([sys.executable, "-m", "gateway", "mail", "index"], env=env, capture_output=True,
                                 text=True, timeout=120)
        assert indexed.returncode == 0 and "4 messages indexed" in indexed.stdout, indexed.stdout + indexed.stderr
        listed = subprocess.run([sys.executable, "-m", "gateway", "mail", "accounts"], env=env, capture_output=True,
                                text=True, timeout=60)
        assert "Archive/2026: 1 messages" in listed.stdout and "INBOX: 3 messages" in listed.stdout

        async def play(client):
            found = await client.call_tool("search_mail", {"query": "plumtree"})
            read = await client.call_tool("read_message", {"address": f"mid:{ids['code']}"})
            kept = await client.call_tool("read_message", {"address": f"mid:{ids['vault']}"})
            porch = await client.call_tool("porch", {})
            draft = await client.call_tool("draft_reply", {"address": f"mid:{ids['friend']}",
                                                           "body": "Tuesday works.\nPat"})
            return found, read, kept, porch, draft

        found, read, kept, porch, draft = anyio.run(_serve, gateway_home, play)
        assert [h["address"] for h in found.structured_content["hits"]] == [f"mid:{ids['friend']}",
                                                                           f"mid:{ids['old']}"]
        assert found.structured_content["left_out"] == 1
        assert "482" not in _text(read) and "[code]" in _text(read)
        assert kept.is_error and CANARY not in _text(kept)
        assert "A code arrived" in _text(porch) and CANARY not in _text(porch)
        assert not draft.is_error, _text(draft)

        _mbsync(rc, "--push-new")
        after = _server_state(imap)
        assert after["INBOX"] == before["INBOX"] and after["Archive/2026"] == before["Archive/2026"]
        assert before["Drafts"] == [] and len(after["Drafts"]) == 1
        uid, flags, _hash = after["Drafts"][0]
        assert "\\Draft" in flags.split()
        imap.select('"Drafts"', readonly=True)
        status, data = imap.uid("FETCH", uid, "(BODY.PEEK[])")
        pushed = email.message_from_bytes(data[0][1], policy=email.policy.default)
        assert pushed["In-Reply-To"] == f"<{ids['friend']}>" and pushed["From"] == "pat@example.org"
        assert pushed["To"] == "ada@example.net" and pushed.get_content().replace("\r\n", "\n").strip() == "Tuesday works.\nPat"
        imap.logout()
    finally:
        dovecot.terminate()
        try:
            dovecot.wait(timeout=10)
        except subprocess.TimeoutExpired:
            dovecot.kill()
        shutil.rmtree(folder, ignore_errors=True)


async def _serve(home: Path, play):
    async with serve_client(home) as client:
        return await play(client)
