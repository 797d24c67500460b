"""`gateway access why` and `access list` for the addresses the sessions, cron and timeline plugins hand out: each
names the route that took the thing, read from the plugin's own traits, and the census counts them."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from click.testing import CliRunner
from gateway_cron import store as cron_store
from gateway_sessions import store as sessions_store
from gateway_sessions.importing import import_agent

from gateway.commands.cli import main
from gateway.testing import (
    folders_of,
    make_gateway,  # noqa: E402
    write_config,
)
from tests.plugins.timeline.timeline_helpers import envelope, fill, home_store, minute_now


@pytest.fixture
def home(gateway_home):
    vault, orchard = gateway_home / "src" / "vault", gateway_home / "src" / "orchard"
    for folder in (vault, orchard):
        folder.mkdir(parents=True)
    line = {"type": "user", "uuid": "s-1", "sessionId": "vault-session", "cwd": str(orchard),
            "timestamp": "2026-03-02T09:01:00.000Z",
            "message": {"role": "user", "content": [{"type": "tool_use", "id": "t1", "name": "Edit",
                                                     "input": {"file_path": str(vault / "ledger.md")}}]}}
    transcript = gateway_home / ".claude" / "projects" / "-src" / "vault-session.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(json.dumps(line) + "\n")
    connection = sessions_store.open_for_writing(
        sessions_store.default_path(folders_of(gateway_home).for_plugin("sessions").data))
    try:
        assert not import_agent(connection, "claude-code").failed
    finally:
        connection.close()
    connection = cron_store.open_for_writing(cron_store.default_path(folders_of(gateway_home).for_plugin("cron").data))
    try:
        cron_store.add(connection, cron_store.Job("digest", "@daily", "Send the digest", "mail:Keeper <keeper@example.net>",
                                                  True, "UTC", str(orchard), "", ""))
    finally:
        connection.close()
    now = minute_now()
    fill(home_store(gateway_home), [
        envelope(now - timedelta(minutes=5), "app.focus", "Code", f"ledger.md — {vault} — Code", event_id="ev-title"),
        envelope(now - timedelta(minutes=4), "app.focus", "Ledgerly", "Accounts", event_id="ev-app"),
    ])
    write_config(gateway_home, {"gateway": {"plugins": ["sessions", "cron", "timeline"]},
                                "plugins": {"timeline": {"probe_activitywatch": False}}},
                 projects=[{"id": "vault", "name": "Vault", "paths": [str(vault)], "senders": ["keeper@example.net"],
                            "apps": ["Ledgerly"]},
                           {"id": "orchard", "ai": True, "paths": [str(orchard)]}])
    return gateway_home


def _why(address: str):
    return CliRunner().invoke(main, ["access", "why", address], catch_exceptions=False)


def test_a_session_is_explained_by_the_file_its_tool_call_named(home):
    result = _why("rousseau://sessions/vault-session")
    assert result.exit_code == 1, result.output
    assert f"taken by vault (closed): paths route '{home / 'src' / 'vault'}'" in result.output
    assert "taken by orchard (open): paths route" in result.output
    assert _why("vault-session").exit_code == 1  # the bare id the refusal names is read too


def test_a_cron_job_is_explained_by_the_address_it_delivers_to(home):
    result = _why("rousseau://cron/digest")
    assert result.exit_code == 1, result.output
    assert "taken by vault (closed): senders route 'keeper@example.net'" in result.output


def test_timeline_events_are_explained_by_their_app_and_by_the_path_their_title_names(home):
    app = _why("timeline://events/ev-app")
    assert app.exit_code == 1 and "taken by vault (closed): apps route 'Ledgerly'" in app.output
    title = _why("timeline://events/ev-title")
    assert title.exit_code == 1 and "taken by vault (closed): paths route" in title.output


def test_the_refusals_name_the_command_that_explains_them(home):
    gateway = make_gateway(entrypoints=True, home=home)
    for tool, arguments in (("rousseau_read_session", {"id": "vault-session"}),):
        refused = gateway.call(tool, arguments)
        command = refused.text.split("`")[1]
        assert command.startswith("gateway access why ")
        assert _why(command.split()[-1]).exit_code == 1
    refused = gateway.read("rousseau://cron/digest")
    assert "`gateway access why rousseau://cron/digest`" in refused.text
    refused = gateway.read("timeline://events/ev-app")
    assert "`gateway access why timeline://events/ev-app`" in refused.text


def test_access_list_counts_each_plugins_things(home):
    result = CliRunner().invoke(main, ["access", "list"], catch_exceptions=False)
    assert result.exit_code == 0
    assert "1 in sessions of claude-code" in result.output
    assert "senders 'keeper@example.net': 1 in cron jobs" in result.output
    assert "apps 'Ledgerly': 1 in timeline events" in result.output
