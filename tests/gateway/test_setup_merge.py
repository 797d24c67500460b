"""`gateway setup --write` changes the gateway's entry and nothing else: comments, other servers, layout kept."""

from __future__ import annotations

import json
import tomllib

import json5
import pytest
from click.testing import CliRunner

from gateway.commands.cli import main
from gateway.commands.jsonc import JsoncError, set_member
from gateway.commands.setup import config_file

JSONC = """{
    // Servers for this machine; the gateway goes beside them.
    "servers": {
        "files": {
            "type": "stdio",
            "command": "files-server", /* the old one */
            "args": ["--root", "~/docs"],
        }, // trailing comma on purpose
    },
    "inputs": [
        {"id": "key", "type": "promptString", "password": true},
    ],
}
"""

JSON_HOST = """{
    "theme": "dark",
    "mcpServers": {
        "other": {
            "command": "x"
        }
    },
    "numStartups": 42
}
"""

CODEX = """# Codex, set up by hand
model = "o4"  # the model I like

[mcp_servers.files]
command = "files-server" # keep this comment
args = ["--root", "~/docs"]

# a closing remark
"""


@pytest.fixture
def run(gateway_home):
    runner = CliRunner()
    return lambda *args: runner.invoke(main, list(args), catch_exceptions=False)


def _only_inserted(before: str, after: str) -> str:
    """The text `after` adds to `before`, asserting that nothing of `before` was changed or moved."""
    prefix = 0
    while prefix < min(len(before), len(after)) and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(before), len(after)) - prefix and before[-1 - suffix] == after[-1 - suffix]:
        suffix += 1
    assert prefix + suffix == len(before), "some of the person's bytes were changed"
    return after[prefix: len(after) - suffix]


def _write(host, text, scope="user"):
    path = config_file(host, scope)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_vscode_jsonc_keeps_every_comment_and_trailing_comma(run):
    path = _write("vscode", JSONC)
    result = run("setup", "--host", "vscode", "--write")
    assert result.exit_code == 0, result.output
    after = path.read_text()
    added = _only_inserted(JSONC, after)
    assert '"gateway"' in added and "files" not in added
    data = json5.loads(after)
    assert data["servers"]["files"]["command"] == "files-server"
    assert data["servers"]["gateway"]["type"] == "stdio" and data["servers"]["gateway"]["args"][-1] == "serve"
    assert data["inputs"][0]["id"] == "key"
    # Again: the entry is already there, so not one byte changes.
    assert run("setup", "--host", "vscode", "--write").exit_code == 0
    assert path.read_text() == after


def test_vscode_says_which_file_and_offers_the_workspace(run, gateway_home, tmp_path, monkeypatch):
    printed = run("setup", "--host", "vscode").output
    assert str(config_file("vscode", "user")) in printed and "--scope workspace" in printed
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    assert run("setup", "--host", "vscode", "--scope", "workspace", "--write").exit_code == 0
    assert "gateway" in json.loads((folder / ".vscode/mcp.json").read_text())["servers"]
    assert run("setup", "--host", "cursor", "--scope", "workspace").exit_code == 2


@pytest.mark.parametrize("host", ["claude-code", "claude-desktop", "cursor", "gemini"])
def test_json_hosts_keep_the_persons_layout_byte_for_byte(run, host):
    path = _write(host, JSON_HOST)
    assert run("setup", "--host", host, "--write").exit_code == 0
    after = path.read_text()
    added = _only_inserted(JSON_HOST, after)
    assert '"gateway"' in added and "other" not in added
    data = json.loads(after)  # still strict JSON: these hosts read it so
    assert data["mcpServers"]["other"] == {"command": "x"} and data["numStartups"] == 42
    assert data["mcpServers"]["gateway"]["args"][-1] == "serve"


def test_an_older_gateway_entry_is_replaced_in_place(run):
    old = '{\n  "mcpServers": {\n    "gateway": {"command": "/old/gateway"},\n    "other": {"command": "x"}\n  }\n}\n'
    path = _write("cursor", old)
    assert run("setup", "--host", "cursor", "--write").exit_code == 0
    after = path.read_text()
    assert "/old/gateway" not in after
    assert after.startswith('{\n  "mcpServers": {\n    "gateway": {')
    assert after.endswith('},\n    "other": {"command": "x"}\n  }\n}\n')


def test_codex_toml_keeps_comments_and_other_servers(run):
    path = _write("codex", CODEX)
    assert run("setup", "--host", "codex", "--write").exit_code == 0
    after = path.read_text()
    for line in CODEX.splitlines():
        assert line in after, line
    data = tomllib.loads(after)
    assert data["model"] == "o4" and data["mcp_servers"]["files"]["command"] == "files-server"
    assert data["mcp_servers"]["gateway"]["args"][-1] == "serve"


@pytest.mark.parametrize("broken", ["{\n  // unfinished\n  \"servers\": {\n", "[1, 2]", '{"servers": 3}'])
def test_a_file_that_cannot_be_merged_safely_is_left_and_the_entry_printed(run, broken):
    path = _write("vscode", broken)
    result = run("setup", "--host", "vscode", "--write")
    assert result.exit_code == 1 and "nothing was changed" in result.output
    assert '"gateway"' in result.output  # the entry to paste by hand
    assert path.read_text() == broken


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("{}", ["a", "b"]),
        ('{"a": {"x": [1, {"y": "}"}]}, /* } */ "z": "//"}', ["a", "b"]),
        ("{'single': 'quotes', unquoted: 1,}", ["servers", "g"]),
        ('{\n\t"tabs": {\n\t\t"k": 1\n\t}\n}', ["tabs", "n"]),
    ],
)
def test_set_member_changes_only_the_member(text, path):
    edited = set_member(text, path, {"command": "g"})
    data = json5.loads(edited)
    node = data
    for key in path:
        node = node[key]
    assert node == {"command": "g"}
    assert _only_inserted(text, edited)


def test_set_member_refuses_what_it_cannot_read():
    with pytest.raises(JsoncError):
        set_member('{"a": /* open', ["a"], 1)
