"""Each tool's refusals are in its own name, through a real `gateway serve` and the SDK's client: a path refused to
draft_reply is said by draft_reply (not by read_message), a note read through a link is refused by read_note
without add_note's "nothing was written", and add_note's own refusal keeps it."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from gateway_mail.notes import sample as sample_notes

from gateway.testing import serve_client, write_config

CANARY = "mandrakewordingcanary"


def _text(result) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def test_each_tools_refusals_name_that_tool(gateway_home: Path) -> None:
    made = sample_notes.everything(gateway_home, CANARY)
    write_config(gateway_home, made["config"], projects=made["projects"])
    outside = gateway_home / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("# Elsewhere\n\nnot a note of the folder\n")
    (made["notes"] / "linked").symlink_to(outside)
    inbox = gateway_home / "Mail" / "personal" / "INBOX" / "cur"
    stray = inbox / ".stray:2,S"  # inside the account's folders, but hidden: not a message the index holds
    stray.write_text("not mail\n")
    paths = {"outside": str(gateway_home / "secret.txt"), "no message": str(inbox.parent / "dovecot.index"),
             "stray": str(stray)}
    (inbox.parent / "dovecot.index").write_text("index\n")

    async def play(client) -> dict:
        found = {}
        for key, path in paths.items():
            for tool in ("read_message", "draft_reply"):
                arguments = {"address": path, **({"body": "Thanks."} if tool == "draft_reply" else {})}
                found[f"{tool} {key}"] = await client.call_tool(tool, arguments)
        for address in ("sioul:note/linked/x.md", "sioul:note/missing.md"):
            found[f"read_note {address}"] = await client.call_tool("read_note", {"address": address})
        found["add_note linked"] = await client.call_tool("add_note", {"title": "t", "text": "x", "folder": "linked"})
        return found

    async def run() -> dict:
        async with serve_client(gateway_home) as client:
            return await play(client)

    found = anyio.run(run)
    for key, result in found.items():
        assert result.is_error, (key, _text(result))
        assert CANARY not in _text(result) and "Elsewhere" not in json.dumps(result.structured_content or {})
    for key in [k for k in paths if k != "stray"]:
        assert _text(found[f"read_message {key}"]).startswith("read_message opens message files "), key
        said = _text(found[f"draft_reply {key}"])
        assert said.startswith("draft_reply opens message files "), said
        assert "read_message opens" not in said
    # A file the index does not hold is refused as a kept one is: an agent cannot learn which files exist.
    for tool in ("read_message", "draft_reply"):
        assert "closed to AI agents; only the person can open it" in _text(found[f"{tool} stray"])
    assert "not a message file" in _text(found["draft_reply no message"])
    linked = _text(found["read_note sioul:note/linked/x.md"])
    assert linked.startswith("read_note cannot open that note: 'linked' on the way is a link"), linked
    assert "nothing was written" not in linked and linked.endswith("links are not followed")
    assert _text(found["read_note sioul:note/missing.md"]).startswith("read_note finds no note at that address")
    assert _text(found["add_note linked"]).endswith("nothing was written"), _text(found["add_note linked"])
    assert list((gateway_home / "Mail" / "personal" / "Drafts" / "cur").iterdir()) == []
