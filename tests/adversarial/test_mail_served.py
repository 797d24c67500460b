"""The mail plugin's privacy rules played as attacks through a real `gateway serve` and the SDK's client.

The canary: a closed project's message (and the rest of its conversation) holds one word; no answer of any tool
or resource holds it, and every count is the same whatever the words asked. Then the paths an agent may try
(`..`, another computer's share, a relative path, a link inside the Maildir pointing out), codes and links
hidden, forged mail said forged and kept from the client's project, and drafts: header injection refused, the
body logged by its length only.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import anyio
from gateway_mail.mail import sample

from gateway.testing import read_audit, serve_client, write_config

CANARY = "xylocarpmailcanary"


def _text(result) -> str:
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {}, ensure_ascii=False)


def _world(home: Path, **mail) -> tuple[Path, dict[str, str]]:
    root = home / "Mail" / "personal"
    ids = sample.world(root, CANARY, time.time())
    write_config(home, sample.config(root, **mail), projects=sample.PROJECTS)
    return root, ids


def _serve(home: Path, play):
    async def run():
        async with serve_client(home) as client:
            return await play(client)

    return anyio.run(run)


def test_a_closed_projects_mail_is_never_shown(gateway_home: Path) -> None:
    _root, ids = _world(gateway_home)

    async def play(client):
        given, counts = [], []
        for query in (CANARY, "plumtree", f"{CANARY[:6]}*", "Vault", "nothingmatches", "plumtree OR vault"):
            result = await client.call_tool("search_mail", {"query": query})
            given.append(_text(result))
            counts.append((result.structured_content["left_out"], result.structured_content["blocked"]))
        for arguments in ({}, {"open": True}):
            given.append(_text(await client.call_tool("porch", arguments)))
        for message_id in ids.values():
            given.append(_text(await client.call_tool("read_message", {"address": f"mid:{message_id}"})))
            given.append(_text(await client.call_tool("draft_reply", {"address": f"mid:{message_id}", "body": "ok"})))
        listed = await client.list_resources()
        given.append(json.dumps([r.model_dump(mode="json") for r in listed.resources]))
        for uri in ["sioul:porch", *(f"mid:{m}" for m in ids.values())]:
            try:
                given.append(json.dumps((await client.read_resource(uri)).model_dump(mode="json")))
            except Exception as refusal:  # noqa: BLE001 - a refusal is an answer too
                given.append(str(refusal))
        return given, counts

    given, counts = _serve(gateway_home, play)
    for answer in given:
        assert CANARY not in answer
        assert "Vault matters" not in answer and "keeper@vault" not in answer
    # Kept: the vault's two and the two claiming the closed client's address (kept, authenticated or not).
    assert set(counts) == {(4, 1)}, counts
    assert not list((gateway_home / "Mail" / "personal" / "Drafts" / "cur").glob("*vault*"))


def test_paths_outside_the_mail_are_refused(gateway_home: Path) -> None:
    root, ids = _world(gateway_home)
    secret = gateway_home / "secret.txt"
    secret.write_text(f"From: a@example.org\nSubject: {CANARY}\n\n{CANARY}\n")
    (root / "INBOX" / "cur" / "link:2,S").symlink_to(secret)
    outside = gateway_home / "Elsewhere"
    sample.deliver(outside / "INBOX", sample.message(subject=CANARY, body=CANARY))
    (root / "Linked").symlink_to(outside / "INBOX")  # a folder linked in from elsewhere
    inbox = root / "INBOX" / "cur"
    attempts = [
        str(inbox / ".." / ".." / ".." / "secret.txt"),
        "//fileserver.example.com/share/mail/cur/1:2,S",
        "\\\\fileserver.example.com\\share\\mail",
        "Mail/personal/INBOX/cur/x:2,S",
        str(inbox / "link:2,S"),
        str(root / "Linked" / "cur" / next((outside / "INBOX" / "cur").iterdir()).name),
        str(secret),
        "/etc/passwd",
    ]

    async def play(client):
        results = [await client.call_tool(tool, {"address": a, **({"body": "x"} if tool == "draft_reply" else {})})
                   for a in attempts for tool in ("read_message", "draft_reply")]
        good = await client.call_tool("read_message", {"address": str(next((root / "INBOX" / "new").iterdir()))})
        return results, good

    results, good = _serve(gateway_home, play)
    for result in results:
        assert result.is_error and CANARY not in _text(result), _text(result)
    assert not good.is_error and "Invoice from the plumber" in _text(good)
    assert list((root / "Drafts" / "cur").iterdir()) == []


def test_codes_links_and_numbers_are_masked_and_forgery_is_said(gateway_home: Path) -> None:
    root, ids = _world(gateway_home)
    # The client's project open: its sender route needs proof, so the forged and the claimed mail are of no project.
    opened = [p if p["id"] != "client" else {**p, "ai": True} for p in sample.PROJECTS]
    write_config(gateway_home, sample.config(root), projects=opened)

    async def play(client):
        read = {role: _text(await client.call_tool("read_message", {"address": f"mid:{ids[role]}"}))
                for role in ("code", "table", "password", "plumber", "forged", "claimed")}
        found = {q: (await client.call_tool("search_mail", {"query": q})).structured_content["hits"]
                 for q in ("482913", "482", "913", '"20041010"', "0505", "Xy7", "739156")}
        return read, found

    read, found = _serve(gateway_home, play)
    for form in ("482 913", "482-913", "48 29 13", "482913", "token=", "accounts.example.com"):
        assert form not in read["code"], form
    assert "Xy7!pq9Zk" not in read["password"] and "112233" not in read["password"]
    assert "3M02 606" not in read["plumber"] and "…2606" in read["plumber"] and "01 23 45 67 89" in read["plumber"]
    assert "[code]" in read["table"]
    assert all(hits == [] for hits in found.values()), found
    assert "FORGED" in read["forged"] and "FORGED" not in read["claimed"]


def test_draft_headers_cannot_be_injected_and_the_body_is_not_logged(gateway_home: Path) -> None:
    root, ids = _world(gateway_home)
    address = f"mid:{ids['friend']}"
    attacks = [
        {"subject": "Hi\r\nBcc: eve@example.com"},
        {"to": ["ada@example.net\r\nBcc: eve@example.com"]},
        {"to": ["Ada <ada@example.net>, eve@example.com"]},
        {"cc": ['"eve@example.com" <ada@example.net>']},
        {"subject": "Hi\u2028Bcc: eve@example.com"},
    ]

    async def play(client):
        refused = [await client.call_tool("draft_reply", {"address": address, "body": "x", **a}) for a in attacks]
        made = await client.call_tool("draft_reply", {"address": address, "body": f"The body {CANARY}"})
        return refused, made

    refused, made = _serve(gateway_home, play)
    assert all(r.is_error for r in refused)
    assert not made.is_error
    [draft] = (root / "Drafts" / "cur").iterdir()
    assert b"eve@example.com" not in draft.read_bytes() and draft.name.endswith(":2,D")
    assert oct(os.stat(draft).st_mode & 0o777) == "0o600"
    audit = read_audit(gateway_home)
    assert CANARY not in json.dumps(audit)
    assert any(e.get("tool") == "draft_reply" and e["arguments"].get("body") == {"length": len(f"The body {CANARY}")}
               for e in audit)
