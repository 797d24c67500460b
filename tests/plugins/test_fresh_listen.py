"""Issue 13 in the 2026-07-28 era: a host on the SDK's default client (which ends up on 2026-07-28, where bare change
notifications are dropped) hears through `subscriptions/listen` that sessions arrived and that one it listens to
changed, from a real `gateway serve`."""

from __future__ import annotations

import anyio
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated

from gateway.testing import serve_client, write_config
from tests.plugins.fresh_helpers import claude_session, open_projects

WATCHED = "rousseau://sessions/watched"


async def heard_until(subscription, wanted: set, within: float = 30) -> set:
    """The events of `subscription` until all of `wanted` came (within `within` seconds)."""
    heard: set = set()
    with anyio.fail_after(within):
        async for event in subscription:
            heard.add(event)
            if wanted <= heard:
                return heard
    return heard


def test_a_listening_host_hears_of_new_sessions_and_of_a_listened_one_changing(gateway_home):
    home = gateway_home
    write_config(home, {"gateway": {"plugins": ["sessions"]}}, open_projects(home))
    orchard = home / "src" / "orchard"
    claude_session(home, "watched", ["plant the damson"], orchard)
    acknowledged = []

    async def session() -> None:
        async with serve_client(home) as first:  # the first import, on a server of its own (list_changed is paced)
            await first.call_tool("rousseau_list_sessions", {})
        async with serve_client(home, mode="auto") as client:  # the SDK's default: it settles on 2026-07-28
            assert client.session.protocol_version == "2026-07-28"
            resources = client.server_capabilities.resources
            assert resources.list_changed and resources.subscribe
            async with client.listen(resources_list_changed=True, resource_subscriptions=[WATCHED],
                                     tools_list_changed=True, prompts_list_changed=True) as listening:
                acknowledged.append(listening.honored)
                claude_session(home, "watched", ["and water the damson"], orchard, append=True, first=2)
                claude_session(home, "newcomer", ["a new session about sloes"], orchard)
                await client.call_tool("rousseau_search_sessions", {"query": "sloes"})
                await heard_until(listening, {ResourceUpdated(uri=WATCHED), ResourcesListChanged()})
                # With no call at all: a listen stream counts as a subscriber for the server's few seconds' poll.
                claude_session(home, "watched", ["the damson fruits"], orchard, append=True, first=3)
                await heard_until(listening, {ResourceUpdated(uri=WATCHED)})

    anyio.run(session)
    honored = acknowledged[0]
    assert honored.resources_list_changed is True and honored.resource_subscriptions == [WATCHED]
    # The gateway's tools and prompts do not change while it runs: not honoured, as its capabilities say.
    assert not honored.tools_list_changed and not honored.prompts_list_changed


def test_the_capabilities_say_tools_and_prompts_do_not_change_on_either_era(gateway_home):
    home = gateway_home
    write_config(home, {"gateway": {"plugins": ["sessions", "timeline"]}}, open_projects(home))
    found = {}

    async def session() -> None:
        for mode in ("auto", "legacy"):
            async with serve_client(home, mode=mode) as client:
                found[mode] = client.server_capabilities

    anyio.run(session)
    for capabilities in found.values():
        assert capabilities.resources.list_changed and capabilities.resources.subscribe
        assert not capabilities.tools.list_changed
        assert capabilities.prompts is None or not capabilities.prompts.list_changed
