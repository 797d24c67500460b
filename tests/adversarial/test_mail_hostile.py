"""Mail from strangers played as attacks through a real `gateway serve --http` and the SDK's own clients.

One server for the module, its Maildir holding the sample world and one hostile message of each kind: an empty
`Authentication-Results: ;`, 1,100 nested multiparts, 1,100 nested `message/rfc822`, a 48 MB MIME bomb of
450,000 one-byte attachments, a 20 MB text, HTML hiding card numbers across table cells and line ends, a card in
the sender's name and in an attachment's name, and a Subject encoded twice to smuggle a `Bcc:` into a reply.
Each test's calls come from one client while a second client pings the server; every ping must be answered
within two seconds (a liveness bound, far above a ping's usual milliseconds), and the server's peak memory must stay
within 300 MB of what it was idle. A "ping" is a `tools/list`, which every protocol revision answers (the protocol's
own `ping` is gone from the 2026-07-28 revision, and the SDK's client warns when it is sent), asked past any cache
of the client's so that each one reaches the server.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from gateway_mail.mail import sample

from gateway.api.context import home_environment
from gateway.testing import folders_of, write_config
from tests.forkserver import gateway_command

PEAK_ABOVE_IDLE_MB = 300
PING_WITHIN_SECONDS = 2.0  # liveness, not speed: a ping is answered in milliseconds when the loop is free; a parser
# that holds the interpreter holds it for seconds (1 s was met by a healthy server at load 9 and more on two cores)
BOMB_PARTS = 450_000
LONG_LINE = b"All work and no play makes a long message for the gateway.\r\n"
LONG_LINES = 340_000  # 20 MB of text
CARD_CELLS = "4111 1111 1111 1111"  # Luhn-valid test numbers, reserved for tests by the card networks
CARD_WRAPPED = "5555 5555 5555 4444"
CARD_NAME = "4012 8888 8888 1881"
CARD_FILE = "4000056655665556"


def _bomb() -> bytes:
    part = (b"--B\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=a\r\n\r\n"
            b"x\r\n")
    return (b"From: Mallory <mallory@example.net>\r\nTo: pat@example.org\r\nSubject: Bomb of parts\r\n"
            b"Message-ID: <bomb@example.net>\r\nDate: Tue, 01 Dec 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\n"
            b"Content-Type: multipart/mixed; boundary=B\r\n\r\n" + part * BOMB_PARTS + b"--B--\r\n")


def _nested(kind: str, levels: int = 1100) -> bytes:
    head = (f"From: Eve <eve@example.net>\r\nTo: pat@example.org\r\nSubject: Nested {kind}\r\n"
            f"Message-ID: <nested-{kind}@example.net>\r\nDate: Tue, 01 Dec 2026 10:00:00 +0000\r\n"
            f"MIME-Version: 1.0\r\n")
    if kind == "multipart":
        opening = "".join(f"Content-Type: multipart/mixed; boundary=b{i}\r\n\r\n--b{i}\r\n" for i in range(levels))
        closing = "".join(f"\r\n--b{i}--\r\n" for i in reversed(range(levels)))
        return (head + opening + "Content-Type: text/plain\r\n\r\ndeep" + closing).encode()
    opening = "".join("Content-Type: message/rfc822\r\n\r\nFrom: x@example.net\r\n" for _ in range(levels))
    return (head + opening + "Content-Type: text/plain\r\n\r\ndeep\r\n").encode()


def _hostile(inbox: Path) -> None:
    sample.deliver(inbox, b"From: Rita <rita@example.net>\r\nTo: pat@example.org\r\nAuthentication-Results: ;\r\n"
                          b"Subject: Results header empty\r\nMessage-ID: <results@example.net>\r\n"
                          b"Date: Tue, 01 Dec 2026 10:00:00 +0000\r\n\r\nHello from Rita.\r\n", name="results")
    sample.deliver(inbox, _nested("multipart"), name="nested-multipart")
    sample.deliver(inbox, _nested("rfc822"), name="nested-rfc822")
    sample.deliver(inbox, _bomb(), name="bomb")
    sample.deliver(inbox, b"From: Lou <lou@example.net>\r\nTo: pat@example.org\r\nSubject: A long text\r\n"
                          b"Message-ID: <long@example.net>\r\nDate: Tue, 01 Dec 2026 10:00:00 +0000\r\n\r\n"
                          + LONG_LINE * LONG_LINES, name="long")
    html = (f"<p>Your card:</p><table><tr>{''.join(f'<td>{g}</td>' for g in CARD_CELLS.split())}</tr></table>"
            f"<p>Backup card {CARD_WRAPPED[:9]}\n{CARD_WRAPPED[10:]} on file.</p>")
    sample.deliver(inbox, sample.message(
        sender=f"Card {CARD_NAME} <billing@shop.example.net>", subject="Your cards", body="", html=html,
        message_id="cards@example.net", attachment=(f"statement-{CARD_FILE}.pdf", b"%PDF-1.4 invented")),
        name="cards")
    # A Subject encoded twice: decoded once it is an encoded word whose text holds CR LF and a Bcc line.
    inner = "=?utf-8?q?Hi=0D=0ABcc=3A_attacker=40evil.example?="
    twice = "=?utf-8?q?" + "".join(f"={b:02X}" for b in inner.encode()) + "?="
    sample.deliver(inbox, (f"From: Ada <ada@example.net>\r\nTo: pat@example.org\r\nSubject: {twice}\r\n"
                           f"Message-ID: <twice@example.net>\r\nReferences: <a@example.net> <=?utf-8?q?x=0D=0A?=>\r\n"
                           f"Date: Tue, 01 Dec 2026 10:00:00 +0000\r\n\r\nA question.\r\n").encode(), name="twice")


def _peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Hostile:
    """The module's server: its home, Maildir, URL, token, process, and its peak memory once idle."""

    def __init__(self, home: Path, log: Path) -> None:
        self.home = home
        self.root = home / "Mail" / "personal"
        self.ids = sample.world(self.root, "hostilecanary", time.time())
        _hostile(self.root / "INBOX")
        write_config(home, sample.config(self.root), projects=sample.PROJECTS)
        self.env = {"PATH": os.environ.get("PATH", ""), **home_environment(home)}
        port = _free_port()
        self.log = log.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gateway", "serve", "--http", f"127.0.0.1:{port}"],
            env=self.env, stdout=subprocess.DEVNULL, stderr=self.log)
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert self.process.poll() is None, log.read_text()
                time.sleep(0.1)
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.token = (folders_of(home).state / "http-token").read_text().strip()
        self.idle_mb = 0.0

    def play(self, calls):
        """Run `calls(client)` on one client while another pings; the answers, and the slowest ping's seconds."""
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        async def run():
            headers = {"Authorization": f"Bearer {self.token}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=120) as http_a,
                httpx2.AsyncClient(headers=headers, timeout=120) as http_b,
                Client(streamable_http_client(self.url, http_client=http_a), mode="legacy") as caller,
                Client(streamable_http_client(self.url, http_client=http_b), mode="legacy") as pinger,
            ):
                await pinger.list_tools(cache_mode="bypass")
                if not self.idle_mb:
                    self.idle_mb = _peak_mb(self.process.pid)
                waits: list[float] = []
                done = anyio.Event()

                async def ping() -> None:
                    while not done.is_set():
                        started = time.monotonic()
                        await pinger.list_tools(cache_mode="bypass")
                        waits.append(time.monotonic() - started)
                        with anyio.move_on_after(0.2):
                            await done.wait()

                async with anyio.create_task_group() as group:
                    group.start_soon(ping)
                    try:
                        answers = await calls(caller)
                    finally:
                        done.set()
                return answers, max(waits)

        return anyio.run(run)

    def check_bounds(self, slowest_ping: float) -> None:
        assert slowest_ping < PING_WITHIN_SECONDS, f"a ping waited {slowest_ping:.2f} s"
        peak = _peak_mb(self.process.pid)
        assert peak - self.idle_mb <= PEAK_ABOVE_IDLE_MB, f"peak {peak:.0f} MB, idle {self.idle_mb:.0f} MB"

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(20)
        self.log.close()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("hostile")
    home = base / "home"
    home.mkdir()
    served = Hostile(home, base / "stderr")
    yield served
    served.close()


