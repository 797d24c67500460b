"""Texts and calls through a real `gateway serve`, spoken to with the MCP SDK's own client.

Off by default, unlisted and refused; allowed, the conversations are listed and read with their words framed, a
code is masked and found by no writing of its digits, a closed project's client's conversation (by her card's
address) and a closed project's number (a senders route written as a number) are kept: in the counts, refused by
their address, found by no word, never drafted to; a draft is saved in a file and nothing is sent. The canary is
in a text and in a call's contact name of each closed project, and in no answer of any tool.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
from gateway_texts import sample

from gateway.testing import read_audit, serve_client, write_config

CANARY = "sargassocanary"
NAMES = ("Kim Keeper", "strongbox", "Harbor", "berth", "keeper@vault")
TOOLS = {"list_conversations", "read_conversation", "search_texts", "list_calls", "draft_text"}
SEARCHES = (CANARY, "strongbox", "papers", "plumtree", "key", "nothingmatcheshere", "Harbor", sample.CODE)


def _text(result) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content) + json.dumps(
        result.structured_content or {}, ensure_ascii=False)


def _configured(home: Path, made: dict, enabled: bool) -> None:
    table = dict(made["config"]["plugins"]["texts"])
    if not enabled:
        table.pop("enabled")  # the default: off
    path = write_config(home, {"gateway": {"plugins": ["texts"], "refresh_budget_ms": 60_000}, "plugins": {"texts": table}},
                        projects=made["projects"])
    stamp = path.stat().st_mtime_ns + (2_000_000_000 if enabled else 0)
    os.utime(path, ns=(stamp, stamp))  # seen as changed at the next call, whatever the clock's grain


async def _call(client, tool: str, arguments: dict) -> tuple[bool, str]:
    try:
        result = await client.call_tool(tool, arguments)
    except Exception as refusal:  # noqa: BLE001 - a JSON-RPC error is a refusal too
        return True, str(refusal)
    return bool(result.is_error), _text(result)


def test_texts_only_when_allowed_and_never_sent(gateway_home: Path) -> None:
    made = sample.everything(gateway_home, CANARY)
    exports_before = {p: p.read_bytes() for p in made["exports"].iterdir()}
    _configured(gateway_home, made, enabled=False)
    drafts = gateway_home / ".local" / "share" / "gateway" / "plugins" / "texts" / "drafts"

    async def play(client):
        seen: dict = {"off_listed": {t.name for t in (await client.list_tools()).tools}}
        seen["off_calls"] = [await _call(client, t, a) for t, a in (
            ("list_conversations", {}), ("read_conversation", {"address": sample.ADA}),
            ("draft_text", {"address": sample.ADA, "body": "hello"}))]
        _configured(gateway_home, made, enabled=True)
        seen["on_listed"] = {t.name for t in (await client.list_tools()).tools}
        answers = []
        for tool, arguments in [
            ("list_conversations", {}), ("list_conversations", {"limit": 1}),
            *(("read_conversation", {"address": a}) for a in (sample.ADA, "+12125550142~+12125550150", sample.SHORT)),
            *(("search_texts", {"query": q}) for q in SEARCHES), ("list_calls", {"days": 90}),
        ]:
            answers.append((tool, arguments, *await _call(client, tool, arguments)))
        seen["answers"] = answers
        seen["kept"] = [await _call(client, "read_conversation", {"address": a}) for a in (
            sample.KIM, "0639980123", sample.HARBOR, "+12125550177")]
        seen["drafts_refused"] = [await _call(client, "draft_text", {"address": a, "body": "Are you there?"}) for a in (
            sample.KIM, sample.HARBOR, f"{sample.ADA}~{sample.LEE}", sample.SHORT, "BANK")]
        seen["draft"] = await _call(client, "draft_text", {"address": "+1 (212) 555-0142", "body": "On my way, 10 min."})
        seen["counts"] = {json.loads(text[text.index("{"):])["left_out"] for tool, _a, error, text in answers
                          if tool == "search_texts" and not error and "{" in text}
        return seen

    seen = anyio.run(_serve, gateway_home, play)
    # Off by default: neither listed nor called, and the refusal says how to turn it on.
    assert not seen["off_listed"] & TOOLS
    for refused, sentence in seen["off_calls"]:
        assert refused and "enabled = true" in sentence
    assert seen["on_listed"] == TOOLS
    answers = {(tool, json.dumps(arguments)): (error, text) for tool, arguments, error, text in seen["answers"]}
    for (tool, arguments), (error, text) in answers.items():
        assert not error, (tool, arguments, text)
        assert CANARY not in text and sample.CODE not in text, (tool, arguments)
        for name in NAMES:
            assert name.lower() not in text.lower(), (tool, arguments, name)
    listed = answers[("list_conversations", "{}")][1]
    assert "+12125550142  Ada Example" in listed and "2 conversations left out" in listed
    assert "group of 2" in listed and "+33639980123" not in listed and "+12125550177" not in listed
    # The words framed: between two lines carrying the same mark, the texts inside.
    read = answers[("read_conversation", json.dumps({"address": sample.ADA}))][1]
    lines = read.splitlines()
    opening = next(i for i, line in enumerate(lines) if line.startswith("<<<data "))
    mark = lines[opening].split()[1].rstrip(":")
    closing = next(i for i, line in enumerate(lines) if line.startswith("<<<end of data") and mark in line)
    assert any("Dinner on Friday" in line for line in lines[opening + 1:closing])
    assert "me: Yes, 8 pm" in read
    code = answers[("read_conversation", json.dumps({"address": sample.SHORT}))][1]
    assert "verification code is [code]" in code
    assert "(no text found)" in answers[("search_texts", json.dumps({"query": sample.CODE}))][1]
    # A search's count of what it kept out is the same whatever its words.
    assert seen["counts"] == {3}
    # Kept conversations: refused by their address however it is written, never drafted to.
    for refused, sentence in seen["kept"]:
        assert refused and "closed to AI agents" in sentence and CANARY not in sentence
    refusals = seen["drafts_refused"]
    assert all(refused for refused, _sentence in refusals), refusals
    assert "closed to AI agents" in refusals[0][1] and "closed to AI agents" in refusals[1][1]
    assert "group" in refusals[2][1] and "not a full phone number" in refusals[3][1]
    # The draft: saved in a file of its own, never sent; nothing else written, the exports untouched.
    refused, said = seen["draft"]
    assert not refused and "not sent" in said
    files = sorted(drafts.iterdir())
    assert len(files) == 1 and files[0].read_text().startswith("To: +12125550142\n")
    assert "On my way, 10 min." in files[0].read_text() and oct(files[0].stat().st_mode & 0o777) == "0o600"
    assert {p: p.read_bytes() for p in made["exports"].iterdir()} == exports_before
    # The audit log keeps the draft's words by their length only, and no text's words.
    audit = json.dumps(read_audit(gateway_home))
    assert "On my way" not in audit and "Dinner on Friday" not in audit and "papers are in" not in audit, audit


LAUGHS = ("<?xml version=\"1.0\"?>\n<!DOCTYPE smses [\n <!ENTITY a \"lol\">\n"
          + "".join(f" <!ENTITY {chr(98 + n)} \"{('&' + chr(97 + n) + ';') * 10}\">\n" for n in range(9))
          + "]>\n<smses count=\"1\"><sms address=\"+1 212-555-0160\" date=\"1764579600000\" type=\"1\" "
          "body=\"&j;\" /></smses>\n")


def test_the_phone_messages_and_calls(gateway_home: Path) -> None:
    made = sample.everything(gateway_home, CANARY)
    # Beside the phone's exports: a billion laughs and a cut file, each failing alone.
    (made["exports"] / "sms-20261202000000.xml").write_text(LAUGHS)
    (made["exports"] / "calls-20261202000000.xml").write_text("<?xml version='1.0'?><calls count=\"1\"><call number=")
    _configured(gateway_home, made, enabled=True)
    digits = sample.CODE
    forms = (digits, f"{digits[:3]} {digits[3:]}", f"{digits[:3]}-{digits[3:]}", f"{digits[:2]} {digits[2:4]} {digits[4:]}")

    async def play(client):
        found = {}
        for tool, arguments in [("read_conversation", {"address": sample.SHORT}),
                                ("read_conversation", {"address": sample.ADA}),
                                ("search_texts", {"query": "held phone"}), ("search_texts", {"query": "verification"}),
                                *(("search_texts", {"query": form}) for form in forms),
                                ("list_calls", {}), ("list_calls", {"days": 1, "limit": 1})]:
            found[(tool, json.dumps(arguments))] = await _call(client, tool, arguments)
        return found

    found = anyio.run(_serve, gateway_home, play)
    for (tool, arguments), (error, text) in found.items():
        assert not error, (tool, arguments, text)
        assert digits not in text and CANARY not in text, (tool, arguments)
    # A code masked where it is written, and found by no writing of its digits.
    assert "[code]" in found[("read_conversation", json.dumps({"address": sample.SHORT}))][1]
    assert "[code]" in found[("search_texts", json.dumps({"query": "verification"}))][1]
    for form in forms:
        assert "(no text found)" in found[("search_texts", json.dumps({"query": form}))][1], form
    # A text the phone holds until its time is not given before it.
    ada = found[("read_conversation", json.dumps({"address": sample.ADA}))][1]
    assert "held by the phone" not in ada and "(no text found)" in found[("search_texts", json.dumps({"query": "held phone"}))][1]
    # Calls: the declined one said so, the closed projects' calls left out and counted, their names in no answer.
    calls = found[("list_calls", "{}")][1]
    assert "declined  +12125550150  Lee Sample  0 s" in calls and "incoming  +12125550142  Ada Example  2 min 5 s" in calls
    assert "2 calls left out" in calls and "Kim" not in calls and "Harbor" not in calls
    assert "1 call in the last 1 day" in found[("list_calls", json.dumps({"days": 1, "limit": 1}))][1]
    assert "export not read: sms-20261202000000.xml" in calls and "declares XML entities" in calls
    assert "export not read: calls-20261202000000.xml" in calls and "not well-formed" in calls
    assert "lollol" not in calls


async def _serve(home: Path, play):
    async with serve_client(home) as client:
        return await play(client)
