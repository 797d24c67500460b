"""The three tools and the session resources, called through the gateway as a host would."""

from __future__ import annotations

import re
from pathlib import Path

import gateway_sessions
from gateway_sessions import store
from gateway_sessions.model import Message, Session

from gateway.testing import make_gateway
from tests.plugins.sessions.sessions_helpers import (
    CLOSED_VAULT,
    NOTES,
    PEARS,
    PLUMS,
    SUBAGENT,
    VAULT,
    import_all,
    store_path,
)

# These stores are imported by hand from some agents only: no call-time refresh adds the others.
HAND_IMPORTED = {"plugins": {"sessions": {"refresh": False}}}


def _add_sessions(home: Path, count: int, start_day: int = 1, cwd: str = "/home/ada/src/orchard") -> None:
    connection = store.open_for_writing(store_path(home))
    for n in range(count):
        moment = f"2026-05-{start_day + n // 24:02d}T{n % 24:02d}:00:00Z"
        session = Session(
            agent="claude-code",
            id=f"extra-{start_day}-{n:03d}",
            title=f"extra session {n}",
            cwd=cwd,
            created_at=moment,
            updated_at=moment,
            messages=[
                Message(key="m1", role="user", blocks=[{"type": "text", "text": f"loquat number {n}"}])
            ],
        )
        store.upsert(connection, session)
    connection.close()


def _unframed(text: str) -> str:
    return re.sub(r"(data|end of data) [0-9a-f]{16}", r"\1 MARK", text)


def test_tools_are_listed_in_order_read_only_with_output_schemas(sessions_gateway):
    catalogue = sessions_gateway.catalogue()
    assert sessions_gateway.list_tools() == [
        "rousseau_search_sessions",
        "rousseau_list_sessions",
        "rousseau_read_session",
        "sessions_touching",
        "search_tool_calls",
        "agent_week",
    ]
    for listed in catalogue.tools:
        assert listed.tool.read_only and listed.tool.output_schema is not None
    assert catalogue.tools_by_name["rousseau_search_sessions"].tool.input_schema["required"] == ["query"]


def test_search_gives_three_lines_per_hit_best_first(sessions_gateway):
    answer = sessions_gateway.call("rousseau_search_sessions", {"query": "crate parser"})
    assert not answer.is_error
    lines = answer.text.splitlines()
    hits = answer.data["hits"]
    assert len(hits) == 3 and len(lines) == 3 * 3 + 1
    for index, hit in enumerate(hits):
        assert lines[3 * index] == f"session {hit['id']} (rank {hit['rank']:.2f})"
        assert lines[3 * index + 1] == f"title: {hit['title']}"
        assert lines[3 * index + 2] == f"snippet: {hit['snippet']}"
    ranks = [hit["rank"] for hit in hits]
    assert ranks == sorted(ranks)
    assert {hit["id"] for hit in hits} == {PEARS, NOTES, SUBAGENT}


def test_search_passes_fts5_syntax_through(sessions_gateway):
    def ids(query: str) -> set[str]:
        return {
            hit["id"]
            for hit in sessions_gateway.call("rousseau_search_sessions", {"query": query}).data["hits"]
        }

    assert ids('"empty crate"') == {PEARS}
    assert ids("plu*") == {PLUMS, NOTES}
    assert ids("crate NOT pears") == {PEARS, SUBAGENT}
    assert ids("prune OR changelog") == {PLUMS, SUBAGENT, NOTES}


def test_search_snippet_is_about_200_characters_around_the_match(imported_home: Path):
    connection = store.open_for_writing(store_path(imported_home))
    words = " ".join(f"filler{n}" for n in range(80))
    text = f"{words} the medlar harvest starts today {words}"
    store.upsert(
        connection,
        Session(
            agent="codex",
            id="long",
            created_at="2026-04-01T00:00:00Z",
            updated_at="2026-04-01T00:00:00Z",
            messages=[Message(key="L1", role="user", blocks=[{"type": "text", "text": text}])],
        ),
    )
    connection.close()
    gateway = make_gateway(plugins=[gateway_sessions], home=imported_home, config=HAND_IMPORTED)
    snippet = gateway.call("rousseau_search_sessions", {"query": "medlar"}).data["hits"][0]["snippet"]
    assert "medlar harvest" in snippet
    assert snippet.startswith("…") and snippet.endswith("…")
    assert 150 <= len(snippet) <= 205


def test_search_without_words_says_query_is_required(sessions_gateway):
    for query in ("", "   "):
        answer = sessions_gateway.call("rousseau_search_sessions", {"query": query})
        assert answer.is_error and answer.text == "query is required"