def _text(result) -> str:
    return "\n".join(getattr(b, "text", "") for b in result.content) + json.dumps(
        result.structured_content or {}, ensure_ascii=False)


def _subjects(result) -> list[str]:
    return [hit["subject"] for hit in (result.structured_content or {}).get("hits", [])]


def test_no_one_message_fails_a_call_and_each_is_said_read_in_part(hostile: Hostile) -> None:
    async def calls(client):
        answers = {"porch": await client.call_tool("porch", {"open": True})}
        for query in ("results", "nested", "bomb", "plumber"):
            answers[f"search {query}"] = await client.call_tool("search_mail", {"query": query})
        for name in ("results", "nested-multipart", "nested-rfc822", "bomb"):
            answers[name] = await client.call_tool("read_message", {"address": f"mid:{name}@example.net"})
        answers["reply"] = await client.call_tool("draft_reply", {"address": "mid:bomb@example.net", "body": "ok"})
        return answers

    answers, slowest = hostile.play(calls)
    for name, answer in answers.items():
        assert not answer.is_error, (name, _text(answer))
    assert _subjects(answers["search results"]) == ["Results header empty"]
    assert sorted(_subjects(answers["search nested"])) == ["Nested multipart", "Nested rfc822"]
    assert _subjects(answers["search bomb"]) == ["Bomb of parts"]
    assert _subjects(answers["search plumber"]) == ["Invoice from the plumber"]
    assert "Hello from Rita." in _text(answers["results"])
    for name in ("nested-multipart", "nested-rfc822"):
        assert "Read in part: only its envelope was read: MIME parts nested more than 32 deep" in _text(answers[name])
    assert "Read in part: only its envelope was read: more than 1000 MIME parts" in _text(answers["bomb"])
    hostile.check_bounds(slowest)


