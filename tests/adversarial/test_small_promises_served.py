"""Two of the seeds' small promises, played through a real `gateway serve` as a host meets them: a timeline URL
keeps its scheme and host with its secret rest as one label; read_message names the message's open projects and
never a closed one."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import anyio
from gateway_mail.mail import sample

from gateway.testing import serve_client, write_config
from tests.plugins.timeline.timeline_helpers import envelope, fill, home_store, minute_now


def _text(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def test_a_timeline_url_keeps_its_host_and_hides_its_secret_rest_whole(gateway_home: Path) -> None:
    url = "https://wiki.example.com/page?user=ada&token=abc123def456&x=1"
    fill(home_store(gateway_home), [envelope(minute_now() - timedelta(minutes=3), "browser.navigate", "Firefox",
                                             "A page", data={"url": url, "tab_title": "A page", "mode": "normal"})])
    write_config(gateway_home, {"gateway": {"plugins": ["timeline"]}})

    async def play() -> str:
        async with serve_client(gateway_home) as client:
            return _text(await client.call_tool("query_events", {"since": "1h"}))

    said = anyio.run(play)
    assert "https://wiki.example.com/[link with a token]" in said
    assert "abc123def456" not in said and "[masked]" not in said and "&x=1" not in said


def test_read_message_names_its_open_projects_and_never_a_closed_one(gateway_home: Path) -> None:
    root = gateway_home / "Mail" / "personal"
    ids = sample.world(root, "quillwort", time.time())
    write_config(gateway_home, sample.config(root), projects=sample.PROJECTS)

    async def play() -> tuple[str, str]:
        async with serve_client(gateway_home) as client:
            plumber = _text(await client.call_tool("read_message", {"address": f"mid:{ids['plumber']}"}))
            vault = _text(await client.call_tool("read_message", {"address": f"mid:{ids['vault']}"}))
            return plumber, vault

    plumber, vault = anyio.run(play)
    assert "Projects: plumbing" in plumber
    assert "vault" not in vault.replace(f"mid:{ids['vault']}", "") and "closed to AI agents" in vault
