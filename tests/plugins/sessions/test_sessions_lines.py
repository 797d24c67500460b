"""The sessions tools' text, read by a parser written from the reference's line formats alone.

A client may parse the text rather than the structured content: every answer of search, list and read, through a
real `gateway serve` and the SDK's client, must be exactly the reference's lines (a transcript between the two
frame lines its tool's description announces), and say what the structured content says.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import anyio
from gateway_sessions import store
from gateway_sessions.model import Message, Session

from gateway.testing import serve_client, write_config
from tests.plugins.sessions.sessions_helpers import PEARS, PLUMS, store_path

# --- The parser: the reference's formats, nothing of the gateway's code ------------------------------------------

HIT = (re.compile(r"session (\S+) \(rank (-?\d+\.\d+)\)"), re.compile(r"title: (.*)"), re.compile(r"snippet: (.*)"))
ROW = re.compile(r"(\S+) (.*) msgs=(\d+) updated=(\S+)")
HEADER = ("id", "title", "created", "updated", "messages")
FRAME_OPEN = re.compile(r"<<<data (\w+): [^\n]*>>>")


class Unparsable(AssertionError):
    pass


def parse_search(text: str) -> list[dict[str, Any]]:
    """`session <id> (rank 0.42)`, `title: …`, `snippet: …` per hit; `(no hits)` for none."""
    lines = text.split("\n")
    if lines == ["(no hits)"]:
        return []
    if len(lines) % 3:
        raise Unparsable(f"hits come in threes: {lines}")
    hits = []
    for at in range(0, len(lines), 3):
        found = [pattern.fullmatch(line) for pattern, line in zip(HIT, lines[at:at + 3], strict=True)]
        if not all(found):
            raise Unparsable(f"not a hit: {lines[at:at + 3]}")
        hits.append({"id": found[0][1], "rank": found[0][2], "title": found[1][1], "snippet": found[2][1]})
    return hits


def parse_list(text: str) -> list[dict[str, Any]]:
    """`<session-id> <title> msgs=<count> updated=<iso-8601>` per row; `(no sessions)` for none."""
    if text == "(no sessions)":
        return []
    rows = []
    for line in text.split("\n"):
        found = ROW.fullmatch(line)
        if not found:
            raise Unparsable(f"not a row: {line!r}")
        rows.append({"id": found[1], "title": found[2], "messages": int(found[3]), "updated_at": found[4]})
    return rows


def parse_read(text: str) -> dict[str, Any]:
    """Five header lines, then `[i] role` and its text (one line or more) for i = 0 … messages-1, the messages
    between the frame's two lines."""
    lines = text.split("\n")
    session: dict[str, Any] = {}
    for key, line in zip(HEADER, lines[:5], strict=True):
        if not line.startswith(f"{key}: "):
            raise Unparsable(f"header line {key!r} expected: {line!r}")
        session[key] = line[len(key) + 2:]
    count = int(session["messages"])
    body = lines[5:]
    if not count:
        if body:
            raise Unparsable(f"lines after a transcript of no message: {body}")
        session["transcript"] = []
        return session
    opened = FRAME_OPEN.fullmatch(body[0]) if body else None
    if not opened or body[-1] != f"<<<end of data {opened[1]}>>>":
        raise Unparsable(f"the messages are not between the frame's lines: {body[:1]} … {body[-1:]}")
    body = body[1:-1]
    transcript: list[dict[str, Any]] = []
    for line in body:
        expected = re.fullmatch(rf"\[{len(transcript)}\] (\w+)", line)
        if expected and (not transcript or transcript[-1]["text"]):
            transcript.append({"index": len(transcript), "role": expected[1], "text": []})
        elif transcript:
            transcript[-1]["text"].append(line)
        else:
            raise Unparsable(f"[0] expected first: {line!r}")
    for message in transcript:
        if not message["text"]:
            raise Unparsable(f"message {message['index']} has no text line")
        message["text"] = "\n".join(message["text"])
    if len(transcript) != count:
        raise Unparsable(f"messages: {count}, but {len(transcript)} numbered")
    session["transcript"] = transcript
    return session


