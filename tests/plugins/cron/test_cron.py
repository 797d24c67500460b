"""The cron plugin: jobs written by `gateway cron`, read by `rousseau_cron_list` and `rousseau://cron/{name}`."""

from __future__ import annotations

import datetime as dt
import importlib
import json
import sqlite3
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

import anyio
import gateway_cron
import gateway_sessions
import pytest
from click.testing import CliRunner
from gateway_cron import store
from gateway_cron.cli import commands

from gateway import Folders, PluginHost
from gateway.testing import folders_of, make_gateway, serve_client, write_config
from tests.forkserver import gateway_command

CANARY = "okapicanary"
PROJECTS = [{"id": "vault", "name": "Vault", "ai": False, "paths": ["/home/ada/src/vault"]}]


def _cron(*arguments: str):
    """`gateway cron ...` for the home of this test (the commands are built for it, as the CLI builds them)."""
    host = PluginHost(name="cron", folders=Folders.from_environment().for_plugin("cron"), settings={})
    (group,) = commands(host)
    return CliRunner().invoke(group, list(arguments))


@pytest.fixture
def cron_home(gateway_home: Path) -> Path:
    write_config(gateway_home, {"gateway": {"plugins": ["sessions", "cron"]}}, projects=PROJECTS)
    return gateway_home


@pytest.fixture
def with_jobs(cron_home: Path) -> Path:
    for arguments in (
        [
            "add",
            "morning-brief",
            "0 7 * * 1-5",
            'Summarise "yesterday" in the orchard',
            "--deliver",
            "ada@example.org",
            "--tz",
            "Europe/Paris",
        ],
        [
            "add",
            "backup",
            "30 2 * * *",
            "Check the backup log",
            "--deliver",
            "log",
            "--tz",
            "UTC",
            "--disabled",
        ],
        [
            "add",
            "vault-digest",
            "@daily",
            f"Digest the {CANARY} files",
            "--deliver",
            "ada@example.org",
            "--cwd",
            "/home/ada/src/vault",
        ],
    ):
        result = _cron(*arguments)
        assert result.exit_code == 0, result.output
    return cron_home


def _gateway(home: Path):
    return make_gateway(plugins=[gateway_sessions, gateway_cron], projects=PROJECTS, home=home)


def test_no_store_or_no_job_table_means_no_jobs(cron_home: Path):
    gateway = _gateway(cron_home)
    assert gateway.call("rousseau_cron_list").text == "(no jobs)"
    sessions_db = store.default_path(folders_of(cron_home).for_plugin("cron").data)
    sessions_db.parent.mkdir(parents=True, exist_ok=True)  # the core made the plugin folders at load
    sqlite3.connect(sessions_db).execute("CREATE TABLE sessions(id)").connection.close()
    answer = gateway.call("rousseau_cron_list")
    assert answer.text == "(no jobs)" and answer.data == {"jobs": [], "left_out": 0}


def test_the_jobs_share_the_sessions_store_by_default(cron_home: Path):
    from gateway_cron.defaults import default_path as cron_default
    from gateway_sessions.defaults import default_path as sessions_default

    gateway = _gateway(cron_home)
    config = gateway.snapshot().config
    for name in ("cron", "sessions"):  # neither names a file: each falls back to its default path
        assert gateway.settings_of(gateway.registry.get(name, config.table(name)), config)["store"] == ""
    cron_store = cron_default(gateway.folders.for_plugin("cron").data)
    sessions_store = sessions_default(gateway.folders.for_plugin("sessions").data)
    assert cron_store == sessions_store and str(cron_store).endswith("gateway/plugins/sessions/sessions.db")


def test_list_gives_one_line_per_job_in_the_seed_format(with_jobs: Path):
    answer = _gateway(with_jobs).call("rousseau_cron_list")
    assert answer.text.splitlines() == [
        'backup [off] 30 2 * * * → log prompt="Check the backup log" deliver=log',
        'morning-brief [on] 0 7 * * 1-5 → ada@example.org prompt="Summarise \\"yesterday\\" in the orchard" '
        "deliver=ada@example.org",
        "1 job left out: their projects are closed to AI agents.",
    ]
    assert answer.left_out == 1 and answer.given == (
        "rousseau://cron/backup",
        "rousseau://cron/morning-brief",
    )


def test_next_run_is_computed_in_the_jobs_time_zone(with_jobs: Path):
    jobs = {job["name"]: job for job in _gateway(with_jobs).call("rousseau_cron_list").data["jobs"]}
    upcoming = dt.datetime.fromisoformat(jobs["morning-brief"]["next_run"])
    paris = upcoming.astimezone(ZoneInfo("Europe/Paris"))
    assert (paris.hour, paris.minute) == (7, 0) and paris.weekday() < 5
    assert upcoming.utcoffset() == paris.utcoffset()
    assert dt.datetime.now(dt.UTC) < upcoming < dt.datetime.now(dt.UTC) + dt.timedelta(days=4)
    # Absent rather than null: the output schema stays in what every host's validator takes.
    assert "next_run" not in jobs["backup"] and jobs["backup"]["enabled"] is False
    assert "last_run" not in jobs["morning-brief"]