def test_a_message_read_in_part_is_not_read_again_until_its_file_changes(hostile: Hostile) -> None:
    async def index(client):
        return await client.call_tool("search_mail", {"query": "nested"})

    hostile.play(index)  # the index holds the message first, whichever test of the module ran before
    [nested] = (hostile.root / "INBOX" / "cur").glob("nested-multipart:*")
    before = nested.stat()
    data = nested.read_bytes()
    # The same size and time, other words: a message read again would be found by them.
    nested.write_bytes(data.replace(b"Subject: Nested multipart", b"Subject: Hidden multipart"))
    os.utime(nested, ns=(before.st_atime_ns, before.st_mtime_ns))
    sample.deliver(hostile.root / "INBOX", sample.message(subject="Folder changed", message_id="poke@example.net"))

    async def search(client):
        return {q: await client.call_tool("search_mail", {"query": q}) for q in ("hidden", "nested", "folder")}

    kept, slowest = hostile.play(search)
    assert _subjects(kept["folder"]) == ["Folder changed"]  # the folder was listed again
    assert _subjects(kept["hidden"]) == [] and "Nested multipart" in _subjects(kept["nested"])
    os.utime(nested, ns=(before.st_atime_ns, before.st_mtime_ns + 5_000_000_000))
    sample.deliver(hostile.root / "INBOX", sample.message(subject="Folder again", message_id="poke2@example.net"))
    changed, slowest_again = hostile.play(search)
    assert _subjects(changed["hidden"]) == ["Hidden multipart"]
    hostile.check_bounds(max(slowest, slowest_again))


def test_doctor_names_the_messages_read_in_part(hostile: Hostile) -> None:
    async def touch(client):
        return await client.call_tool("porch", {})

    hostile.play(touch)  # the index is up to date
    done = subprocess.run(gateway_command("doctor"), env=hostile.env, capture_output=True,
                          text=True, timeout=120)
    said = [line for line in done.stdout.splitlines() if line.startswith("WARNING  mail:")]
    assert len(said) == 1, done.stdout
    assert "Maildir of account personal" in said[0] and "messages read in part" in said[0]
    for name in ("bomb", "long", "nested-"):
        assert f"INBOX/cur/{name}" in said[0]
    assert "more than 1000 MIME parts" in said[0] and "only its first 16 MB were read" in said[0]
    assert "No problem found, but read the warning above." in done.stdout and done.returncode == 0


