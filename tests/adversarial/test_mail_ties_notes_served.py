"""The mail ties read through file notifications, attacked through a real `gateway serve` and the SDK's client: a
message tied to a closed project just before a search, by another process writing the tie store (a second gateway, a
person's own tool), is left out by that very search, however long the store's folder was quiet before; the store
removed gives the message back, and a store made again with the tie keeps it once more. Each search is asked twice
between changes, so that the notifications, not a stat, stand in for the store when the change comes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
from gateway_mail.mail import sample
from gateway_mail.projects.ties import Ties

from gateway.testing import folders_of, serve_client, write_config

CANARY = "quillwortcanary"
TIED = "tied-canary@example.org"


def _text(result) -> str:
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content or {}, ensure_ascii=False)


def _tie_elsewhere(store: Path, message_id: str, project: str) -> None:
    """A tie written as another process writes it: the plugin's own tie store, opened by this test's process."""
    with Ties.at(store) as ties:
        ties.add(f"mid:{message_id}", f"sioul:project/{project}")


def test_a_message_tied_to_a_closed_project_between_two_searches_is_left_out_by_the_second(
        gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    sample.deliver(root / "INBOX", sample.message(subject=f"Plans {CANARY}", body="plans", message_id=TIED))
    sample.deliver(root / "INBOX", sample.message(subject="Other plans", body="plans",
                                                  message_id="open-plans@example.org"))
    write_config(gateway_home, sample.config(root), projects=sample.PROJECTS)
    store = folders_of(gateway_home).for_plugin("mail").data / "ties.sqlite3"

    async def play() -> list[tuple[str, list]]:
        said = []
        async with serve_client(gateway_home) as client:
            async def ask(step: str) -> None:
                for query in (CANARY, "plans"):
                    said.append((step, query, await client.call_tool("search_mail", {"query": query})))

            await ask("no store")
            await ask("no store, quiet")
            for round_number in range(3):
                _tie_elsewhere(store, f"unrelated-{round_number}@example.org", "plumbing")  # an open project's
                await ask(f"unrelated tie {round_number}")
                await ask(f"unrelated tie {round_number}, quiet")
            _tie_elsewhere(store, TIED, "vault")  # a closed project's, just before the call
            await ask("tied")
            await ask("tied, quiet")
            for name in ("ties.sqlite3", "ties.sqlite3-wal", "ties.sqlite3-shm"):
                (store.parent / name).unlink(missing_ok=True)
            await ask("store removed")
            await ask("store removed, quiet")
            _tie_elsewhere(store, TIED, "client")  # made again, with the tie to another closed project
            await ask("made again")
            shutil.rmtree(store.parent)
            await ask("folder removed")
            _tie_elsewhere(store, TIED, "vault")
            await ask("folder made again")
        return said

    said = anyio.run(play)
    hidden = {"tied", "tied, quiet", "made again", "folder made again"}
    for step, query, result in said:
        assert not result.is_error, (step, _text(result))
        data = result.structured_content
        addresses = [hit["address"] for hit in data["hits"]]
        if step in hidden:
            assert CANARY not in _text(result) and TIED not in _text(result), (step, query)
            assert data["left_out"] == 1, (step, query)
            assert data["total"] == (0 if query == CANARY else 1), (step, query)
        else:
            assert f"mid:{TIED}" in addresses, (step, query, addresses)
            assert data["left_out"] == 0, (step, query)