def test_search_syntax_error_is_sqlites_message_and_the_next_call_works(sessions_gateway):
    answer = sessions_gateway.call("rousseau_search_sessions", {"query": 'pears AND "unclosed'})
    assert answer.is_error
    assert "fts5: syntax error" in answer.text or "unterminated string" in answer.text
    assert sessions_gateway.call("rousseau_search_sessions", {"query": "pears"}).data["hits"]


def test_search_with_no_match_says_so(sessions_gateway):
    answer = sessions_gateway.call("rousseau_search_sessions", {"query": "persimmon"})
    assert answer.text.splitlines()[0] == "(no hits)" and answer.data["hits"] == []


def test_list_is_newest_first_in_the_seed_format(sessions_gateway):
    answer = sessions_gateway.call("rousseau_list_sessions", {})
    lines = answer.text.splitlines()
    assert lines[:4] == [
        f"{NOTES} Orchard release notes msgs=2 updated=2026-03-03T14:02:00Z",
        f"{SUBAGENT} Check CHANGELOG.md lists the crate parser fix. msgs=2 updated=2026-03-03T14:01:30Z",
        f"{PLUMS} Rename the plum module to prune everywhere. msgs=5 updated=2026-03-02T10:00:31Z",
        f"{PEARS} Pear importer crash on empty crates msgs=5 updated=2026-03-01T09:01:30Z",
    ]
    updated = [s["updated_at"] for s in answer.data["sessions"]]
    assert updated == sorted(updated, reverse=True)


def test_an_empty_or_missing_store_says_no_sessions_and_how_to_fill_it(gateway_home: Path):
    gateway = make_gateway(plugins=[gateway_sessions], home=gateway_home, config=HAND_IMPORTED)
    hint = gateway_sessions.tools.EMPTY_HINT
    assert "`gateway sessions import`" in hint
    for stage in ("missing", "empty"):
        if stage == "empty":
            import_all(gateway_home)  # nothing to import: an empty store
        listed = gateway.call("rousseau_list_sessions", {})
        assert listed.text.splitlines() == ["(no sessions)", hint], stage
        assert listed.data == {"sessions": [], "left_out": 0, "hint": hint}
        found = gateway.call("rousseau_search_sessions", {"query": "pears"})
        assert found.text.splitlines() == ["(no hits)", hint], stage
        assert found.data == {"hits": [], "left_out": 0, "hint": hint}
        read = gateway.call("rousseau_read_session", {"id": "abc"})
        assert read.is_error and read.text.splitlines()[1] == hint


def test_a_store_with_sessions_gives_no_hint_even_when_nothing_matches_or_all_are_kept_back(imported_home: Path):
    closed_all = [{"id": "all", "name": "All", "ai": False, "paths": ["/home/ada"]}]
    for projects in ([], closed_all):
        gateway = make_gateway(plugins=[gateway_sessions], projects=projects, home=imported_home, config=HAND_IMPORTED)
        for tool, arguments in (("rousseau_list_sessions", {}), ("rousseau_search_sessions", {"query": "persimmon"})):
            answer = gateway.call(tool, arguments)
            assert "hint" not in answer.data and "gateway sessions import" not in answer.text
    assert gateway.call("rousseau_list_sessions", {}).text.splitlines() == [
        "(no sessions)",
        "5 sessions left out: their projects are closed to AI agents.",
    ]


def test_limits_default_to_20_and_stop_at_200(imported_home: Path):
    _add_sessions(imported_home, 30)
    gateway = make_gateway(plugins=[gateway_sessions], home=imported_home, config=HAND_IMPORTED)
    assert len(gateway.call("rousseau_list_sessions", {}).data["sessions"]) == 20
    assert len(gateway.call("rousseau_search_sessions", {"query": "loquat"}).data["hits"]) == 20
    assert len(gateway.call("rousseau_list_sessions", {"limit": 25}).data["sessions"]) == 25
    for tool, arguments in [
        ("rousseau_list_sessions", {"limit": 201}),
        ("rousseau_search_sessions", {"query": "loquat", "limit": 500}),
        ("rousseau_list_sessions", {"limit": 0}),
    ]:
        answer = gateway.call(tool, arguments)
        assert answer.is_error and ("200" in answer.text or "at least 1" in answer.text), answer.text


