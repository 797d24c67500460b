"""For tests: a real Dovecot IMAP server on a loopback port, with invented mail, and the state of its folders.

Bounded: Dovecot runs in the foreground from a config written into a temporary folder, listening on 127.0.0.1
only, as the current user (as root, Dovecot refuses to run its login and mail processes as root: they run as
Debian's `dovenull` and `dovecot` users then), and is stopped at the end; no system service is touched.
Debian's `dovecot-imapd` provides it (`.ci/run` installs it when missing).
"""

from __future__ import annotations

import contextlib
import grp
import hashlib
import imaplib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

DOVECOT = shutil.which("dovecot") or ("/usr/sbin/dovecot" if os.path.exists("/usr/sbin/dovecot") else None)
USER, PASSWORD = "pat", "invented-secret"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def dovecot_config(folder: Path, port: int) -> Path:
    """A Dovecot config in `folder`: IMAP on 127.0.0.1:`port`, plain login, one static password, fs layout."""
    if os.getuid() == 0:
        mail_user, login_user, internal = pwd.getpwnam("dovecot"), "dovenull", "dovecot"
    else:
        mail_user = login_user = internal = None
    me = pwd.getpwuid(os.getuid())
    uid, gid = (mail_user.pw_uid, mail_user.pw_gid) if mail_user else (me.pw_uid, me.pw_gid)
    server = folder / "server"
    server.mkdir()
    os.chown(server, uid, gid)
    group = internal or grp.getgrgid(os.getgid()).gr_name
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
default_internal_group = {group}
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
  args = password={PASSWORD}
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={server}/%u
}}
""")
    return config


def login(port: int, password: str = PASSWORD) -> imaplib.IMAP4:
    """A logged-in IMAP connection, waiting (up to 20 s) for a server just started."""
    deadline = time.monotonic() + 20
    while True:
        try:
            connection = imaplib.IMAP4("127.0.0.1", port)
            connection.login(USER, password)
            return connection
        except (OSError, imaplib.IMAP4.error):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@contextlib.contextmanager
def dovecot() -> Iterator[int]:
    """A Dovecot started for the test; yields its port, stops it at the end."""
    if DOVECOT is None:
        raise RuntimeError("Dovecot is not installed: apt-get install dovecot-imapd")
    folder = Path(tempfile.mkdtemp(prefix="gateway-dovecot-"))
    os.chmod(folder, 0o755)  # Dovecot's unprivileged processes reach its sockets here
    port = free_port()
    process = subprocess.Popen([DOVECOT, "-F", "-c", str(dovecot_config(folder, port))], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(folder, ignore_errors=True)


def server_state(imap: imaplib.IMAP4, folders: Iterable[str]) -> dict[str, list[tuple[str, str, str]]]:
    """Every folder's messages on the server: UID, flags and a hash of the whole message (read with PEEK)."""
    state = {}
    for folder in folders:
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
