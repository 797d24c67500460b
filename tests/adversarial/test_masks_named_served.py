"""The masks' third version played through a real `gateway serve`: session transcripts holding each form the
masks used to miss (a code after `Code:` however spaced, a first-person code, superscript and circled digits,
a code spelled out, `ABX-482`, a card in table cells or wrapped at a line's end, an IBAN across a line break,
a bare AWS secret key); `rousseau_search_sessions` for the digits (or letters) of each finds nothing, no answer
holds them, and the audit log keeps the searches masked. A store indexed with the masks of the version before
is masked again before its first answer. Every number is invented (check digits computed here); every domain
is reserved.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import anyio
from gateway_sessions import store
from gateway_sessions.importing import import_agent

from gateway.privacy import MASKS_VERSION
from gateway.testing import folders_of, read_audit, serve_client, write_config


def iban(country: str, bban: str) -> str:
    number = int("".join(str(int(ch, 36)) for ch in bban + country + "00"))
    return f"{country}{98 - number % 97:02d}{bban}"


def luhn_card(body: str) -> str:
    for last in "0123456789":
        digits = [int(ch) for ch in body + last]
        total = sum(d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(reversed(digits)))
        if total % 10 == 0:
            return body + last
    raise AssertionError("unreachable")


def groups(number: str, sep: str = " ") -> str:
    return sep.join(number[i : i + 4] for i in range(0, len(number), 4))


CARD = luhn_card("453201511283036")
IBAN = iban("FR", "14508059410452736918254")
AWS_ID = "AKIAEXAMPLE7Q2W3E4R5"
AWS_SECRET = "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"

# (session id, an ordinary word of the message, the message, the queries that must find nothing, what no answer
# may hold). Each session's code is its own, so that a query finds only what it aims at.
CASES = [
    ("code-colon-spaced", "quokka", "Code: 731 904 (valid 10 min) quokka", ["731904", '"731 904"', "7319*"],
     ["731 904", "731904"]),
    ("the-code-colon", "wombat", "The code: 582617 wombat", ["582617", "5826*"], ["582617"]),
    ("code-expires", "pangolin", "Code 639418 expires soon pangolin", ["639418", "6394*"], ["639418"]),
    ("first-person", "narwhal", "My code is 482913 narwhal", ["482913", "4829*"], ["482913"]),
    ("superscript", "axolotl", "Your code: ⁷⁵²⁰⁸³ axolotl", ["752083", "⁷⁵²⁰⁸³", "7520*"], ["⁷⁵²⁰⁸³"]),
    ("circled", "okapi", "Your code is ⑧③①⑨⓪⑥ okapi", ["831906", "⑧③①⑨⓪⑥", "8319*"], ["⑧③①⑨⓪⑥"]),
    ("spelled", "tapir", "my code is seven three one nine zero four tapir",
     ['"seven three one nine"', '"three one nine zero"', "seven AND four"], ["seven three one"]),
    ("spelled-fr", "ibex", "mon code est sept deux un huit zéro cinq ibex",
     ['"sept deux un huit"', "huit AND cinq"], ["sept deux un"]),
    ("letters", "gecko", "Your code is ABX-482 gecko", ["ABX", "482", '"ABX 482"', "ABX*"], ["ABX-482", "ABX"]),
    ("card-cells", "dugong", f"<td> {groups(CARD)} </td> dugong", [CARD, groups(CARD[:8])[:4], f'"{groups(CARD)}"'],
     [groups(CARD), CARD]),
    ("card-wrapped", "lemur", f"card {groups(CARD[:8])}\n{groups(CARD[8:])} lemur", [CARD[:4], f'"{groups(CARD[:8])}"'],
     [groups(CARD[:8])]),
    ("card-mid-group", "chinchilla", f"card {groups(CARD)[:12]}\n{groups(CARD)[12:]} chinchilla", [CARD[:4], f'"{groups(CARD)[:12]}"'],
     [groups(CARD)[:12]]),
    ("iban-br", "margay", f"rent to {groups(IBAN[:12])}\n{groups(IBAN[12:])} margay", [IBAN[4:8], IBAN[:4]],
     [groups(IBAN[:12])]),
    ("aws-pair", "civet", f"keys: {AWS_ID}\n{AWS_SECRET} civet", ["q8RtvLwnZkaVbN", "xJmePd", "AKIAEXAMPLE7Q2W3E4R5"],
     [AWS_SECRET, "q8RtvLwnZkaVbN"]),
]  # fmt: skip


LONG_QUERY = "where did I paste code 408271 for the staging login yesterday"
GLUED_QUERY = "code K7Q9PL482917"  # masked whole: its digits alone once left "K7Q9PL" in the audit line


def _line(session_id: str, text: str, minute: int) -> str:
    return json.dumps(
        {
            "type": "user",
            "uuid": f"u-{session_id}",
            "sessionId": session_id,
            "cwd": "/home/ada/src/zoo",
            "timestamp": f"2026-03-01T10:{minute:02d}:00.000Z",
            "message": {"role": "user", "content": text},
        },
        ensure_ascii=False,
    )


def _store_with(home: Path, cases: list[tuple]) -> Path:
    folder = home / ".claude" / "projects" / "-home-ada-src-zoo"
    folder.mkdir(parents=True, exist_ok=True)
    for number, (session_id, _word, message, *_rest) in enumerate(cases):
        (folder / f"{session_id}.jsonl").write_text(_line(session_id, message, number) + "\n", encoding="utf-8")
    path = store.default_path(folders_of(home).for_plugin("sessions").data)
    connection = store.open_for_writing(path)
    try:
        import_agent(connection, "claude-code")
    finally:
        connection.close()
    write_config(home, {"gateway": {"plugins": ["sessions"]}})
    return path


def _everything(result) -> str:
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {}, ensure_ascii=False)


async def _hits(client, query: str) -> tuple[list[str], str] | None:
    result = await client.call_tool("rousseau_search_sessions", {"query": query})
    if result.is_error:  # FTS5 refused the syntax: no oracle either way
        return None
    return [hit["id"] for hit in result.structured_content["hits"]], _everything(result)


def test_no_search_finds_a_masked_value_and_no_answer_or_audit_line_holds_one(gateway_home: Path) -> None:
    _store_with(gateway_home, CASES)

    async def attack() -> None:
        async with serve_client(gateway_home) as client:
            for session_id, word, _message, queries, never_shown in CASES:
                found = await _hits(client, word)
                assert found is not None and found[0] == [session_id], (session_id, found)
                for secret in never_shown:
                    assert secret not in found[1], (session_id, secret)
                answered = 0
                for query in queries:
                    answer = await _hits(client, query)
                    if answer is None:
                        continue
                    answered += 1
                    assert session_id not in answer[0], f"{query!r} found {session_id}"
                    for secret in never_shown:
                        assert secret not in answer[1], (query, secret)
                assert answered >= 2, session_id
                read = await client.call_tool("rousseau_read_session", {"id": session_id})
                assert not read.is_error, read.content
                for secret in never_shown:
                    assert secret not in _everything(read), (session_id, secret)
            assert await _hits(client, LONG_QUERY) is not None
            await _hits(client, GLUED_QUERY)  # a code whose digits are glued to letters

    anyio.run(attack)
    # The searches typed digits that are codes: the audit log keeps them masked.
    logged = json.dumps(read_audit(gateway_home), ensure_ascii=False)
    for code in ("731904", "582617", "639418", "482913", "752083", "831906", "408271", "K7Q9PL", "482917"):
        assert code not in logged
    searches = [e["arguments"]["query"] for e in read_audit(gateway_home) if e.get("tool") == "rousseau_search_sessions"]
    assert "[code]" in searches and "narwhal" in searches
    # A long query: its first 40 characters, masked first, and its length.
    assert {"start": "where did I paste code [code] for the s…", "length": len(LONG_QUERY)} in searches


def test_a_store_masked_by_the_version_before_is_masked_again_and_then_finds_nothing(gateway_home: Path) -> None:
    chosen = [case for case in CASES if case[0] in ("first-person", "code-expires", "aws-pair", "spelled")]
    path = _store_with(gateway_home, chosen)
    # The store as the version before left it: these texts as its masks saw them (none of these forms masked),
    # in the messages and the index, and that version's number.
    connection = sqlite3.connect(path, isolation_level=None)
    for rowid, blocks in connection.execute("SELECT rowid, blocks FROM messages").fetchall():
        text = "\n\n".join(b["text"] for b in json.loads(blocks) if b.get("type") == "text")
        connection.execute("UPDATE messages SET text = ? WHERE rowid = ?", (text, rowid))
    connection.execute("UPDATE meta SET value = ? WHERE key = 'masks_version'", (str(MASKS_VERSION - 1),))
    assert connection.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '482913'").fetchone()[0] == 1
    connection.close()

    async def attack() -> None:
        async with serve_client(gateway_home) as client:
            for query in ("482913", "639418", "q8RtvLwnZkaVbN", '"seven three one nine"'):
                answer = await _hits(client, query)
                assert answer is not None and answer[0] == [], (query, answer)
            found = await _hits(client, "narwhal")
            assert found is not None and found[0] == ["first-person"] and "482913" not in found[1]

    anyio.run(attack)
    connection = sqlite3.connect(path)
    assert connection.execute("SELECT value FROM meta WHERE key = 'masks_version'").fetchone()[0] == str(MASKS_VERSION)
    assert re.search(r"48\s*29\s*13", " ".join(row[0] for row in connection.execute("SELECT text FROM messages"))) is None
    connection.close()
