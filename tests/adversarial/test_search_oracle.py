"""The search oracle: what rousseau_search_sessions can find is what its answers may show.

The attack (issue 7, section 1): the index held the unmasked text, so hit or no hit on `48*`, `482*`, ... rebuilt a
masked code digit by digit. Each test plays it through a real `gateway serve` and the SDK's client: for each masked
form, every query built from its hidden characters (whole, phrase, prefixes, spaced digits, its parts) finds nothing,
while an ordinary word of the same message finds the session; titles cut to a length show no digit the mask hides.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import anyio
import gateway_sessions
from gateway_sessions import store
from gateway_sessions.importing import import_agent

from gateway.privacy import MASKS_VERSION, mask
from gateway.testing import folders_of, make_gateway, serve_client, write_config

NIR_KEY = 97 - 1850578006084 % 97

# (session id, an ordinary word of the message, the secret as written, the message). Each secret is one masked
# form; the ordinary words share no beginning with the secrets' parts or with what the masks show.
SECRETS = [
    ("oracle-code", "quokka", "482913", "Your login code is 482913. quokka"),
    ("oracle-code-fr", "wombat", "731905", "Votre code de connexion est 731905 wombat"),
    ("oracle-card", "pangolin", "4539 1488 0343 6467", "pay with card 4539 1488 0343 6467 pangolin"),
    ("oracle-card-solid", "narwhal", "4716719085410159", "card 4716719085410159 narwhal"),
    (
        "oracle-iban",
        "axolotl",
        "FR76 3000 6000 0112 3456 7890 189",
        "rent to FR76 3000 6000 0112 3456 7890 189 axolotl",
    ),
    (
        "oracle-nir",
        "okapi",
        f"1 85 05 78 006 084 {NIR_KEY:02d}",
        f"numéro 1 85 05 78 006 084 {NIR_KEY:02d} okapi",
    ),
    ("oracle-aws", "tapir", "AKIAIOSFODNN7EXAMPLE", "the deploy uses AKIAIOSFODNN7EXAMPLE tapir"),
    (
        "oracle-github",
        "ibex",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "push with ghp_16C7e42F292c6912E7710c838347Ae178B4a ibex",
    ),
    (
        "oracle-stripe",
        "gecko",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "billing sk_live_4eC39HqLyjWDarjtT1zdp7dc gecko",
    ),
    (
        "oracle-slack",
        "dugong",
        "xoxb-2-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "bot xoxb-2-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx dugong",
    ),
    (
        "oracle-anthropic",
        "lemur",
        "sk-ant-api03-Xy7Qw2Er9Ty4Ui8Op3As6Df1Gh5Jk0Lz-EXAMPLEONLY",
        "model key sk-ant-api03-Xy7Qw2Er9Ty4Ui8Op3As6Df1Gh5Jk0Lz-EXAMPLEONLY lemur",
    ),
]

# Titles the importer cuts at 80 characters: the raw cut would have ended in half a card or account number.
CUT_TITLES = [
    ("title-card", "Please check why the quarterly orchard invoice payment failed: card 4539 1488 0343 6467"),
    (
        "title-iban",
        "Please wire the quarterly orchard invoice amount to the vendor account FR76 3000 6000 0112 3456 7890 189",
    ),
]
HIDDEN_GROUPS = ["4539", "1488", "0343", "FR76", "3000", "6000", "0112", "3456", "7890"]


def _tokens(text: str) -> list[str]:
    """Words as FTS5's unicode61 tokenizer cuts them (letters and digits; underscores and punctuation split)."""
    return [token.casefold() for token in re.findall(r"[^\W_]+", text)]


def _line(uuid: str, session_id: str, text: str, minute: int, cwd: str) -> str:
    return json.dumps(
        {
            "type": "user",
            "uuid": uuid,
            "sessionId": session_id,
            "cwd": cwd,
            "timestamp": f"2026-03-01T10:{minute:02d}:00.000Z",
            "message": {"role": "user", "content": text},
        }
    )