# --- The sample store ------------------------------------------------------------------------------------------

COMMON = "orchard"  # in most messages of the store: BM25 gives it a rank close to zero (FTS5's IDF floor)


def _text(words: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": words}]


def _add_samples(home: Path) -> None:
    """Sessions where one word is in most messages of the store (ranks that differ only far after the point), one
    whose middle messages hold only tool calls and results, and a message of several lines."""
    connection = store.open_for_writing(store_path(home))
    for n in range(8):
        words = " ".join([COMMON] * (n + 1) + ["pruning", "ladder"] * (8 - n))
        store.upsert(connection, Session(
            agent="claude-code", id=f"common-{n}", cwd="/home/ada/src/orchard",
            created_at=f"2026-04-0{n + 1}T08:00:00Z", updated_at=f"2026-04-0{n + 1}T08:05:00Z",
            messages=[Message(key=f"m{i}", role=("user", "assistant")[i % 2], blocks=_text(f"{words} {COMMON} {i}"))
                      for i in range(6)],
        ))
    tool_only = [{"type": "tool_result", "tool_use_id": "t1", "content": "quinceflux output"}]
    store.upsert(connection, Session(
        agent="claude-code", id="gaps", cwd="/home/ada/src/orchard",
        created_at="2026-04-09T00:00:00Z", updated_at="2026-04-09T00:05:00Z",
        messages=[
            Message(key="a", role="user", blocks=_text(f"Sort the medlars by ripeness in the {COMMON}.")),
            Message(key="b", role="assistant", blocks=[{"type": "tool_use", "id": "t1", "name": "Bash"}]),
            Message(key="c", role="user", blocks=tool_only),
            Message(key="d", role="assistant", blocks=_text("Sorted:\n[2] assistant\nthe soft ones first.")),
            Message(key="e", role="user", blocks=[{"type": "thinking", "thinking": "hmm"}]),
            Message(key="f", role="assistant", blocks=_text("Done.")),
        ],
    ))
    connection.close()


def _answers(home: Path) -> dict[str, Any]:
    """Each tool's answers, through a real server: (text, structured content) by call, and the tools' listing."""
    found: dict[str, Any] = {}
    calls = {
        "common": ("rousseau_search_sessions", {"query": COMMON, "limit": 50}),
        "every": ("rousseau_search_sessions", {"query": "the OR orchard OR pear OR plum", "limit": 50}),
        "rare": ("rousseau_search_sessions", {"query": "medlars"}),
        "none": ("rousseau_search_sessions", {"query": "xylophonequince"}),
        "list": ("rousseau_list_sessions", {"limit": 50}),
        "short list": ("rousseau_list_sessions", {"limit": 2}),
    }

    async def session() -> None:
        async with serve_client(home) as client:
            found["tools"] = {tool.name: tool for tool in (await client.list_tools()).tools}
            for key, (name, arguments) in calls.items():
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result.content
                found[key] = (result.content[0].text, result.structured_content)
            for row in found["list"][1]["sessions"]:
                result = await client.call_tool("rousseau_read_session", {"id": row["id"]})
                assert not result.is_error, result.content
                found[f"read {row['id']}"] = (result.content[0].text, result.structured_content)

    anyio.run(session)
    return found


def test_every_answer_of_the_sessions_tools_parses_by_the_reference_formats(imported_home: Path) -> None:
    _add_samples(imported_home)
    write_config(imported_home, {"gateway": {"plugins": ["sessions"]}, "plugins": {"sessions": {"refresh": False}}})
    found = _answers(imported_home)

    for key in ("common", "every", "rare", "none"):
        text, data = found[key]
        hits = parse_search(text)
        assert [(h["id"], h["title"], h["snippet"]) for h in hits] == [
            (h["id"], h["title"], h["snippet"]) for h in data["hits"]
        ], key
        for shown, given in zip(hits, data["hits"], strict=True):
            decimals = len(shown["rank"].split(".")[1])
            assert math.isclose(float(shown["rank"]), given["rank"], abs_tol=0.5 * 10 ** -decimals), key
            assert given["rank"] == 0 or float(shown["rank"]) != 0, f"{key}: a rank shown as zero"
        # Two hits whose ranks differ read differently: the precision tells them apart.
        assert len({h["rank"] for h in hits}) == len({h["rank"] for h in data["hits"]}), key
    assert parse_search(found["none"][0]) == [] and found["none"][1]["hits"] == []
    assert all(abs(hit["rank"]) < 0.005 for hit in found["common"][1]["hits"]), "a word this common ranks near 0"
    assert len(parse_search(found["common"][0])) >= 8 and len(parse_search(found["every"][0])) >= 10
    assert re.fullmatch(r"-?\d+\.\d\d", parse_search(found["rare"][0])[0]["rank"]), "a clear rank: two decimals"

    for key in ("list", "short list"):
        text, data = found[key]
        assert parse_list(text) == [
            {k: s[k] for k in ("id", "title", "messages", "updated_at")} for s in data["sessions"]
        ], key
    assert len(parse_list(found["list"][0])) >= 13

    for key in (k for k in found if k.startswith("read ")):
        text, data = found[key]
        session = parse_read(text)
        assert session["id"] == data["id"] and int(session["messages"]) == data["messages"]
        assert [(m["index"], m["role"]) for m in session["transcript"]] == [
            (m["index"], m["role"]) for m in data["transcript"]
        ], key
        for shown, given in zip(session["transcript"], data["transcript"], strict=True):
            assert shown["text"] == (given["text"] or "(no text)"), key


def test_read_numbers_every_message_and_says_which_hold_no_text(imported_home: Path) -> None:
    _add_samples(imported_home)
    write_config(imported_home, {"gateway": {"plugins": ["sessions"]}, "plugins": {"sessions": {"refresh": False}}})
    found = _answers(imported_home)
    gaps = parse_read(found["read gaps"][0])
    assert gaps["messages"] == "6"
    assert [(m["index"], m["role"], m["text"]) for m in gaps["transcript"]] == [
        (0, "user", "Sort the medlars by ripeness in the orchard."),
        (1, "assistant", "(no text)"),
        (2, "user", "(no text)"),
        (3, "assistant", "Sorted:\n[2] assistant\nthe soft ones first."),
        (4, "user", "(no text)"),
        (5, "assistant", "Done."),
    ]
    assert "quinceflux" not in found["read gaps"][0] and "hmm" not in found["read gaps"][0]
    assert [m["text"] for m in found["read gaps"][1]["transcript"]][1:3] == ["", ""]
    pears = parse_read(found[f"read {PEARS}"][0])  # a tool call and its result, as Claude Code wrote them
    assert pears["messages"] == "5" and [m["text"] for m in pears["transcript"]].count("(no text)") == 2
    assert parse_read(found[f"read {PLUMS}"][0])["transcript"]
    description = found["tools"]["rousseau_read_session"].description
    assert "<<<data MARK" in description and "<<<end of data MARK>>>" in description and "(no text)" in description


def test_ranks_read_as_decimals_precise_enough_to_tell_the_hits_apart() -> None:
    from gateway_sessions.render import rank_texts

    assert rank_texts([-4.21, -0.42]) == ["-4.21", "-0.42"]  # the seed's two decimals when they say enough
    assert rank_texts([-2.5e-06, -1.9e-06, -1.9e-06]) == ["-0.0000025", "-0.0000019", "-0.0000019"]
    assert rank_texts([-1.95e-06, -1.9e-06]) == ["-0.00000195", "-0.00000190"]  # one more digit where needed
    assert rank_texts([-1e-6 - 1e-9, -1e-6, -4.2]) == ["-0.000001001", "-0.000001000", "-4.20"]
    assert rank_texts([-0.0, 0.0, -3e-13]) == ["0.00", "0.00", "-0.00000000000030"]  # never "-0.00", never 0 for a rank
    assert rank_texts([]) == []
