"""`gateway serve` with every built-in plugin on answers tools/list before any plugin's heavy modules are imported.

A probe plugin, installed as pip would, reports the served process's `sys.modules` right after `tools/list`:
the stores (SQLite), the queries, croniter and zstandard must still be absent; they are imported when a tool
first runs.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from gateway.testing import installed_plugin, serve_client, write_config

PROBE = '''
import sys

from gateway import hookimpl, tool


@tool(read_only=True)
def loaded_modules() -> dict:
    """The modules the served process has imported so far."""
    return {"modules": sorted(sys.modules)}


@hookimpl
def register_tools(gateway):
    return [loaded_modules]
'''

# What a fresh interpreter imported is the point here: `gateway` is exec'd, never forked by the suite's fork server.
pytestmark = pytest.mark.usefixtures("real_exec")

BUILT_INS = ["sessions", "cron", "timeline", "mail", "spam"]
# What each built-in imports only when one of its tools runs.
HEAVY = {
    "sessions": ["gateway_sessions.store", "gateway_sessions.render", "gateway_sessions.importers", "zstandard"],
    "cron": ["gateway_cron.store", "gateway_cron.schedule", "croniter"],
    "timeline": ["gateway_timeline.store", "gateway_timeline.queries", "gateway_timeline.gating",
                 "gateway_timeline.importers"],
    "mail": ["gateway_mail.mail.answers", "gateway_mail.mail.drafts", "gateway_mail.mail.parse", "gateway_mail.mail.store",
             "gateway_mail.mail.index", "lxml"],
    "spam": ["gateway_spam.tools", "gateway_spam.model", "gateway_spam.tokens", "gateway_spam.training",
             "gateway_spam.jobs", "gateway_spam.corpus"],
    # structlog is imported when a line is first logged; masks' patterns are compiled when first used.
    "any": ["sqlite3", "structlog", "gateway.privacy.codes", "gateway.privacy.links"],
}


def served_modules(home: Path, site: Path, tool: str | None = None) -> tuple[list[str], set[str]]:
    """The tools listed by a real `gateway serve`, and the modules it had imported then (after `tool` ran)."""
    found: list[tuple[list[str], set[str]]] = []

    async def session() -> None:
        async with serve_client(home, extra_env={"PYTHONPATH": str(site)}) as client:
            listed = [t.name for t in (await client.list_tools()).tools]
            if tool is not None:
                assert not (await client.call_tool(tool, {})).is_error
            result = await client.call_tool("loaded_modules", {})
            assert not result.is_error, result.content
            found.append((listed, set(result.structured_content["modules"])))

    anyio.run(session)
    return found[0]


def test_tools_are_listed_before_any_plugins_heavy_modules_are_imported(gateway_home: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    installed_plugin(site, "probe", PROBE)
    write_config(gateway_home, {"gateway": {"plugins": [*BUILT_INS, "probe"]}})
    listed, modules = served_modules(gateway_home, site)
    assert {"rousseau_search_sessions", "rousseau_cron_list", "get_timeline", "search_mail", "loaded_modules"} <= set(
        listed
    )
    imported = sorted(name for names in HEAVY.values() for name in names if name in modules)
    assert imported == []
    assert {"gateway_sessions", "gateway_cron", "gateway_timeline", "gateway_mail"} <= modules  # the plugins loaded


def test_the_probe_sees_a_heavy_module_once_a_tool_has_run(gateway_home: Path, tmp_path: Path) -> None:
    # The check above can fail: calling the cron tool imports the cron store (and SQLite) in the same process.
    site = tmp_path / "site"
    installed_plugin(site, "probe", PROBE)
    write_config(gateway_home, {"gateway": {"plugins": [*BUILT_INS, "probe"]}})
    _listed, modules = served_modules(gateway_home, site, tool="rousseau_cron_list")
    assert {"gateway_cron.store", "sqlite3"} <= modules


def test_the_built_in_tools_schemas_written_without_pydantic_are_pydantics(monkeypatch) -> None:
    # The common annotations are described directly at start (a TypeAdapter costs a millisecond or two each):
    # what hosts see must be exactly what pydantic, made portable, writes.
    import gateway_cron.tools as cron
    import gateway_sessions.tools as sessions
    import gateway_timeline.tools as timeline

    from gateway.api import schemas

    functions = [sessions.rousseau_search_sessions, sessions.rousseau_list_sessions, sessions.rousseau_read_session,
                 cron.rousseau_cron_list, timeline.get_timeline, timeline.query_events, timeline.get_status]
    fast = [schemas.describe(function, function.__name__).schema for function in functions]
    monkeypatch.setattr(schemas, "FAST_SCHEMAS", False)
    assert fast == [schemas.describe(function, function.__name__).schema for function in functions]
