"""search_mail's shortcuts played against through a real `gateway serve` and the SDK's client, on one server that
lives through the changes: accounts read once per configuration are read again when the person takes an account
out (its mail is found no more, whatever the words) or moves one; a folder whose name holds line ends and doubled
spaces is shown on one line; a query kept by its text still answers a new configuration and a new index; and the
search tables merged by `gateway mail index` give the same answers, the closed project's message still by none."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import anyio
from gateway_mail.mail import index, sample

from gateway.testing import folders_of, serve_client, write_config
from tests.forkserver import gateway_command

CANARY = "marshwortshortcutcanary"
KEPT = "fenwortclosedcanary"


def _text(result) -> str:
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {}, ensure_ascii=False)


def _config(home: Path, accounts: list[tuple[str, str]]) -> None:
    config = sample.config(home / "Mail" / "personal")
    config["plugins"]["mail"]["accounts"] = [{"name": name, "maildir": maildir, "authserv_id": sample.OWN_SERVER}
                                             for name, maildir in accounts]
    write_config(home, config, projects=sample.PROJECTS)


def test_an_account_taken_out_or_moved_is_searched_as_the_config_now_says(gateway_home: Path) -> None:
    mail = gateway_home / "Mail"
    sample.deliver(mail / "personal" / "INBOX", sample.message(subject="Open plums", body="plums"))
    sample.deliver(mail / "old" / "INBOX", sample.message(subject=f"Old {CANARY}", body="plums",
                                                          message_id="old@example.org"))
    sample.deliver(mail / "elsewhere" / "INBOX", sample.message(subject="Moved greengages", body="plums",
                                                                message_id="moved@example.org"))
    _config(gateway_home, [("personal", "~/Mail/personal"), ("old", "~/Mail/old")])

    async def play():
        async with serve_client(gateway_home) as client:
            said = {}
            for step, accounts in (("both", None), ("taken out", [("personal", "~/Mail/personal")]),
                                   ("moved", [("personal", "~/Mail/personal"), ("old", "~/Mail/elsewhere")])):
                if accounts is not None:
                    _config(gateway_home, accounts)
                said[step] = [await client.call_tool("search_mail", {"query": q}) for q in (CANARY, "plums", "*")]
            return said

    said = anyio.run(play)
    assert "mid:old@example.org" in _text(said["both"][0])
    for step in ("taken out", "moved"):
        for result in said[step]:
            assert not result.is_error and CANARY not in _text(result) and "old@example.org" not in _text(result)
    assert said["taken out"][1].structured_content["total"] == 1
    assert [h["address"] for h in said["moved"][1].structured_content["hits"]][:1] == ["mid:moved@example.org"]
    assert said["moved"][2].structured_content["total"] == 2


def test_a_folder_name_with_line_ends_is_shown_on_one_line(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    hostile = ".Folder\u2028Bcc: eve@example.com\x85Subject:  forged\u2029end  "
    sample.deliver(root / "INBOX", sample.message(subject="Apples", body="apples"))
    # The sender's name and the subject carry U+2028 encoded (RFC 2047), as a stranger's mail program may write them.
    sample.deliver(root / hostile, sample.message(sender="=?utf-8?q?Ada__Example=E2=80=A8?= <ada@example.net>",
                                                  subject="=?utf-8?q?Quinces=E2=80=A8Date:_forged?=", body="quinces"))
    _config(gateway_home, [("personal", "~/Mail/personal")])

    async def play():
        async with serve_client(gateway_home) as client:
            return await client.call_tool("search_mail", {"query": "quinces"})

    result = anyio.run(play)
    [hit] = result.structured_content["hits"]
    for field in ("folder", "from", "subject"):
        assert not any(ch in hit[field] for ch in "\u2028\u2029\x85\r\n") and "  " not in hit[field], hit
        assert hit[field] == hit[field].strip()
    text = result.content[0].text
    assert not any(ch in text for ch in "\u2028\u2029\x85\r")
    lines = text.split("\n")
    assert [line for line in lines if line.lstrip().startswith(("Bcc:", "Subject:  forged", "Date: forged"))] == []


def test_merged_search_tables_answer_the_same_and_keep_the_closed_message(gateway_home: Path) -> None:
    inbox = gateway_home / "Mail" / "personal" / "INBOX"
    _config(gateway_home, [("personal", "~/Mail/personal")])
    queries = ["plums", "plums OR quinces", "subject:batch", "batch*", '"batch 2"', "plums -quinces", KEPT]

    async def play():
        async with serve_client(gateway_home) as client:
            for batch in range(3):  # each call's refresh writes a segment of its own (FTS5 merges by four)
                sample.deliver(inbox, sample.message(sender="Keeper <keeper@vault.example.com>",
                                                     subject=f"Batch {batch} {KEPT}", body="plums quinces"))
                for number in range(3):
                    sample.deliver(inbox, sample.message(subject=f"Batch {batch} note {number}",
                                                         body="plums" if number % 2 else "plums quinces"))
                await client.call_tool("search_mail", {"query": "plums"})
            cache = folders_of(gateway_home).for_plugin("mail").cache
            connection = index.connect(index.index_path(cache))
            before_merge = index.segments(connection)
            connection.close()
            before = {q: await client.call_tool("search_mail", {"query": q, "limit": 50}) for q in queries}
            done = subprocess.run(gateway_command("mail", "index", "--full"), capture_output=True,
                                  text=True, env=dict(os.environ), timeout=120)
            assert done.returncode == 0, done.stderr[-2000:]
            connection = index.connect(index.index_path(cache))
            after_merge = index.segments(connection)
            connection.close()
            after = {q: await client.call_tool("search_mail", {"query": q, "limit": 50}) for q in queries}
            return before_merge, after_merge, before, after

    before_merge, after_merge, before, after = anyio.run(play)
    assert before_merge > 1 and after_merge == 1
    for query in queries:
        assert not after[query].is_error, _text(after[query])
        assert after[query].structured_content == before[query].structured_content, query
        assert after[query].content[0].text == before[query].content[0].text, query
        assert KEPT not in _text(after[query]) and "vault.example.com" not in _text(after[query])
        assert after[query].structured_content["left_out"] == 3, query
    assert after["plums"].structured_content["total"] == 9
