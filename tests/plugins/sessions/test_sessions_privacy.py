"""A closed project's sessions are never shown; pasted secrets are masked. Through a real `gateway serve` and the SDK."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import gateway_sessions
import pytest

from gateway.testing import listed_resources, make_gateway, serve_client, write_config
from tests.plugins.sessions.sessions_helpers import CANARY, CLOSED_VAULT, NOTES, VAULT

SECRET_KEY = "sk-ant-api03-Xy7Qw2Er9Ty4Ui8Op3As6Df1Gh5Jk0Lz-EXAMPLEONLY"
CARD = "4111 1111 1111 1111"


def _everything(result) -> str:
    """All a host receives from one tool call: the text and the structured content."""
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {})


def test_closed_project_sessions_are_never_shown_to_a_real_host(imported_home: Path):
    write_config(imported_home, {"gateway": {"plugins": ["sessions"]}}, projects=CLOSED_VAULT)

    async def session():
        given: list[str] = []
        async with serve_client(imported_home) as client:
            # The vault's session matches both words; the count left out must not depend on which is asked.
            canary = await client.call_tool("rousseau_search_sessions", {"query": CANARY})
            common = await client.call_tool("rousseau_search_sessions", {"query": "crate"})
            nothing = await client.call_tool("rousseau_search_sessions", {"query": "persimmon"})
            for result in (canary, common, nothing):
                assert not result.is_error
                assert result.structured_content["left_out"] == 1
                given.append(_everything(result))
            assert canary.structured_content["hits"] == []
            assert VAULT not in {hit["id"] for hit in common.structured_content["hits"]}
            assert common.structured_content["hits"], "the open sessions that match are still found"

            listed = await client.call_tool("rousseau_list_sessions", {})
            assert listed.structured_content["left_out"] == 1
            assert "1 session left out" in listed.content[0].text
            given.append(_everything(listed))

            refused = await client.call_tool("rousseau_read_session", {"id": VAULT})
            assert refused.is_error and "closed to AI agents" in refused.content[0].text
            given.append(_everything(refused))

            resources = await listed_resources(client)
            uris = [str(resource.uri) for resource in resources]
            assert f"rousseau://sessions/{NOTES}" in uris and f"rousseau://sessions/{VAULT}" not in uris
            given.append(json.dumps([resource.model_dump(mode="json") for resource in resources]))

            with pytest.raises(Exception, match="closed to AI agents") as refusal:
                await client.read_resource(f"rousseau://sessions/{VAULT}")
            given.append(str(refusal.value))
        for text in given:
            assert CANARY not in text

    anyio.run(session)


def test_pasted_keys_and_card_numbers_are_masked_everywhere(sessions_gateway):
    answers = [
        sessions_gateway.call("rousseau_read_session", {"id": NOTES}),
        sessions_gateway.call("rousseau_search_sessions", {"query": "deploy"}),
        sessions_gateway.read(f"rousseau://sessions/{NOTES}"),
    ]
    assert answers[1].data["hits"], "the search found the message that holds the secrets"
    for answer in answers:
        given = answer.text + json.dumps(dict(answer.data or {}))
        assert SECRET_KEY not in given and "Xy7Qw2Er9Ty4" not in given
        assert CARD not in given and "4111111111111111" not in given
        assert "1111" in given or "…" in given  # the last four are kept where the number is shown


def test_a_session_outside_projects_is_refused_when_outside_projects_are_closed(imported_home: Path):
    gateway = make_gateway(
        plugins=[gateway_sessions],
        config={"access": {"outside_projects": False}, "plugins": {"sessions": {"refresh": False}}},
        projects=[{"id": "vault", "ai": True, "paths": ["/home/ada/src/vault"]}],
        home=imported_home,
    )
    listed = gateway.call("rousseau_list_sessions", {})
    assert [s["id"] for s in listed.data["sessions"]] == [VAULT]
    assert listed.left_out == 4
    refused = gateway.call("rousseau_read_session", {"id": NOTES})
    assert refused.is_error and "outside_projects" in refused.text