def test_a_20_mb_text_is_cut_and_says_where(hostile: Hostile) -> None:
    async def read(client):
        return await client.call_tool("read_message", {"address": "mid:long@example.net"})

    answer, slowest = hostile.play(read)
    assert not answer.is_error
    text = answer.content[0].text
    assert "Cut: only the first 200000 characters are given." in text
    assert answer.structured_content["cut"] is True
    assert 200_000 <= len(answer.structured_content["text"]) <= 200_001
    assert len(text) < 300_000
    hostile.check_bounds(slowest)


def test_cards_across_cells_line_ends_names_and_attachments_are_masked_and_not_found(hostile: Hostile) -> None:
    digit_queries = ["4111", "5555", "4012", "8888", CARD_FILE, "56655665", '"4111 1111"']

    async def calls(client):
        read = await client.call_tool("read_message", {"address": "mid:cards@example.net"})
        listed = await client.call_tool("search_mail", {"query": "cards"})
        found = {q: await client.call_tool("search_mail", {"query": q}) for q in digit_queries}
        return read, listed, found

    (read, listed, found), slowest = hostile.play(calls)
    shown = _text(read) + _text(listed)
    assert not read.is_error and _subjects(listed) == ["Your cards"]
    for number in (CARD_CELLS, CARD_WRAPPED, CARD_NAME, CARD_FILE):
        assert number not in shown and number.replace(" ", "") not in shown
        assert number[:4] + " " + number[5:9] not in shown
    assert "…1111" in shown and "…4444" in shown and "…1881" in shown and "…5556" in shown
    for query, result in found.items():
        assert _subjects(result) == [], query
    hostile.check_bounds(slowest)


def test_a_reply_draft_gets_no_header_from_encoded_words(hostile: Hostile) -> None:
    address = "mid:twice@example.net"
    inner = "=?utf-8?q?Hi=0D=0ABcc=3A_attacker=40evil.example?="
    attacks = [
        {"subject": inner},
        {"subject": "=?utf-8?b?SGkNCkJjYzogYXR0YWNrZXJAZXZpbC5leGFtcGxl?="},
        {"subject": "=?utf-8?q?Hi=E2=80=A8Bcc=3A_attacker=40evil.example?="},
        {"subject": "Hi\x85Bcc: attacker@evil.example"},
        {"subject": "=?utf-8?q?" + "".join(f"={b:02X}" for b in inner.encode()) + "?="},
        {"to": ["=?utf-8?q?Ada=0D=0ABcc=3A_attacker=40evil.example?= <ada@example.net>"]},
        {"cc": ['"=?utf-8?q?x=0ABcc=3A?=" <ada@example.net>']},
    ]

    async def calls(client):
        refused = [await client.call_tool("draft_reply", {"address": address, "body": "x", **a}) for a in attacks]
        made = await client.call_tool("draft_reply", {"address": address, "body": "Yes."})
        return refused, made

    (refused, made), slowest = hostile.play(calls)
    for attack, answer in zip(attacks, refused, strict=True):
        assert answer.is_error, attack
        assert "line break or a control character" in answer.content[0].text, answer.content[0].text
    assert not made.is_error, _text(made)
    draft = hostile.root / made.structured_content["file"]  # relative to the account's root
    data = draft.read_bytes()
    headers = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(data)
    assert [name.lower() for name in headers] == [
        "from", "to", "subject", "date", "message-id", "in-reply-to", "references", "content-type",
        "content-transfer-encoding", "mime-version"]
    assert b"\nBcc" not in data and b"\rBcc" not in data
    subject = email.parser.BytesHeaderParser(policy=email.policy.default).parsebytes(data)["Subject"]
    assert "\r" not in subject and "\n" not in subject and subject.startswith("Re: Hi Bcc:")
    assert headers["References"] == "<a@example.net> <twice@example.net>"
    hostile.check_bounds(slowest)
