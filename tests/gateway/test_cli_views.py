"""From the terminal, everything a host sees: each plugin's registrations (`plugins --json`), resources and
prompts listed and read through the same gate, masks and audit as a host's requests."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from gateway.commands.cli import main
from gateway.testing import write_config

CARD = "4111 1111 1111 1111"  # a Luhn-valid test card number: masked in whatever is given


@pytest.fixture
def run(gateway_home):
    def invoke(*args):
        return CliRunner().invoke(main, list(args), catch_exceptions=False)

    return invoke


@pytest.fixture
def hello_home(gateway_home):
    write_config(gateway_home, {
        "gateway": {"plugins": ["hello"]},
        "plugins": {"hello": {"motto": f"Pay with {CARD}", "disabled_tools": ["whose"]}},
    })
    return gateway_home


def test_plugins_json_shows_everything_each_plugin_registered(run, hello_home):
    result = run("plugins", "--json")
    assert result.exit_code == 0
    listing = json.loads(result.stdout)
    assert listing["problems"] == []
    hello = next(p for p in listing["plugins"] if p["name"] == "hello")
    assert hello["enabled"] and hello["serving"] and hello["loaded"] and hello["error"] is None
    assert hello["origin"] == "gateway-hello" and hello["version"] == "0.1.0"
    assert {"register_tools", "register_resources", "register_prompts", "register_settings"} <= set(hello["hooks"])
    tools = {t["name"]: t for t in hello["tools"]}
    assert tools["hello"]["read_only"] is True and tools["hello"]["listed"] is True
    assert tools["whose"]["listed"] is False  # in the plugin, hidden by disabled_tools
    assert hello["resources"] == [{"uri": "hello://motto", "name": "motto", "title": None, "mime_type": "text/plain"}]
    assert hello["prompts"][0]["name"] == "greet" and hello["prompts"][0]["arguments"] == [
        {"name": "name", "required": True}]
    settings = {s["name"]: s for s in hello["settings"]}
    assert settings["greeting"] == {"name": "greeting", "type": "str", "default": "Hello",
                                    "help": "the word the hello tool greets with"}
    # A plugin that is off is not imported: only what its distribution says.
    sessions = next(p for p in listing["plugins"] if p["name"] == "sessions")
    assert sessions["enabled"] is False and sessions["loaded"] is False and "tools" not in sessions


def test_plugins_json_carries_the_problem_and_exits_non_zero(run, gateway_home):
    write_config(gateway_home, {"gateway": {"plugins": ["hello"]}, "plugins": {"hello": {"greeting": 3}}})
    result = run("plugins", "--json")
    assert result.exit_code == 1
    listing = json.loads(result.stdout)
    hello = next(p for p in listing["plugins"] if p["name"] == "hello")
    assert hello["serving"] is False and "greeting" in hello["error"]
    assert listing["problems"] and "greeting" in listing["problems"][0]


def test_resources_lists_as_a_host_does_and_the_audit_keeps_it(run, hello_home, audit_lines):
    result = run("resources")
    assert result.exit_code == 0
    assert "hello://motto" in result.stdout
    entries = audit_lines()
    assert [e["method"] for e in entries] == ["resources/list", "resources/templates/list"]
    assert all(e["transport"] == "cli" and e["client"] == "gateway-cli" for e in entries)
    as_json = json.loads(run("resources", "--json").stdout)
    assert [r["uri"] for r in as_json["resources"]] == ["hello://motto"]


def test_read_gives_the_text_masked_and_audited(run, hello_home, audit_lines):
    result = run("read", "hello://motto")
    assert result.exit_code == 0
    assert "Pay with" in result.stdout and CARD not in result.stdout and "1111" in result.stdout
    entry = audit_lines()[-1]
    assert entry["uri"] == "hello://motto" and entry["outcome"] == "ok" and entry["transport"] == "cli"


def test_read_of_an_unknown_uri_says_what_is_served(run, hello_home):
    result = run("read", "hello://nothing")
    assert result.exit_code == 1
    assert "Unknown resource: hello://nothing" in result.output and "hello://motto" in result.output


def test_prompts_and_prompt_as_a_host_gets_them(run, hello_home, audit_lines):
    listed = run("prompts")
    assert listed.exit_code == 0 and listed.stdout.startswith("greet name: Greet someone warmly.")
    got = run("prompt", "greet", '{"name": "Ada"}')
    assert got.exit_code == 0 and "Ada" in got.stdout
    missing = run("prompt", "greet")
    assert missing.exit_code == 1 and "missing argument name" in missing.output
    unknown = run("prompt", "nope")
    assert unknown.exit_code == 1 and "Prompts: greet" in unknown.output
    assert [e.get("method") or e.get("prompt") for e in audit_lines()] == ["prompts/list", "greet"]
