"""Issue 13: what an agent wrote a minute ago is in the next answer of a real `gateway serve`, with no import run."""

from __future__ import annotations

from pathlib import Path

import anyio
from fresh_helpers import claude_session, open_projects

from gateway.testing import serve_client, write_config


def _search(home: Path, words: list[str], before=None) -> list[dict]:
    """Search each word in turn on one connection; `before(i)` runs before the i-th search."""
    found: list[dict] = []

    async def session() -> None:
        async with serve_client(home) as client:
            for i, word in enumerate(words):
                if before is not None:
                    before(i)
                result = await client.call_tool("rousseau_search_sessions", {"query": word})
                assert not result.is_error, result.content
                found.append({"data": result.structured_content, "text": result.content[0].text})

    anyio.run(session)
    return found


def test_a_session_written_while_connected_is_found_by_the_next_search(gateway_home):
    home = gateway_home
    write_config(home, {"gateway": {"plugins": ["sessions"]}}, open_projects(home))
    orchard = home / "src" / "orchard"
    claude_session(home, "first", ["graft the pear trees", "done"], orchard)

    def write_later(i: int) -> None:
        if i == 1:
            claude_session(home, "second", ["prune the quincetree rows", "pruned"], orchard)
        if i == 2:
            claude_session(home, "second", ["and water the quincetree seedlings"], orchard, append=True, first=3)

    first, second, third = _search(home, ["quincetree", "quincetree", "seedlings"], before=write_later)
    assert first["data"]["hits"] == []
    assert [hit["id"] for hit in second["data"]["hits"]] == ["second"]
    assert [hit["id"] for hit in third["data"]["hits"]] == ["second"]