def _write_transcripts(home: Path, sessions: list[tuple[str, str]]) -> None:
    folder = home / ".claude" / "projects" / "-home-ada-src-zoo"
    folder.mkdir(parents=True, exist_ok=True)
    for number, (session_id, text) in enumerate(sessions):
        (folder / f"{session_id}.jsonl").write_text(
            _line(f"u-{session_id}", session_id, text, number % 60, "/home/ada/src/zoo") + "\n"
        )


def _import(home: Path) -> None:
    connection = store.open_for_writing(store.default_path(folders_of(home).for_plugin("sessions").data))
    try:
        import_agent(connection, "claude-code")
    finally:
        connection.close()


def _attacks(secret: str, message: str) -> list[str]:
    """Every query built from the secret's hidden characters: whole, phrase, parts, prefixes, spaced digits.

    A query that could also match what the masked message shows (the last four kept, the mask's own words) is no
    oracle, so it is not asked.
    """
    shown = set(_tokens(mask(message)))
    parts = _tokens(secret)
    joined = "".join(parts)
    digits = "".join(ch for ch in secret if ch.isdigit())
    queries = {f'"{secret}"', f'"{" ".join(parts)}"', f'"{joined}"', f"{joined}*"}
    if digits:
        queries |= {
            digits,
            f"{digits[:-1]}*",
            f'"{" ".join(digits)}"',
            " ".join(digits),
            " AND ".join(digits),
        }
        queries |= {f"{digits[:k]}*" for k in (2, 3, 4, 5, 6) if k < len(digits)}
    for part in parts:
        queries.add(part)
        queries |= {f"{part[:k]}*" for k in range(2, len(part)) if k <= 6 or k == len(part) - 1}
    fair = []
    for query in queries:
        terms = _tokens(query.replace(" AND ", " "))
        prefix = query.endswith("*")
        if not terms:
            continue
        matches_shown = all(
            any(word.startswith(term) if prefix and term == terms[-1] else word == term for word in shown)
            for term in terms
        )
        if not matches_shown:
            fair.append(query)
    return sorted(fair)


def _everything(result) -> str:
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {}, ensure_ascii=False)


def test_masks_hide_every_secret_of_the_test(gateway_home: Path):
    """The test's premise: each message's secret is masked in answers (else the masks miss it, not the index)."""
    for _session, word, secret, message in SECRETS:
        masked = mask(message)
        assert secret not in masked and word in masked, masked


def test_no_query_built_from_a_masked_value_finds_its_session(gateway_home: Path):
    _write_transcripts(
        gateway_home, [(session_id, message) for session_id, _word, _secret, message in SECRETS]
    )
    _import(gateway_home)
    write_config(gateway_home, {"gateway": {"plugins": ["sessions"]}})

    async def attack() -> None:
        async with serve_client(gateway_home) as client:
            for session_id, word, secret, message in SECRETS:
                found = await client.call_tool("rousseau_search_sessions", {"query": word})
                assert [hit["id"] for hit in found.structured_content["hits"]] == [session_id]
                assert secret not in _everything(found)
                queries = _attacks(secret, message)
                assert len(queries) >= 5, (session_id, queries)
                for query in queries:
                    result = await client.call_tool("rousseau_search_sessions", {"query": query})
                    if result.is_error:  # FTS5 refused the syntax: no oracle either way
                        continue
                    hits = [hit["id"] for hit in result.structured_content["hits"]]
                    assert session_id not in hits, f"{query!r} found {session_id}"
                    assert secret not in _everything(result)

    anyio.run(attack)


