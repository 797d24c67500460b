"""Issue 13's notifications played as attacks through a real `gateway serve`, in both protocol eras.

A host that listens (2026-07-28) for a closed project's session is acknowledged without it and hears nothing of it;
a listener is told nothing once the project is closed; and no host, on either era, hears that the resource list
changed when all that arrived is a closed project's session (it names nothing, but would tell that something did).
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated

from gateway.testing import read_audit, serve_client, write_config
from tests.adversarial.test_fresh_served import CANARY, save_manifest
from tests.plugins.fresh_helpers import claude_session, open_projects
from tests.plugins.timeline.timeline_awdb import WINDOW, AWDatabase
from tests.plugins.timeline.timeline_helpers import gateway_config

WATCHED = "rousseau://sessions/watched"
KEPT = "rousseau://sessions/kept"
QUIET = 2.0  # seconds given to a notice that should not come, after the refresh that could have sent it is done


async def settled(client) -> None:
    """A round trip, then a moment: whatever the last refresh was to send has been sent and has arrived."""
    await client.call_tool("rousseau_list_sessions", {})
    await anyio.sleep(QUIET)
    await client.call_tool("rousseau_list_sessions", {})


def test_a_listen_naming_a_closed_projects_session_is_acknowledged_without_it(gateway_home):
    home = gateway_home
    write_config(home, {"gateway": {"plugins": ["sessions"]}}, open_projects(home))
    orchard, vault = home / "src" / "orchard", home / "src" / "vault"
    claude_session(home, "watched", ["graft the quince"], orchard)
    claude_session(home, "kept", ["the vault combination"], vault)
    heard: list = []
    honored = []

    async def session() -> None:
        async with serve_client(home, mode="auto") as client:
            await client.call_tool("rousseau_list_sessions", {})
            async with client.listen(resource_subscriptions=[KEPT, WATCHED, "rousseau://sessions/nowhere"]) as sub:
                honored.append(sub.honored)

                async def hear() -> None:
                    async for event in sub:
                        heard.append(event)

                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(hear)
                    claude_session(home, "kept", [f"the {CANARY} turns twice"], vault, append=True, first=2)
                    claude_session(home, "watched", ["and the medlar"], orchard, append=True, first=2)
                    await client.call_tool("rousseau_search_sessions", {"query": "medlar"})
                    with anyio.fail_after(30):  # the open control is heard ...
                        while ResourceUpdated(uri=WATCHED) not in heard:
                            await anyio.sleep(0.1)
                    await settled(client)  # ... and the kept one, changed in the same refresh, is not
                    tasks.cancel_scope.cancel()

    anyio.run(session)
    assert honored[0].resource_subscriptions == [WATCHED]
    assert heard == [ResourceUpdated(uri=WATCHED)]
    refused = [line for line in read_audit(home) if line.get("uri") == KEPT]
    assert refused and all(line["outcome"] == "refused" and not line.get("given") for line in refused)
    assert CANARY not in json.dumps(read_audit(home))


@pytest.mark.parametrize("closed_since", [True, False], ids=["closed-since", "still-open"])
def test_a_listener_is_not_told_of_changes_once_the_project_is_closed(gateway_home, closed_since):
    home = gateway_home
    projects = open_projects(home)
    write_config(home, {"gateway": {"plugins": ["sessions"]}}, projects)
    orchard = home / "src" / "orchard"
    claude_session(home, "watched", ["graft the quince"], orchard)
    heard: list = []

    def notices() -> list[dict]:
        return [line for line in read_audit(home) if line.get("method") == "notifications/resources/updated"]

    async def session() -> None:
        async with serve_client(home, mode="auto") as client:
            await client.call_tool("rousseau_list_sessions", {})
            async with client.listen(resource_subscriptions=[WATCHED]) as sub:  # allowed: the orchard is open now
                assert sub.honored.resource_subscriptions == [WATCHED]

                async def hear() -> None:
                    async for event in sub:
                        heard.append(event)

                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(hear)
                    # The person closes the orchard (or, for the control, saves the manifest unchanged) ...
                    save_manifest(home, [{**p, "ai": False} if p["id"] == "orchard" and closed_since else p
                                         for p in projects])
                    # ... then the session goes on; the server's poll for listeners brings the change in.
                    claude_session(home, "watched", [f"the {CANARY} graft"], orchard, append=True, first=2)
                    with anyio.fail_after(60):  # the decision to tell or not is logged before anything is sent
                        while not notices():
                            await anyio.sleep(0.1)
                        while not closed_since and not heard:
                            await anyio.sleep(0.1)
                    await settled(client)
                    tasks.cancel_scope.cancel()

    anyio.run(session)
    told = notices()
    if closed_since:
        assert heard == []
        assert told and all(line["outcome"] == "refused" and line["given"] == [] for line in told)
    else:
        assert heard == [ResourceUpdated(uri=WATCHED)]
        assert told[0]["outcome"] == "ok" and told[0]["given"] == [WATCHED]
    assert CANARY not in json.dumps(told)


@asynccontextmanager
async def hearing_list_changed(home: Path, era: str):
    """A client of `era` ("legacy": the handshake; "auto": 2026-07-28, listening) and the list_changed it hears."""
    heard: list[str] = []
    if era == "legacy":
        async def handler(message) -> None:
            if getattr(getattr(message, "root", message), "method", None) == "notifications/resources/list_changed":
                heard.append("list_changed")

        async with serve_client(home, mode="legacy", message_handler=handler) as client:
            yield client, heard
        return
    async with serve_client(home, mode="auto") as client, client.listen(resources_list_changed=True) as sub:
        async def hear() -> None:
            async for event in sub:
                if event == ResourcesListChanged():
                    heard.append("list_changed")

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(hear)
            yield client, heard
            tasks.cancel_scope.cancel()


@pytest.mark.parametrize("era", ["legacy", "auto"], ids=["handshake", "2026-07-28"])
def test_a_closed_projects_new_session_tells_no_host_that_the_list_changed(gateway_home, era):
    home = gateway_home
    write_config(home, {"gateway": {"plugins": ["sessions"]}}, open_projects(home))
    orchard, vault = home / "src" / "orchard", home / "src" / "vault"
    claude_session(home, "before", ["tend the plumtree"], orchard)
    after_closed: list[list[str]] = []
    after_open: list[list[str]] = []

    async def session() -> None:
        # The first import by a server of its own: list_changed is paced per server (one per 20 s, the rest held
        # and merged), so a notice of it could hold one about the closed session until the control's came.
        async with serve_client(home) as first:
            await first.call_tool("rousseau_list_sessions", {})
        async with hearing_list_changed(home, era) as (client, heard):
            await settled(client)
            assert heard == []  # nothing new: nothing told
            claude_session(home, "hidden", [f"the {CANARY} plumtree"], vault)
            listed = await client.call_tool("rousseau_list_sessions", {})
            assert listed.structured_content["left_out"] == 1  # the refresh brought it in (and kept it back)
            await settled(client)
            after_closed.append(list(heard))
            # The control: an open project's new session is told of.
            claude_session(home, "newcomer", ["prune the plumtree"], orchard)
            await client.call_tool("rousseau_list_sessions", {})
            with anyio.fail_after(30):
                while not heard:
                    await anyio.sleep(0.1)
            after_open.append(list(heard))

    anyio.run(session)
    assert after_closed == [[]]
    assert after_open == [["list_changed"]]


def test_a_closed_projects_activity_tells_a_listener_nothing(gateway_home):
    home = gateway_home
    write_config(home, gateway_config(), [
        {"id": "vault", "name": "Vault", "ai": False, "apps": ["KeePassXC"]},
        {"id": "orchard", "name": "Orchard", "ai": True, "apps": ["Code"]},
    ])
    path = home / ".local/share/activitywatch/aw-server-rust/sqlite.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    database = AWDatabase(path, "rust")
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30)
    database.add(WINDOW, [(start, 60, {"app": "Code", "title": "orchard.py"})])
    recent = "timeline://recent"
    heard: list = []
    after_closed: list[list] = []

    async def query(client) -> None:
        result = await client.call_tool("query_events", {"since": "1h"})
        assert not result.is_error, result.content

    async def session() -> None:
        async with serve_client(home) as first:  # the first import, on a server of its own (list_changed is paced)
            await query(first)
        async with serve_client(home, mode="auto") as client, client.listen(
            resources_list_changed=True, resource_subscriptions=[recent]
        ) as sub:
            assert sub.honored.resource_subscriptions == [recent]

            async def hear() -> None:
                async for event in sub:
                    heard.append(event)

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(hear)
                database.add(WINDOW, [(start + timedelta(minutes=5), 60, {"app": "KeePassXC", "title": CANARY})])
                await query(client)
                await anyio.sleep(QUIET)
                await query(client)
                after_closed.append(list(heard))
                # The control: the open project's activity is told of, both ways.
                database.add(WINDOW, [(start + timedelta(minutes=7), 60, {"app": "Code", "title": "quince.py"})])
                await query(client)
                with anyio.fail_after(30):
                    while not {ResourcesListChanged(), ResourceUpdated(uri=recent)} <= set(heard):
                        await anyio.sleep(0.1)
                tasks.cancel_scope.cancel()

    anyio.run(session)
    database.close()
    assert after_closed == [[]]


@pytest.mark.parametrize("era", ["legacy", "auto"], ids=["handshake", "2026-07-28"])
def test_opening_a_project_tells_hosts_that_the_list_changed_and_closing_one_does_not(gateway_home, era):
    home = gateway_home
    projects = open_projects(home)
    write_config(home, {"gateway": {"plugins": ["sessions"]}}, projects)
    claude_session(home, "kept", ["the vault combination"], home / "src" / "vault")
    after_closing: list[list[str]] = []
    after_opening: list[list[str]] = []

    async def session() -> None:
        async with serve_client(home) as first:  # the first import, on a server of its own (list_changed is paced)
            await first.call_tool("rousseau_list_sessions", {})
        async with hearing_list_changed(home, era) as (client, heard):
            await client.call_tool("rousseau_list_sessions", {})
            # The person closes the orchard: the host's list shrinks when it lists again; nothing is announced.
            save_manifest(home, [{**p, "ai": False} for p in projects])
            await anyio.sleep(6 + QUIET)  # past the server's look at the gate (every 5 s)
            await client.call_tool("rousseau_list_sessions", {})
            after_closing.append(list(heard))
            save_manifest(home, [{**p, "ai": True} if p["id"] == "vault" else p for p in projects])  # opens it
            with anyio.fail_after(30):
                while not heard:
                    await anyio.sleep(0.1)
            after_opening.append(list(heard))
            listed = await client.call_tool("rousseau_list_sessions", {})
            assert [s["id"] for s in listed.structured_content["sessions"]] == ["kept"]

    anyio.run(session)
    assert after_closing == [[]]
    assert after_opening == [["list_changed"]]


def test_a_listen_naming_too_many_resources_is_refused_with_a_sentence(gateway_home):
    from mcp.shared.exceptions import MCPError

    home = gateway_home
    write_config(home, {"gateway": {"plugins": ["sessions"]}}, open_projects(home))
    refusals: list[str] = []
    fine = []

    async def session() -> None:
        async with serve_client(home, mode="auto") as client:
            # Each resource named is read under the gate: a flood of names is refused before any is read.
            try:
                async with client.listen(resource_subscriptions=[f"rousseau://sessions/s{n}" for n in range(1001)]):
                    pass
            except MCPError as error:
                refusals.append(str(error))
            async with client.listen(resources_list_changed=True) as sub:  # the connection still listens
                fine.append(sub.honored.resources_list_changed)

    anyio.run(session)
    assert len(refusals) == 1 and "1000 resources at most" in refusals[0]
    assert fine == [True]
    assert not [line for line in read_audit(home) if str(line.get("uri", "")).startswith("rousseau://sessions/s")]
