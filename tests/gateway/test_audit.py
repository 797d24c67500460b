"""The audit log: what was given, never the words; the person's alone; whole lines with several writers."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from gateway import Answer, Tool
from gateway.engine.audit import AuditLog, summarise_arguments
from gateway.testing import inline_plugin, make_gateway

CANARY = "zebracanary"


def echo(ctx, text: str, query: str = "") -> Answer:
    return Answer(text=f"you said: {text} {query}", data={"echo": text}, given=("note:canary-note",), left_out=2)


def test_a_canary_in_arguments_and_answers_never_reaches_the_log(gateway_home, audit_lines):
    gw = make_gateway([inline_plugin("notes", tools=[Tool.from_function(echo, private_arguments=["text"])])],
                      home=gateway_home)
    long_query = f"a long query that holds the word {CANARY} far along its length"
    answer = gw.call("echo", {"text": f"my {CANARY} secret", "query": long_query})
    assert CANARY in answer.text
    lines = audit_lines()
    assert len(lines) == 1
    raw = "".join(path.read_text() for path in gw.audit.folder.glob("*.jsonl"))
    assert CANARY not in raw
    entry = lines[0]
    assert entry["tool"] == "echo" and entry["plugin"] == "notes" and entry["outcome"] == "ok"
    assert entry["arguments"]["text"] == {"length": len(f"my {CANARY} secret")}
    assert entry["given"] == ["note:canary-note"] and entry["left_out"] == 2
    assert entry["length"] == len(answer.text) and entry["client"] == "test"


def test_short_arguments_are_kept_masked():
    card = "4111 1111 1111 1111"
    kept = summarise_arguments({"limit": 5, "id": "abc", "number": card})
    assert kept["limit"] == 5 and kept["id"] == "abc"
    assert "1111 1111 1111" not in json.dumps(kept)


def test_a_long_query_or_title_is_kept_by_its_first_40_characters_masked_and_its_length():
    card = "4111 1111 1111 1111"
    title = f"Pay {card} to Jane before the meeting of the whole committee"
    kept = summarise_arguments({"title": title, "query": "first line\nsecond line"})
    assert kept["title"] == {"start": "Pay [card …1111] to Jane before the mee…", "length": len(title)}
    assert kept["query"] == {"start": "first line second line", "length": len("first line\nsecond line")}
    assert "1111 1111" not in json.dumps(kept)


def test_a_long_argument_is_masked_before_it_is_cut():
    # Cut first, the card would end at the 40th character as a number no mask knows any more.
    query = "words to push the card far along: 4111 1111 1111 1111 and more words"
    kept = summarise_arguments({"query": query})
    assert kept["query"]["length"] == len(query)
    assert "4111" not in kept["query"]["start"] and "1111" not in kept["query"]["start"]


@pytest.mark.parametrize(
    "typed",
    ["482913", "482 913", "48-29-13", "code 731904", "４８２９１３", "⑦③①⑨⓪④", "code: seven three one nine"],
)
def test_a_code_an_agent_typed_as_a_search_is_masked_like_a_code(typed):
    kept = summarise_arguments({"query": typed})
    assert "[code]" in kept["query"]
    assert not any(ch.isdigit() for ch in kept["query"])


@pytest.mark.parametrize(
    "typed",
    ["2026-03-12", "09:30", "today", "sioul:task/t-law", "mid:<20261201.482913@example.com>", "room 204", "v3.11.7",
     "1 200 €", "12"],
)
def test_dates_times_addresses_and_small_numbers_an_agent_typed_are_kept(typed):
    assert summarise_arguments({"query": typed}) == {"query": typed}


def test_free_texts_are_kept_by_their_length_even_when_their_tool_did_not_say():
    kept = summarise_arguments(
        {"body": "Dear Jane, the code is 482913", "text": "a note", "nested": {"message": "hello there"}, "to": "x"}
    )
    assert kept == {
        "body": {"length": len("Dear Jane, the code is 482913")},
        "text": {"length": len("a note")},
        "nested": {"message": {"length": len("hello there")}},
        "to": "x",
    }


def test_the_log_is_the_persons_alone(gateway_home):
    log = AuditLog(gateway_home / "state" / "audit")
    log.write({"tool": "x"})
    assert stat.S_IMODE(log.folder.stat().st_mode) == 0o700
    (path,) = log.folder.glob("*.jsonl")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.name == f"{datetime.now(UTC):%Y-%m}.jsonl"


WRITER = """
import sys
from pathlib import Path
from gateway.engine.audit import AuditLog
log = AuditLog(Path(sys.argv[1]))
for i in range(int(sys.argv[2])):
    log.write({"tool": "t", "writer": sys.argv[3], "i": i, "pad": "x" * 3000})
"""


def test_two_processes_appending_at_once_leave_whole_lines(tmp_path):
    folder = tmp_path / "audit"
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(folder), "400", name]) for name in ("a", "b", "c")
    ]
    for writer in writers:
        assert writer.wait(60) == 0
    entries = []
    for path in sorted(folder.glob("*.jsonl")):  # one month's file, or two when the writers crossed a month's end
        lines = path.read_bytes().split(b"\n")
        assert lines[-1] == b""
        entries += [json.loads(line) for line in lines[:-1]]
    assert len(entries) == 1200
    for name in "abc":
        assert sorted(e["i"] for e in entries if e["writer"] == name) == list(range(400))


def test_reading_back_filters_and_skips_torn_lines(tmp_path):
    log = AuditLog(tmp_path / "audit")
    log.write({"tool": "a", "client": "claude-code"})
    log.write({"tool": "b", "client": "cursor"})
    (path,) = log.folder.glob("*.jsonl")
    with path.open("a") as out:
        out.write('{"tool": "torn\n')
    assert [e["tool"] for e in log.read()] == ["a", "b"]
    assert [e["tool"] for e in log.read(client="cursor")] == ["b"]
    assert [e["tool"] for e in log.read(client="Claude")] == ["a"]  # a part of the name, any case
    assert [e["tool"] for e in log.read(tool="a")] == ["a"]
    assert list(log.read(since=datetime.now(UTC) + timedelta(hours=1))) == []


def test_audit_client_cli_finds_the_command_lines_calls(gateway_home):
    from click.testing import CliRunner

    from gateway.commands.cli import main

    runner = CliRunner()
    assert runner.invoke(main, ["call", "echo", '{"text": "hi"}']).exit_code == 0
    found = runner.invoke(main, ["audit", "--client", "cli", "--json"])
    assert found.exit_code == 0 and '"tool": "echo"' in found.output.replace('":"', '": "')