def test_a_title_cut_to_its_length_shows_no_digit_the_mask_hides(gateway_home: Path):
    _write_transcripts(gateway_home, CUT_TITLES)
    _import(gateway_home)
    write_config(gateway_home, {"gateway": {"plugins": ["sessions"]}})

    async def look() -> tuple[list[str], list[str]]:
        given, titles = [], []
        async with serve_client(gateway_home) as client:
            listed = await client.call_tool("rousseau_list_sessions", {})
            assert {s["id"] for s in listed.structured_content["sessions"]} == {s for s, _ in CUT_TITLES}
            titles.extend(s["title"] for s in listed.structured_content["sessions"])
            given.append(_everything(listed))
            found = await client.call_tool("rousseau_search_sessions", {"query": "quarterly"})
            titles.extend(hit["title"] for hit in found.structured_content["hits"])
            given.append(_everything(found))
            for session_id, _text in CUT_TITLES:
                read = await client.call_tool("rousseau_read_session", {"id": session_id})
                titles.append(read.structured_content["title"])
                given.append(_everything(read))
            page = await client.list_resources()
            titles.extend(resource.title for resource in page.resources
                          if str(resource.uri).startswith("rousseau://sessions/"))  # not rousseau://week
            given.append(json.dumps([resource.model_dump(mode="json") for resource in page.resources]))
        return given, titles

    given, titles = anyio.run(look)
    assert len(titles) == 8, titles
    # The premise: cut first (at 79 characters, as titles were), each title ended in part of its number.
    assert all(any(group in text[:79] for group in HIDDEN_GROUPS) for _id, text in CUT_TITLES)
    for answer in given:
        for group in HIDDEN_GROUPS:
            assert group not in answer
    for title in titles:
        # The cut fell inside the masked form or after it: no digit shown beyond the mask's last four.
        assert title.startswith("Please"), title
        for run in re.findall(r"\d+", title):
            assert run in "6467" or run in "0189", title


def _make_unmasked(home: Path) -> Path:
    """The store as an earlier version left it: raw text in the messages and the index, other masks' version."""
    path = store.default_path(folders_of(home).for_plugin("sessions").data)
    connection = sqlite3.connect(path, isolation_level=None)
    rows = connection.execute("SELECT rowid, blocks FROM messages").fetchall()
    for rowid, blocks in rows:  # the update trigger puts the raw text back in the index
        text = "\n\n".join(b["text"] for b in json.loads(blocks) if b.get("type") == "text")
        connection.execute("UPDATE messages SET text = ? WHERE rowid = ?", (text, rowid))
    connection.execute("UPDATE meta SET value = ? WHERE key = 'masks_version'", (str(MASKS_VERSION - 1),))
    connection.close()
    return path


def test_a_store_indexed_with_other_masks_is_masked_again_before_any_answer(gateway_home: Path):
    chosen = [s for s in SECRETS if s[0] in ("oracle-code", "oracle-card", "oracle-aws")]
    _write_transcripts(gateway_home, [(session_id, message) for session_id, _w, _s, message in chosen])
    _import(gateway_home)
    path = _make_unmasked(gateway_home)
    # The premise: the index now answers the oracle's queries.
    raw = sqlite3.connect(path)
    assert (
        raw.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '4829*'").fetchone()[0] == 1
    )
    raw.close()
    write_config(gateway_home, {"gateway": {"plugins": ["sessions"]}})

    async def attack() -> None:
        async with serve_client(gateway_home) as client:
            for query in ("4829*", "4539*", "AKIA*", '"4539 1488"'):
                result = await client.call_tool("rousseau_search_sessions", {"query": query})
                assert not result.is_error and result.structured_content["hits"] == [], query
            read = await client.call_tool("rousseau_read_session", {"id": "oracle-card"})
            assert "4539 1488" not in _everything(read) and "45391488" not in _everything(read) and "[card …6467]" in read.content[0].text
            found = await client.call_tool("rousseau_search_sessions", {"query": "quokka"})
            assert [hit["id"] for hit in found.structured_content["hits"]] == ["oracle-code"]

    anyio.run(attack)
    connection = sqlite3.connect(path)
    assert connection.execute("SELECT value FROM meta WHERE key = 'masks_version'").fetchone()[0] == str(
        MASKS_VERSION
    )
    connection.close()


def test_the_first_call_on_a_store_with_other_masks_says_so_on_stderr(gateway_home: Path, captured_logs):
    _write_transcripts(gateway_home, [("oracle-code", SECRETS[0][3])])
    _import(gateway_home)
    _make_unmasked(gateway_home)
    gateway = make_gateway(plugins=[gateway_sessions], home=gateway_home)
    result = gateway.call("rousseau_search_sessions", {"query": "4829*"})
    assert not result.is_error and result.data["hits"] == []
    progress = [
        entry["progress"] for entry in captured_logs if entry.get("event") == "sessions_store_upgrade"
    ]
    assert progress and "masking the sessions store again" in progress[0]
    assert any("masked and indexed" in line for line in progress)
