"""A plugin its settings turn off, and tools its settings hide, through a real `gateway serve` and the SDK's client.

A typo in a plugin's table must not look to the agent like tools that never existed: the plugin's tools stay
listed and each call answers what is wrong and who can fix it; a tool hidden by `read_only` or `disabled_tools`
says so when it is called, rather than "Unknown tool".
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import pytest

from gateway.testing import read_audit, serve_client, write_config

MAIL_ONLY = {"gateway": {"plugins": ["mail"]}}


def _rewrite(home: Path, config: dict) -> None:
    path = write_config(home, config)
    stamp = time.time() + 2  # the stat differs even on filesystems with coarse timestamps
    os.utime(path, (stamp, stamp))


def _text(result) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def test_a_typo_in_a_plugins_table_keeps_its_tools_listed_and_each_call_says_why(gateway_home: Path) -> None:
    found: dict = {}

    async def session() -> None:
        async with serve_client(gateway_home) as client:
            found["clean"] = [t.name for t in (await client.list_tools()).tools]
            _rewrite(gateway_home, {**MAIL_ONLY, "plugins": {"mail": {"bogus_key": 1}}})
            found["typo"] = [t.name for t in (await client.list_tools()).tools]
            for name in ("porch", "search_mail", "draft_reply"):
                found[name] = await client.call_tool(name, {})
            _rewrite(gateway_home, MAIL_ONLY)
            found["fixed"] = await client.call_tool("porch", {})

    write_config(gateway_home, MAIL_ONLY)
    anyio.run(session)
    assert "porch" in found["clean"] and len(found["clean"]) > 10
    assert found["typo"] == found["clean"], "the plugin's tools stay listed while its table is wrong"
    for name in ("porch", "search_mail", "draft_reply"):
        result = found[name]
        assert result.is_error, name
        text = _text(result)
        assert text.startswith(f"{name} cannot answer now:"), text
        assert "unknown key in [plugins.mail]: bogus_key" in text and "config.toml" in text, text
    assert not found["fixed"].is_error, _text(found["fixed"])
    outcomes = [e["outcome"] for e in read_audit(gateway_home) if e.get("tool") in ("porch", "search_mail")]
    assert outcomes == ["plugin_off", "plugin_off", "ok"]


def test_a_tool_hidden_by_read_only_or_disabled_tools_says_so_when_called(gateway_home: Path) -> None:
    config = {"gateway": {"plugins": ["mail"], "read_only": True}, "plugins": {"mail": {"disabled_tools": ["find"]}}}
    write_config(gateway_home, config)
    found: dict = {}

    async def session() -> None:
        async with serve_client(gateway_home) as client:
            found["listed"] = {t.name: t for t in (await client.list_tools()).tools}
            for name in ("draft_reply", "add_note", "find", "no_such_tool"):
                with pytest.raises(Exception) as refused:
                    await client.call_tool(name, {})
                found[name] = str(refused.value)

    anyio.run(session)
    listed = found["listed"]
    assert "porch" in listed and all(t.annotations.read_only_hint for t in listed.values())
    assert not {"draft_reply", "add_note", "find"} & set(listed)
    for name in ("draft_reply", "add_note"):
        said = found[name]
        assert said.startswith(f"{name} is not offered: it writes, and the gateway is read-only"), said
        assert "read_only = true in [gateway]" in said and "Unknown tool" not in said
    assert found["find"].startswith("find is not offered: the person turned it off (disabled_tools in [plugins.mail]")
    assert found["no_such_tool"] == "Unknown tool: 'no_such_tool'"
    outcomes = {e["tool"]: e["outcome"] for e in read_audit(gateway_home) if e.get("tool")}
    assert outcomes == {"draft_reply": "hidden_tool", "add_note": "hidden_tool", "find": "hidden_tool",
                        "no_such_tool": "unknown_tool"}
