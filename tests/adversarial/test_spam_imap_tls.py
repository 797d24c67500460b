"""spam_fetch never sends the password in clear text, played through a real `gateway serve` and the SDK's client.

The attacker sits between the gateway and the IMAP server (here: a fake IMAP server on 127.0.0.1 that records
every line it is sent) and strips STARTTLS from CAPABILITY, or answers STARTTLS with NO. The fetch job must fail
saying why, and the LOGIN must never arrive. `tls = false` is refused for a host that is not loopback before any
job starts; on loopback it is honoured (the control: the same server then does receive the LOGIN, so the recorder
would see one).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
from gateway_spam import sample

from gateway.testing import folders_of, serve_client, write_config

SECRET = "invented-secret"


@contextmanager
def fake_imap(offer_starttls: bool) -> Iterator[tuple[int, list[str]]]:
    """A fake IMAP server on a loopback port: CAPABILITY without STARTTLS (or with it, answering STARTTLS with NO),
    LOGIN accepted, every folder missing. Yields its port and the lines it received."""
    received: list[str] = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    stop = threading.Event()
    capabilities = "IMAP4rev1 AUTH=PLAIN" + (" STARTTLS" if offer_starttls else "")

    def serve(connection: socket.socket) -> None:
        with connection, connection.makefile("rwb") as stream:
            stream.write(b"* OK fake IMAP ready\r\n")
            stream.flush()
            for raw in stream:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                received.append(line)
                tag, _, rest = line.partition(" ")
                command = rest.split(" ", 1)[0].upper()
                if command == "CAPABILITY":
                    stream.write(f"* CAPABILITY {capabilities}\r\n{tag} OK done\r\n".encode())
                elif command == "STARTTLS":
                    stream.write(f"{tag} NO not today\r\n".encode())
                elif command == "LOGOUT":
                    stream.write(f"* BYE\r\n{tag} OK bye\r\n".encode())
                    stream.flush()
                    return
                elif command in ("SELECT", "EXAMINE"):
                    stream.write(f"{tag} NO no such folder\r\n".encode())
                else:
                    stream.write(f"{tag} OK done\r\n".encode())
                stream.flush()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=serve, args=(connection,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], received
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def _config(home: Path, host: str, port: int, **tls: bool) -> None:
    root = home / "Mail" / "personal"
    sample.make_folder(root / "INBOX")
    imap = [{"account": "personal", "host": host, "port": port, "user": "pat",
             "password_command": f"echo {SECRET}", **tls}]
    path = write_config(home, sample.config(root, imap=imap, spam_folders=["Junk"], ham_folders=["INBOX"]))
    moment = time.time() + len(list(folders_of(home).config.glob("*")))  # a new mtime: the server reads it again
    os.utime(path, (moment, moment))


async def _fetch(client) -> tuple[object, dict | None]:
    started = await client.call_tool("spam_fetch", {"days": 7})
    if started.is_error:
        return started, None
    for _ in range(600):
        followed = await client.call_tool("spam_job", {"id": started.structured_content["id"]})
        if followed.structured_content["state"] != "running":
            return started, followed.structured_content
        await anyio.sleep(0.2)
    raise AssertionError("the fetch job did not end")


def _text(result) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def test_no_login_in_clear_text_when_starttls_is_stripped_or_refused(gateway_home: Path) -> None:
    with fake_imap(offer_starttls=False) as (stripped_port, stripped_lines), \
            fake_imap(offer_starttls=True) as (refusing_port, refusing_lines):

        async def play():
            answers = {}
            _config(gateway_home, "127.0.0.1", stripped_port)
            async with serve_client(gateway_home) as client:
                answers["stripped"] = await _fetch(client)
                answers["stripped lines"] = stripped_lines[:]  # before the control below speaks to it again
                _config(gateway_home, "127.0.0.1", refusing_port)
                answers["refused"] = await _fetch(client)
                _config(gateway_home, "imap.example.org", 143, tls=False)
                answers["not loopback"] = await _fetch(client)
                _config(gateway_home, "127.0.0.1", stripped_port, tls=False)
                answers["loopback, said"] = await _fetch(client)
            return answers

        answers = anyio.run(play)

    _started, stripped = answers["stripped"]
    assert stripped is not None and stripped["state"] == "failed"
    assert "does not offer STARTTLS" in stripped["error"] and "nothing was sent" in stripped["error"]
    _started, refused = answers["refused"]
    assert refused is not None and refused["state"] == "failed" and "STARTTLS with the IMAP server" in refused["error"]
    assert any(" STARTTLS" in line for line in refusing_lines)  # it was tried, and failed
    assert answers["stripped lines"] and all("CAPABILITY" in line for line in answers["stripped lines"])
    for lines in (refusing_lines, answers["stripped lines"]):
        assert not any(" LOGIN " in f"{line} " or "AUTHENTICATE" in line for line in lines), lines
        assert not any(SECRET in line for line in lines)
    tool_answer, job = answers["not loopback"]
    assert job is None and tool_answer.is_error and "loopback host only" in _text(tool_answer)
    _started, control = answers["loopback, said"]
    assert control is not None and control["state"] == "done", control
    logins = [line for line in stripped_lines if " LOGIN " in line]
    assert len(logins) == 1 and SECRET in logins[0]  # the recorder sees a LOGIN when one is sent