def test_next_run_follows_daylight_saving_time():
    from gateway_cron.schedule import next_run

    before_switch = dt.datetime(2026, 3, 28, 12, 0, tzinfo=dt.UTC)  # Paris moves to summer time on 29 March
    assert next_run("0 7 * * *", "Europe/Paris", before_switch) == "2026-03-29T07:00:00+02:00"
    assert next_run("0 7 * * *", "Europe/Paris", dt.datetime(2026, 3, 27, 12, 0, tzinfo=dt.UTC)) == (
        "2026-03-28T07:00:00+01:00"
    )


def test_invalid_expression_or_zone_is_refused_with_the_reason(cron_home: Path):
    result = _cron("add", "bad", "61 * * * *", "x", "--deliver", "log")
    assert (
        result.exit_code == 2 and "not a cron expression" in result.output and "out of range" in result.output
    )
    result = _cron("add", "bad", "* * *", "x", "--deliver", "log")
    assert result.exit_code == 2 and "columns" in result.output
    result = _cron("add", "bad", "@daily", "x", "--deliver", "log", "--tz", "Mars/Olympus")
    assert result.exit_code == 2 and "unknown time zone" in result.output
    assert _cron("list").output.strip() == "(no jobs)"


def test_remove_enable_disable_and_their_errors(with_jobs: Path):
    assert _cron("enable", "backup").exit_code == 0
    assert _cron("disable", "morning-brief").exit_code == 0
    assert _cron("remove", "vault-digest").exit_code == 0
    listed = _cron("list").output.splitlines()
    assert listed[0].startswith("backup [on] 30 2 * * * → log") and "next=20" in listed[0]
    assert listed[1].startswith("morning-brief [off]") and listed[1].endswith("next=-")
    assert len(listed) == 2
    for arguments in (["remove", "nope"], ["enable", "nope"]):
        result = _cron(*arguments)
        assert result.exit_code == 1 and "no job named 'nope'" in result.output
    again = _cron("add", "backup", "@hourly", "x", "--deliver", "log")
    assert again.exit_code == 1 and "exists already" in again.output


def test_job_resources_list_and_read(with_jobs: Path):
    gateway = _gateway(with_jobs)
    uris = [item["uri"] for item in gateway.all_resources() if item["uri"].startswith("rousseau://cron/")]
    assert uris == ["rousseau://cron/backup", "rousseau://cron/morning-brief"]
    text = gateway.read("rousseau://cron/morning-brief").text
    lines = text.splitlines()
    assert lines[:5] == [
        "name: morning-brief",
        "enabled: on",
        "schedule: 0 7 * * 1-5 (Europe/Paris)",
        "deliver: ada@example.org",
        "last run: never",
    ]
    assert lines[5].startswith("next run: 20") and 'Summarise "yesterday" in the orchard' in text
    missing = gateway.read("rousseau://cron/nope")
    assert missing.is_error and "'nope'" in missing.text


def test_the_tool_is_read_only_and_no_tool_writes_jobs(with_jobs: Path):
    gateway = _gateway(with_jobs)
    cron_tools = [listed.tool for listed in gateway.catalogue().tools if listed.tool.plugin == "cron"]
    assert [tool.name for tool in cron_tools] == ["rousseau_cron_list"]
    assert cron_tools[0].read_only and cron_tools[0].output_schema is not None


def test_a_missing_croniter_is_said_with_the_pip_command(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "croniter", None)
    for name in [n for n in sys.modules if n == "gateway_cron" or n.startswith("gateway_cron.")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(ImportError, match=r"pip install 'mcp-gateway\[cron\]'"):
        importlib.import_module("gateway_cron")


def test_closed_project_jobs_are_never_shown_to_a_real_host(with_jobs: Path):
    async def session():
        given = []
        async with serve_client(with_jobs) as client:
            listed = await client.call_tool("rousseau_cron_list", {})
            assert listed.structured_content["left_out"] == 1
            given.append(listed.content[0].text + json.dumps(listed.structured_content))
            resources = await client.list_resources()
            uris = [str(r.uri) for r in resources.resources]
            assert "rousseau://cron/morning-brief" in uris and "rousseau://cron/vault-digest" not in uris
            given.append(json.dumps([r.model_dump(mode="json") for r in resources.resources]))
            with pytest.raises(Exception, match="closed to AI agents") as refusal:
                await client.read_resource("rousseau://cron/vault-digest")
            given.append(str(refusal.value))
        assert all(CANARY not in text for text in given)

    anyio.run(session)


def test_gateway_cron_is_a_command_of_the_gateway(cron_home: Path):
    import os
    import subprocess

    from gateway.api.context import home_environment

    env = {"PATH": os.environ.get("PATH", ""), **home_environment(cron_home)}
    run = subprocess.run(
        gateway_command("cron", "add", "tea", "0 16 * * *", "Brew tea", "--deliver", "log"),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert _cron("list").output.startswith('tea [on] 0 16 * * * → log prompt="Brew tea" deliver=log next=')
