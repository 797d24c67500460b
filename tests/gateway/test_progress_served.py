"""Progress from a plugin's tool reaches the host that asked for it, through a real `gateway serve` and the MCP SDK's
own client with a progress callback: forward only, masked, the last one before the answer; a host that gave no
progress token hears nothing. The pacing (latest wins, ten a second at most) is checked on the wire's own piece,
where reports can be made faster than any tool makes them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from gateway_mail.demo import write_maildir
from mcp_types import ProgressNotification

from gateway.testing import read_audit, serve_client, write_config
from gateway.wire.progress import Progress, progress_of_call
from tests.plugins.fresh_helpers import claude_session, open_projects

CARD = "4111 1111 1111 1111"


def fixtures_on(home: Path) -> None:
    write_config(home, {"gateway": {"plugins": ["conformance"]}, "plugins": {"conformance": {"enabled": True}}})


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["2025-11-25", "2026-07-28"])
def test_a_host_hears_the_tools_progress_forward_and_masked_and_only_when_it_asked(gateway_home: Path,
                                                                                   mode: str) -> None:
    fixtures_on(gateway_home)
    heard: list[tuple[float, float | None, str | None]] = []
    suite: list[float] = []
    unasked: list[ProgressNotification] = []
    asking = [True]

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append((progress, total, message))

    async def on_suite_progress(progress: float, total: float | None, message: str | None) -> None:
        suite.append(progress)

    async def on_message(message: Any) -> None:
        if isinstance(message, ProgressNotification) and not asking[0]:
            unasked.append(message)

    async def session() -> tuple[Any, Any]:
        async with serve_client(gateway_home, mode=mode, message_handler=on_message) as client:
            asked = await client.call_tool("test_slow_work", {"steps": 6}, progress_callback=on_progress)
            await client.call_tool("test_tool_with_progress", {}, progress_callback=on_suite_progress)
            asking[0] = False
            quiet = await client.call_tool("test_slow_work", {"steps": 3})  # no callback: no progress token
            return asked, quiet

    asked, quiet = anyio.run(session)
    assert not asked.is_error and asked.content[0].text == "Did 6 steps."
    assert heard, "no progress was heard"
    values = [value for value, _total, _message in heard]
    assert values == sorted(set(values)), f"progress went backwards or repeated: {values}"
    assert heard[-1][:2] == (6, 6)  # the last step is told before the answer
    for _value, _total, message in heard:
        assert message and "\n" not in message
        assert CARD not in message and "4111" not in message and "1111" in message  # masked, last four kept
    assert suite == [0, 50, 100]  # what the official suite's scenario asks of its fixture
    assert quiet.content[0].text == "Did 3 steps." and not unasked
    audited = [line["outcome"] for line in read_audit(gateway_home) if line.get("tool") == "test_slow_work"]
    assert audited == ["ok", "ok"]


def test_a_first_mail_index_and_a_first_sessions_import_report_their_progress(gateway_home: Path) -> None:
    home = gateway_home
    write_maildir(home / "Mail" / "demo", datetime.now(UTC).timestamp())
    orchard = home / "src" / "orchard"
    for number in range(4):
        claude_session(home, f"s{number}", [f"prune the pear, step {number}"], orchard)
    write_config(home, {"gateway": {"plugins": ["sessions", "mail"]},
                        "plugins": {"mail": {"accounts": [{"name": "demo", "maildir": str(home / "Mail" / "demo"),
                                                           "addresses": ["pat@example.org"]}]}}},
                 open_projects(home))
    heard: dict[str, list[tuple[float, float | None, str | None]]] = {"mail": [], "sessions": []}

    def listener(kind: str) -> Any:
        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            heard[kind].append((progress, total, message))
        return on_progress

    async def session() -> None:
        async with serve_client(home) as client:
            await client.call_tool("search_mail", {"query": "garden"}, progress_callback=listener("mail"))
            await client.call_tool("rousseau_list_sessions", {}, progress_callback=listener("sessions"))

    anyio.run(session)
    mail, sessions = heard["mail"], heard["sessions"]
    assert mail and all(message == "Indexing the mail" and total is None for _v, total, message in mail)
    assert [v for v, _t, _m in mail] == sorted({v for v, _t, _m in mail})
    assert sessions and sessions[-1][:2] == (4, 4)
    assert sessions[-1][2] == "Read 4 of 4 session files"


def test_a_burst_of_reports_leaves_as_the_latest_and_the_last() -> None:
    sent: list[tuple[float, float | None, str | None]] = []

    async def send(value: float, total: float | None, message: str | None) -> None:
        sent.append((value, total, message))

    async def burst() -> None:
        async with progress_of_call(send) as progress:
            assert isinstance(progress, Progress)
            for done in range(1, 1001):  # all before the sender runs once
                progress.report(done, 1000, f"item {done}")
            progress.report(500, 1000, "back to 500")  # backwards: dropped
            progress.report("many", 1000)  # not a number: dropped

    anyio.run(burst)
    assert sent[-1] == (1000, 1000, "item 1000")
    assert len(sent) <= 2, f"a burst of a thousand reports sent {len(sent)} notifications"


def test_no_report_leaves_once_the_call_has_answered() -> None:
    sent: list[float] = []

    async def send(value: float, total: float | None, message: str | None) -> None:
        sent.append(value)

    async def late() -> None:
        async with progress_of_call(send) as progress:
            progress.report(1)
        assert progress is not None
        progress.report(2)  # a worker still running after the answer
        await anyio.sleep(0.2)

    anyio.run(late)
    assert sent == [1]


def test_without_a_token_nothing_is_reported() -> None:
    async def none() -> None:
        async with progress_of_call(None) as progress:
            assert progress is None

    anyio.run(none)
