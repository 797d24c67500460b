"""spam_review over a huge store, and hostile messages, played through a real `gateway serve` and the SDK's client.

A first mbsync leaves 100,000 messages "recent" (in new/, all of the last 30 days): spam_review must answer, its
cost bounded by its limit (the newest so many read), saying how many it did not read. Three hostile messages
(`Authentication-Results: ;`, 1,100 nested multiparts, 1,100 nested message/rfc822) and a MIME bomb (100,000
one-byte parts) must fail or stall neither spam_review nor training nor spam_label nor `gateway spam classify`:
the nested ones and the bomb are counted unreadable.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import anyio
from gateway_spam import sample
from gateway_spam.tools import review_budget

from gateway.api.context import home_environment
from gateway.testing import serve_client, write_config
from tests.forkserver import gateway_command

RECENT = 100_000


def nested_multiparts(depth: int) -> bytes:
    out = (b"From: Deep <deep@hostile.example.net>\nSubject: deep\nMessage-ID: <deep@hostile.example.net>\n"
           b"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"b0\"\n\n")
    for level in range(1, depth):
        out += b"--b%d\nContent-Type: multipart/mixed; boundary=\"b%d\"\n\n" % (level - 1, level)
    out += b"--b%d\nContent-Type: text/plain\n\njackpot\n" % (depth - 1)
    for level in reversed(range(depth)):
        out += b"--b%d--\n" % level
    return out


def nested_messages(depth: int) -> bytes:
    inner = b"From: inner@hostile.example.net\nSubject: inner\n\njackpot\n"
    for _ in range(depth):
        inner = b"From: nest@hostile.example.net\nSubject: nest\nContent-Type: message/rfc822\n\n" + inner
    return b"Message-ID: <nest@hostile.example.net>\n" + inner


def bomb(parts: int) -> bytes:
    body = b"".join(b"--b\nContent-Type: application/octet-stream\n\nx\n" for _ in range(parts))
    return (b"From: Bomb <bomb@hostile.example.net>\nSubject: bomb\nMessage-ID: <bomb@hostile.example.net>\n"
            b"MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n" + body + b"--b--\n")


HOSTILE = {
    "auth": b"From: Auth <auth@hostile.example.net>\nSubject: auth\nAuthentication-Results: ;\n"
            b"Message-ID: <auth@hostile.example.net>\n\njackpot casino\n",
    "multiparts": nested_multiparts(1100),
    "messages": nested_messages(1100),
    "bomb": bomb(100_000),  # 4.6 MB that Python's parser takes about 25 s to read
}


def _gateway(home: Path, *arguments: str) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", ""), **home_environment(home)}
    return subprocess.run(gateway_command(*arguments), env=env, capture_output=True, text=True,
                          timeout=300)


def _recent_store(root: Path, count: int, when: float) -> None:
    """`count` messages in a folder's new/, as a first sync leaves them (hard links to a few files: fast to make)."""
    folder = sample.make_folder(root / "Lists")
    originals = [sample.deliver(root / ".originals", sample.message(
        "List <list@example.com>", f"Digest {n}", f"garden news plumtree {n}", when, f"digest{n}@example.com"), when)
        for n in range(20)]
    for original in originals:
        os.utime(original, (when, when))
    for number in range(count):
        os.link(originals[number % len(originals)], folder / "new" / f"{int(when)}.M{number}P1.example")


def test_review_over_100000_recent_messages_reads_only_its_limit_and_hostile_mail_is_counted(
        gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    now = time.time()
    sample.write_mailbox(root, messages=40, now=now)
    hostile = {name: sample.deliver(root / "INBOX", raw, now, flags="") for name, raw in HOSTILE.items()}
    for path in hostile.values():
        os.utime(path, (now + 60, now + 60))  # the newest: the review reads them first
    write_config(gateway_home, sample.config(root))  # no projects: the gate reads nothing here

    async def train() -> dict:
        async with serve_client(gateway_home) as client:
            started = await client.call_tool("spam_train", {})
            assert not started.is_error, started.content
            for _ in range(900):
                job = (await client.call_tool("spam_job", {"id": started.structured_content["id"]})).structured_content
                if job["state"] != "running":
                    return job
                await anyio.sleep(0.2)
        raise AssertionError("the training job did not end")

    job = anyio.run(train)
    assert job["state"] == "done", job
    # The nested ones and the bomb are unreadable (refused before parsing: out of bounds); the empty
    # Authentication-Results is only a header here (this filter reads headers as written): learned as any other.
    assert job["result"]["corpus"]["unreadable"] == 3
    _recent_store(root, RECENT, now - 3600)

    async def review():
        async with serve_client(gateway_home) as client:
            answer = await client.call_tool("spam_review", {"limit": 20})
            label = await client.call_tool("spam_label", {"address": "mid:deep@hostile.example.net",
                                                          "label": "spam"})
            return answer, label

    answer, label = anyio.run(review)
    text = "\n".join(getattr(b, "text", "") for b in answer.content)
    assert not answer.is_error, text
    data = answer.structured_content
    assert data["recent"] >= RECENT + 40
    assert data["read"] == review_budget(20) and data["not_read"] == data["recent"] - data["read"]
    assert f"Read the newest {review_budget(20)} of the {data['recent']:,} messages" in text
    assert data["unreadable"] == 3 and "3 messages could not be read" in text
    assert label.is_error and "cannot be read as a message" in label.content[0].text
    for name, path in hostile.items():
        verdict = _gateway(gateway_home, "spam", "classify", str(path))
        assert "Traceback" not in verdict.stderr
        if name == "auth":
            assert verdict.returncode in (0, 1, 2) and verdict.stdout.split()[0] in ("spam", "ham", "unsure")
        else:
            assert verdict.returncode == 3 and "cannot be read" in verdict.stderr
