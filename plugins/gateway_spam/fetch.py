"""spam_fetch's job: read an account's IMAP server read-only (EXAMINE, BODY.PEEK) for recent spam and ham.

The server is `[plugins.spam] imap` (account, host, port, user, password_command); the password is the first line
the command prints, held in memory for the login and never written. Port 993 is TLS from the start; another port
must offer STARTTLS and succeed in it before the LOGIN is sent; `tls = false` (clear text) is accepted for a
loopback host only (a local bridge such as Proton's, a test server). Folders: the account's `spam_folders` and `ham_folders`, as the server
names them. Nothing on the server changes: folders are opened with EXAMINE and messages read with BODY.PEEK[].
"""

from __future__ import annotations

import contextlib
import imaplib
import ipaddress
import ssl
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from gateway_spam import corpus

MAX_PER_FOLDER = 5_000


class FetchFailed(Exception):
    """What the fetch could not do."""


def imap_entries(entries: Any) -> list[dict[str, Any]]:
    """The `[plugins.spam] imap` entries that are tables (the setting as the core gave it)."""
    return [dict(e) for e in entries if isinstance(e, Mapping)] if isinstance(entries, list) else []


def entry_for(entries: Any, account: str | None) -> dict[str, Any]:
    entries = imap_entries(entries)
    if not entries:
        raise FetchFailed("no IMAP server is configured: add [plugins.spam] imap = [{ account, host, port, user, "
                          "password_command }]")
    if account is None:
        return entries[0]
    for entry in entries:
        if entry.get("account") == account:
            return entry
    raise FetchFailed(f"no IMAP server is configured for the account {account!r}")


def password(command: str) -> str:
    try:
        run = subprocess.run(command, shell=True, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise FetchFailed("the password_command did not answer within 60 seconds") from None
    if run.returncode != 0 or not run.stdout.strip():
        raise FetchFailed(f"the password_command failed (exit {run.returncode}); try it in a terminal")
    return run.stdout.decode("utf-8", "replace").splitlines()[0]


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or `localhost`: the only hosts a password may be sent to in clear text (`tls = false`)."""
    if host.strip().lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def tls_problem(entry: Mapping[str, Any]) -> str | None:
    """Why an `imap` entry's TLS setting cannot be used (None when it can): said before any job starts."""
    tls, host = entry.get("tls", True), str(entry.get("host", ""))
    if not isinstance(tls, bool):
        return f"[plugins.spam] imap: tls must be true or false, not {tls!r}"
    if not tls and not is_loopback(host):
        return (f"[plugins.spam] imap: tls = false is allowed for a loopback host only (127.0.0.1, ::1, localhost), "
                f"not {host!r}: the password would cross the network in clear text; remove tls = false and use "
                "port 993 or a server that offers STARTTLS")
    return None


def connect(entry: dict[str, Any]) -> imaplib.IMAP4:
    """A connection over TLS (port 993: TLS from the start; another port: STARTTLS, which must succeed), or in
    clear text on a loopback host whose entry says `tls = false`. Nothing is sent before TLS holds but CAPABILITY
    and STARTTLS: a server (or someone between) that does not offer STARTTLS never receives the LOGIN."""
    host, port = str(entry.get("host", "")), int(entry.get("port", 993))
    problem = tls_problem(entry)
    if problem is not None:
        raise FetchFailed(problem)
    try:
        if port == 993:
            connection: imaplib.IMAP4 = imaplib.IMAP4_SSL(host, port, ssl_context=ssl.create_default_context(),
                                                          timeout=60)
        else:
            connection = imaplib.IMAP4(host, port, timeout=60)
    except (OSError, imaplib.IMAP4.error) as error:
        raise FetchFailed(f"could not reach the IMAP server {host}:{port} ({error})") from None
    if port == 993 or entry.get("tls", True) is False:
        return connection
    if "STARTTLS" not in connection.capabilities:
        _drop(connection)
        raise FetchFailed(f"the IMAP server {host}:{port} does not offer STARTTLS, so the password would go in clear "
                          "text (someone between may have removed it): nothing was sent. Use port 993 (TLS from the "
                          "start), or ask the server's admin to offer STARTTLS")
    try:
        connection.starttls(ssl.create_default_context())
    except (OSError, ssl.SSLError, imaplib.IMAP4.error) as error:
        _drop(connection)
        raise FetchFailed(f"STARTTLS with the IMAP server {host}:{port} failed ({error}): nothing was sent. Use port "
                          "993, or check the server's certificate") from None
    return connection


def _drop(connection: imaplib.IMAP4) -> None:
    """Close without LOGOUT's round trip: nothing more is said to a server that could not be trusted."""
    with contextlib.suppress(OSError):
        connection.shutdown()


def fetch(settings: dict[str, Any], account: str | None, days: int,
          progress: Callable[[str, int, int], None]) -> dict[str, Any]:
    data = Path(settings["data"])
    entry = entry_for(settings.get("imap", []), account)
    name = str(entry.get("account", ""))
    secret = password(str(entry.get("password_command", "")))
    connection = connect(entry)
    try:
        try:
            connection.login(str(entry.get("user", "")), secret)
        except imaplib.IMAP4.error:
            raise FetchFailed(f"the IMAP server refused the login of {entry.get('user', '')!r} (a wrong password "
                              "or user name): check password_command") from None
        finally:
            secret = ""
        since = time.strftime("%d-%b-%Y", time.gmtime(time.time() - days * 86400))
        added = {"spam": 0, "ham": 0}
        seen = {"spam": 0, "ham": 0}
        missing = []
        plan = [(f, "spam") for f in settings["spam_folders"]] + [(f, "ham") for f in settings["ham_folders"]]
        for number, (folder, label) in enumerate(plan, start=1):
            status, _ = connection.select(_quoted(folder), readonly=True)  # EXAMINE
            if status != "OK":
                missing.append(folder)
                continue
            status, found = connection.uid("SEARCH", None, "SINCE", since)
            uids = found[0].split()[-MAX_PER_FOLDER:] if status == "OK" and found and found[0] else []
            for start in range(0, len(uids), 50):
                batch = b",".join(uids[start:start + 50]).decode()
                status, rows = connection.uid("FETCH", batch, "(BODY.PEEK[])")
                for row in rows if status == "OK" else []:
                    if isinstance(row, tuple) and isinstance(row[1], bytes):
                        seen[label] += 1
                        added[label] += corpus.add_fetched(data, row[1], label, name)
            connection.close()
            progress(f"read {folder}", number, len(plan))
    finally:
        with contextlib.suppress(OSError, imaplib.IMAP4.error):
            connection.logout()
    return {"account": name, "days": days, "read": seen, "added": added, "folders_missing": missing}


def _quoted(folder: str) -> str:
    return '"' + folder.replace("\\", "\\\\").replace('"', '\\"') + '"'
