"""The command line: plugins, tools, call, audit, doctor, setup, demo."""

from __future__ import annotations

import json
import os
import stat

import pytest
from click.testing import CliRunner

from gateway.commands.cli import main, parse_since
from gateway.testing import write_config
from tests.forkserver import gateway_command


@pytest.fixture
def run(gateway_home):
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(main, list(args), catch_exceptions=False)

    return invoke


@pytest.fixture
def hello_only(gateway_home):
    return write_config(gateway_home, {"gateway": {"plugins": ["hello"]}})


def test_every_command_has_help_text(run):
    result = run("--help")
    for command in ("serve", "demo", "plugins", "tools", "call", "audit", "doctor", "setup"):
        assert command in result.output
        sub = run(command, "--help")
        assert sub.exit_code == 0 and len(sub.output.splitlines()) > 3


def test_plugins_shows_origin_version_state_and_tools(run, hello_only):
    result = run("plugins")
    assert "hello [on] 0.1.0 (gateway-hello)" in result.output
    assert "tools: hello, echo, whose" in result.output
    assert "sessions [off]" in result.output


def test_tools_json_is_the_list_a_host_sees(run, hello_only):
    listing = json.loads(run("tools", "--json").output)
    hello = listing["tools"][0]
    assert hello["name"] == "hello" and hello["annotations"]["readOnlyHint"] is True
    assert hello["inputSchema"]["properties"]["name"] == {"type": "string"}


def test_call_goes_through_checks_and_the_audit(run, hello_only):
    result = run("call", "hello", '{"name": "Ada"}')
    assert result.exit_code == 0 and result.output.strip() == "Hello, Ada!"
    bad = run("call", "hello", '{"nom": "Ada"}')
    assert bad.exit_code == 1 and "unknown argument 'nom'" in bad.output
    unknown = run("call", "nope")
    assert unknown.exit_code == 1 and "Tools: hello, echo, whose" in unknown.output
    assert run("call", "hello", "[1]").exit_code == 2
    audit = run("audit", "--json")
    entries = [json.loads(line) for line in audit.output.splitlines()]
    assert [e["outcome"] for e in entries] == ["ok", "bad_arguments", "unknown_tool"]
    assert all(e["client"] == "gateway-cli" and e["transport"] == "cli" for e in entries)
    text = run("audit", "--since", "1h", "--tool", "hello").output
    assert text.count("gateway-cli hello") == 2


def test_parse_since_takes_relative_and_iso_forms():
    assert parse_since("2h") < parse_since("30m")
    assert parse_since("2026-11-30T08:00+00:00").hour == 8


def test_doctor_is_happy_then_names_each_problem(run, gateway_home, hello_only):
    write_config(gateway_home, projects=[{"id": "kept", "paths": ["/srv/kept"]}])  # not everything open
    ok = run("doctor")
    assert ok.exit_code == 0 and "All good." in ok.output
    hello_only.write_text('[gateway]\nplugins = ["hello", "ghost"]\n[plugins.hello]\ncolour = "red"\n')
    bad = run("doctor")
    assert bad.exit_code == 1
    assert "no plugin named 'ghost'" in bad.output and "colour" in bad.output


def test_doctor_flags_an_audit_folder_open_to_others(run, gateway_home, hello_only):
    run("call", "hello", '{"name": "Ada"}')
    folder = gateway_home / ".local/state/gateway/audit"
    os.chmod(folder, 0o755)
    result = run("doctor")
    assert result.exit_code == 1 and "chmod 700" in result.output


@pytest.mark.parametrize("host", ["claude-desktop", "cursor", "gemini"])
def test_setup_writes_the_entry_keeping_the_rest(run, gateway_home, host, monkeypatch):
    from gateway.commands.setup import config_file

    path = config_file(host)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}, "theme": "dark"}))
    result = run("setup", "--host", host, "--write")
    assert result.exit_code == 0
    data = json.loads(path.read_text())
    assert data["theme"] == "dark" and data["mcpServers"]["other"] == {"command": "x"}
    assert data["mcpServers"]["gateway"]["args"][-1] == "serve"


def test_setup_never_clobbers_a_broken_file(run, gateway_home):
    from gateway.commands.setup import config_file

    path = config_file("cursor")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json")
    result = run("setup", "--host", "cursor", "--write")
    assert result.exit_code == 1 and "nothing was changed" in result.output
    assert path.read_text() == "{not json"


def test_setup_codex_merges_toml(run, gateway_home):
    import tomllib

    from gateway.commands.setup import config_file

    path = config_file("codex")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('model = "o4"\n')
    assert run("setup", "--host", "codex", "--write").exit_code == 0
    data = tomllib.loads(path.read_text())
    assert data["model"] == "o4" and data["mcp_servers"]["gateway"]["args"][-1] == "serve"


def test_setup_prints_for_each_host_and_refuses_unknown_ones(run):
    assert "claude mcp add --scope user gateway --" in run("setup", "--host", "claude-code").output
    assert '"servers"' in run("setup", "--host", "vscode").output
    assert run("setup", "--host", "notepad").exit_code == 2


def test_demo_tours_a_home_of_invented_data(gateway_home, tmp_path):
    import subprocess

    target = tmp_path / "demo"
    result = subprocess.run(gateway_command("demo", str(target)), capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "→ initialize: gateway" in result.stdout and "→ tools/list:" in result.stdout
    assert "tools/call hello" in result.stdout
    assert "tools/call rousseau_search_sessions" in result.stdout and "Compost rota" in result.stdout
    # The demo's closed project is shown only as a count and a refusal, never by its words.
    assert "neighbour's lawyer" not in result.stdout and "left out" in result.stdout
    answers = [line for line in result.stdout.splitlines() if line.startswith("    ")]
    assert answers and not any("482913" in line for line in answers)
    audit = target / ".local/state/gateway/audit"
    assert any(audit.glob("*.jsonl"))
    # The host command points HOME into the demo too (the manifest's ~ routes), and ignores the person's config.
    command = next(line for line in result.stdout.splitlines() if line.strip().startswith("env ") and "serve" in line)
    assert f"HOME={target.resolve()} " in command and "-u GATEWAY_CONFIG" in command
    assert stat.S_IMODE(audit.stat().st_mode) == 0o700


def test_audit_says_when_a_filter_matches_nothing(run, hello_only):
    assert "(no calls logged)" in CliRunner().invoke(main, ["audit"]).stderr
    run("call", "hello", '{"name": "Ada"}')
    result = CliRunner().invoke(main, ["audit", "--tool", "no_such_tool"])
    assert result.exit_code == 0 and "(no calls match)" in result.stderr