def test_read_gives_the_header_then_each_message_without_tool_blocks(sessions_gateway):
    answer = sessions_gateway.call("rousseau_read_session", {"id": PEARS})
    lines = answer.text.splitlines()
    assert lines[:5] == [
        f"id: {PEARS}",
        "title: Pear importer crash on empty crates",
        "created: 2026-03-01T09:00:00Z",
        "updated: 2026-03-01T09:01:30Z",
        "messages: 5",
    ]
    body = lines[6:-1]
    assert body == [
        "[0] user",
        "Why does the pear importer crash on empty crates?",
        "[1] assistant",
        "The crate parser reads the first row before checking that there is one. Let me run the tests.",
        "[2] assistant",
        "(no text)",
        "[3] user",
        "(no text)",
        "[4] assistant",
        "Fixed: an empty crate now yields no pears instead of raising.",
    ]
    assert "quinceflux" not in answer.text and "pytest -q" not in answer.text
    assert "quinceflux" not in str(answer.data)
    assert answer.given == (f"rousseau://sessions/{PEARS}",)


def test_read_without_an_id_says_id_is_required(sessions_gateway):
    answer = sessions_gateway.call("rousseau_read_session", {"id": ""})
    assert answer.is_error and answer.text == "id is required"


def test_read_of_an_unknown_id_names_it(sessions_gateway):
    answer = sessions_gateway.call("rousseau_read_session", {"id": "no-such-session-42"})
    assert answer.is_error and "no-such-session-42" in answer.text and "not found" in answer.text


def test_session_resource_reads_as_the_tool_does(sessions_gateway):
    template = sessions_gateway.list_templates()[0]
    assert template.uri_template == "rousseau://sessions/{id}"
    by_tool = sessions_gateway.call("rousseau_read_session", {"id": PLUMS}).text
    by_resource = sessions_gateway.read(f"rousseau://sessions/{PLUMS}").text
    assert _unframed(by_resource) == _unframed(by_tool)


def test_resources_list_pages_newest_first_and_survives_imports_between_pages(imported_home: Path):
    _add_sessions(imported_home, 150)
    gateway = make_gateway(plugins=[gateway_sessions], projects=CLOSED_VAULT, home=imported_home, config=HAND_IMPORTED)
    first, cursor = gateway.list_resources(None)
    assert cursor and 0 < len(first) <= 200
    _add_sessions(imported_home, 40, start_day=20)  # newer sessions arrive mid-walk
    seen = [item["uri"] for item in first if item["uri"] != "rousseau://week"]  # the one fixed resource
    while cursor:
        page, cursor = gateway.list_resources(cursor)
        seen.extend(item["uri"] for item in page)
    assert len(seen) == len(set(seen)) == 150 + 4  # the 150, and the open fixtures (the vault is left out)
    assert not any("extra-20-" in uri for uri in seen)
    assert seen[0] == "rousseau://sessions/extra-1-149"
    assert f"rousseau://sessions/{VAULT}" not in seen
    again = gateway.all_resources()
    assert len(again) == 150 + 40 + 4 + 1  # and rousseau://week


def test_a_cursor_not_given_by_the_store_is_refused(sessions_gateway, imported_home: Path):
    reader = store.reader(store_path(imported_home))
    import pytest

    with pytest.raises(store.CursorError):
        reader.page("bm90LWEtY3Vyc29y", 10)


def test_read_numbers_every_message_from_0_and_counts_them_all(imported_home: Path):
    def text(words: str) -> list[dict]:
        return [{"type": "text", "text": words}]

    tool_only = [{"type": "tool_result", "tool_use_id": "t1", "content": "quinceflux output"}]
    connection = store.open_for_writing(store_path(imported_home))
    store.upsert(
        connection,
        Session(
            agent="claude-code",
            id="gaps",
            cwd="/home/ada/src/orchard",
            created_at="2026-04-01T00:00:00Z",
            updated_at="2026-04-01T00:05:00Z",
            messages=[
                Message(key="a", role="user", blocks=text("Sort the medlars by ripeness.")),
                Message(key="b", role="assistant", blocks=[{"type": "tool_use", "id": "t1", "name": "Bash"}]),
                Message(key="c", role="user", blocks=tool_only),
                Message(key="d", role="assistant", blocks=text("Sorted: the soft ones first.")),
                Message(key="e", role="user", blocks=tool_only),
                Message(key="f", role="assistant", blocks=text("Done.")),
            ],
        ),
    )
    connection.close()
    answer = make_gateway(plugins=[gateway_sessions], home=imported_home, config=HAND_IMPORTED).call("rousseau_read_session", {"id": "gaps"})
    lines = answer.text.splitlines()
    assert lines[4] == "messages: 6"
    numbered = [line for line in lines if re.fullmatch(r"\[\d+\] \w+", line)]
    assert numbered == ["[0] user", "[1] assistant", "[2] user", "[3] assistant", "[4] user", "[5] assistant"]
    assert lines.count("(no text)") == 3
    assert answer.data["messages"] == 6 == len(answer.data["transcript"])
    assert [m["index"] for m in answer.data["transcript"]] == [0, 1, 2, 3, 4, 5]
    assert "quinceflux" not in answer.text
