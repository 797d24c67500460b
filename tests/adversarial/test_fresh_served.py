"""Issue 13's rules played as attacks through a real `gateway serve`: what a refresh brings in mid-connection is gated
and masked from the very first call that could see it.

A closed project's session written while a host is connected never shows (not by its canary word, not in a list,
not as a resource, not by its address), whatever the refresh's progress; an open session's IBAN written while
connected is masked in answers and not found by its digits.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest
import tomli_w
from mcp.shared.exceptions import MCPError

from gateway.testing import folders_of, listed_resources, read_audit, serve_client, write_config
from tests.plugins.fresh_helpers import claude_session, open_projects

CANARY = "wolfsbanecanary"


def iban(country: str, bban: str) -> str:
    number = int("".join(str(int(ch, 36)) for ch in bban + country + "00"))
    return f"{country}{98 - number % 97:02d}{bban}"


IBAN = iban("FR", "14508059410452736918254")


def everything(result) -> str:
    return "\n".join(getattr(b, "text", "") for b in result.content) + json.dumps(result.structured_content or {})


def test_a_closed_projects_session_written_while_connected_is_never_shown(gateway_home):
    home = gateway_home
    # A small budget: some calls answer while the refresh is still writing.
    write_config(home, {"gateway": {"plugins": ["sessions"], "refresh_budget_ms": 1}}, open_projects(home))
    claude_session(home, "open-before", ["tend the plumtree"], home / "src" / "orchard")
    seen: list[str] = []
    counts: list[tuple[int, int]] = []
    refusals: list[str] = []

    async def session() -> None:
        async with serve_client(home) as client:
            await client.call_tool("rousseau_list_sessions", {})
            for n in range(30):  # the closed session arrives among many open ones
                claude_session(home, f"open-{n}", [f"plumtree row {n}"], home / "src" / "orchard", project=f"-p{n}")
            claude_session(home, "hidden-7", [f"the {CANARY} plumtree combination"], home / "src" / "vault")
            with anyio.fail_after(120):
                while True:
                    listed = await client.call_tool("rousseau_list_sessions", {"limit": 100})
                    seen.append(everything(listed))
                    for word in (CANARY, "plumtree"):
                        found = await client.call_tool("rousseau_search_sessions", {"query": word})
                        seen.append(everything(found))
                    seen.extend(r.uri + (r.title or "") for r in await listed_resources(client))
                    if listed.structured_content["left_out"] == 1 and "still being read" not in everything(listed):
                        counts.append((len(listed.structured_content["sessions"]), 1))
                        break
                    await anyio.sleep(0.05)
            try:
                await client.read_resource("rousseau://sessions/hidden-7")
            except MCPError as error:
                refusals.append(str(error))

    anyio.run(session)
    assert not any(CANARY in text or "hidden-7" in text for text in seen)
    assert counts == [(31, 1)]
    assert len(refusals) == 1 and "closed" in refusals[0] and "vault" not in refusals[0].lower()  # names no project


def test_an_iban_written_while_connected_is_masked_from_the_first_answer(gateway_home):
    home = gateway_home
    write_config(home, {"gateway": {"plugins": ["sessions"]}}, open_projects(home))
    claude_session(home, "before", ["nothing yet"], home / "src" / "orchard")
    answers: list[str] = []

    async def session() -> None:
        async with serve_client(home) as client:
            await client.call_tool("rousseau_list_sessions", {})
            claude_session(home, "payday", [f"pay the nursery to {IBAN} for the damsons"], home / "src" / "orchard")
            for query in (IBAN, IBAN[4:12], "damsons"):
                answers.append(everything(await client.call_tool("rousseau_search_sessions", {"query": query})))
            read = await client.read_resource("rousseau://sessions/payday")
            answers.append("\n".join(getattr(c, "text", "") for c in read.contents))

    anyio.run(session)
    by_iban, by_digits, by_word, read = answers
    assert "payday" not in by_iban and "payday" not in by_digits
    assert "payday" in by_word and IBAN not in by_word
    assert IBAN not in read and f"…{IBAN[-4:]}" in read


def save_manifest(home: Path, projects: list[dict]) -> None:
    """The manifest saved whole (written beside, then renamed), as an editor saves it: never read mid-save."""
    path = folders_of(home).config / "projects.toml"
    beside = path.with_suffix(".saving")
    beside.write_text(tomli_w.dumps({"project": projects}))
    os.replace(beside, path)


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")  # the handshake era's way, which we serve
@pytest.mark.parametrize("closed_since", [True, False], ids=["closed-since", "still-open"])
def test_a_subscriber_is_not_told_of_changes_once_the_project_is_closed(gateway_home, closed_since):
    home = gateway_home
    projects = open_projects(home)
    write_config(home, {"gateway": {"plugins": ["sessions"]}}, projects)
    orchard = home / "src" / "orchard"
    claude_session(home, "watched", ["graft the quince"], orchard)
    uri = "rousseau://sessions/watched"
    heard: list[str] = []

    async def handler(message) -> None:
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/resources/updated":
            heard.append(str(root.params.uri))

    def notices() -> list[dict]:
        return [line for line in read_audit(home) if line.get("method") == "notifications/resources/updated"]

    async def session() -> None:
        async with serve_client(home, message_handler=handler) as client:
            await client.call_tool("rousseau_list_sessions", {})  # the first import
            await client.subscribe_resource(uri)  # allowed: the orchard is open now
            # The person closes the orchard (or, for the control, saves the manifest unchanged) ...
            save_manifest(home, [{**p, "ai": False} if p["id"] == "orchard" and closed_since else p for p in projects])
            # ... then the session goes on, and a call (any host's) brings the change in.
            claude_session(home, "watched", [f"the {CANARY} graft"], orchard, append=True, first=2)
            await client.call_tool("rousseau_search_sessions", {"query": "quince"})
            with anyio.fail_after(60):  # the decision to tell or not is logged before anything is sent
                while not notices():
                    await anyio.sleep(0.1)
                while not closed_since and not heard:
                    await anyio.sleep(0.1)
            await client.call_tool("rousseau_list_sessions", {})  # a round trip: whatever was sent has arrived

    anyio.run(session)
    told = notices()
    if closed_since:
        assert heard == []
        assert told and all(line["outcome"] == "refused" and line["given"] == [] for line in told)
    else:
        assert heard and set(heard) == {uri}
        assert told[0]["outcome"] == "ok" and told[0]["given"] == [uri] and told[0]["client"] == "test-host"
    assert CANARY not in json.dumps(told)  # the notice's line names the address, never what changed
