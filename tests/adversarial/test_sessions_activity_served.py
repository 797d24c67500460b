"""A closed project's sessions are found by none of the tools that look at what agents did (sessions_touching,
search_tool_calls, agent_week and the rousseau://week resource), through a real `gateway serve` that imports the
transcripts itself (Claude Code, Codex, Cursor, Cline, Roo Code, Copilot CLI, Qwen Code, Continue, Amp, Goose) and the SDK's own client.

The attacks: asking for the closed folder itself, for a file in it, for its parent; searching tool calls by a canary
word of the closed sessions, by the tool they used, by its path; asking for the closed sessions' days. Each answer
must hold no canary and no id of a closed session, and the count said to be left out must not depend on what was
asked (else the count would tell what the closed sessions touched).
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from gateway.testing import serve_client, write_config
from tests.plugins.sessions.more_agents import (
    AMP_THREAD,
    CLAUDE_CANARY,
    CLAUDE_VAULT,
    CONTINUE_CUT,
    CURSOR_CANARY,
    CURSOR_VAULT,
    PROJECTS,
    ROO_TASK,
    place_amp,
    place_claude_code_and_codex,
    place_cline,
    place_continue,
    place_copilot,
    place_cursor,
    place_goose,
    place_qwen,
)

CLOSED_IDS = (CLAUDE_VAULT, CURSOR_VAULT, ROO_TASK, CONTINUE_CUT)
SECRETS = (CLAUDE_CANARY, CURSOR_CANARY, *CLOSED_IDS, "current.pem", "keys/", "sealed keys")

ASKED = [
    ("sessions_touching", {"path": "/home/ada/src/vault"}),
    ("sessions_touching", {"path": "/home/ada/src/vault/keys/current.pem"}),
    ("sessions_touching", {"path": "/home/ada/src", "limit": 200}),
    ("sessions_touching", {"path": "/home/ada/src/orchard"}),
    ("sessions_touching", {"path": "/"}),
    ("search_tool_calls", {"query": CURSOR_CANARY}),
    ("search_tool_calls", {"query": "cat"}),
    ("search_tool_calls", {"query": "current*"}),
    ("search_tool_calls", {"tool": "run_terminal_cmd"}),
    ("search_tool_calls", {"tool": "list_files"}),
    ("search_tool_calls", {"path": "/home/ada/src/vault"}),
    ("search_tool_calls", {"path": "/home/ada", "limit": 200}),
    ("agent_week", {"start": "2026-03-01", "days": 7}),
    ("agent_week", {"start": "2026-03-03", "days": 2}),
    ("agent_week", {"start": "2025-11-15", "days": 31}),
]


def _text(result) -> str:
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {}, ensure_ascii=False)


def test_a_closed_projects_sessions_are_found_by_none_of_the_new_tools(gateway_home: Path):
    place_claude_code_and_codex(gateway_home)
    place_cursor(gateway_home)
    place_cline(gateway_home)
    for place in (place_copilot, place_qwen, place_continue, place_amp, place_goose):
        place(gateway_home)
    # The first call waits for the whole first import (else it answers within its budget from a store half-filled,
    # and the count of sessions kept back grows from one call to the next as the import goes on).
    write_config(gateway_home, {"gateway": {"plugins": ["sessions"], "refresh_budget_ms": 60_000}}, projects=PROJECTS)

    async def run():
        answers: list[tuple[str, dict, object]] = []
        async with serve_client(gateway_home) as client:
            for name, arguments in ASKED:
                answers.append((name, arguments, await client.call_tool(name, arguments)))
            week = await client.read_resource("rousseau://week")
            listed = await client.call_tool("rousseau_list_sessions", {"limit": 200})
        return answers, json.dumps(week.model_dump(mode="json")), listed

    answers, week, listed = anyio.run(run)
    shown = {session["id"] for session in listed.structured_content["sessions"]}
    # The importers ran in the served process: the open Cursor and Cline sessions are there, the closed ones not.
    assert {"3c1e7d2a-4b5f-4c6d-9e8f-0a1b2c3d4e5f", "1772535600000", "20260307_1", AMP_THREAD} <= shown
    assert not shown & set(CLOSED_IDS)
    left_out = set()
    for name, arguments, result in answers:
        assert not result.is_error, (name, arguments, _text(result))
        text = _text(result)
        for secret in SECRETS:
            assert secret not in text, (name, arguments, secret)
        left_out.add(result.structured_content["left_out"])
    assert left_out == {len(CLOSED_IDS)}  # every closed session counted, whatever was asked
    for secret in SECRETS:
        assert secret not in week
    # The control: what is open is found.
    touching = dict((json.dumps(a), r) for n, a, r in answers if n == "sessions_touching")
    orchard = touching[json.dumps({"path": "/home/ada/src/orchard"})].structured_content["sessions"]
    assert {"3c1e7d2a-4b5f-4c6d-9e8f-0a1b2c3d4e5f", "1772535600000"} <= {entry["id"] for entry in orchard}
