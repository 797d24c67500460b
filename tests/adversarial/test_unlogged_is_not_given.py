"""What cannot be audited is not given; every method that gives writes a line; every answer is masked.

Each attack runs through a real `gateway serve` and the SDK's own client, with a plugin installed the way
pip would install it (a dist-info on PYTHONPATH), so discovery, the gate, the masks and the log are the real
ones.
"""

from __future__ import annotations

import os
import stat
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

from gateway.api.context import home_environment
from gateway.testing import folders_of, installed_plugin, read_audit, serve_client, write_config
from tests.forkserver import gateway_command

# Invented secrets, each in a form the context-free masks know (valid check digits where they have one).
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
IBAN = "FR7630006000011234567890189"
CANARY = "quokka-marmalade"

LEAKY = f'''
from gateway import Answer, Prompt, Resource, ResourcePage, ResourceTemplate, Tool, hookimpl

def give(ctx) -> Answer:
    """Give a note holding a key."""
    return Answer(text="{CANARY} key {AWS_KEY}", data={{"note": "{CANARY} iban {IBAN}"}})

def change(ctx, word: str) -> str:
    """Write a word into the plugin's own folder."""
    folder = ctx.folders.data
    (folder / "words.txt").write_text(word)
    return "written"

def listing(ctx, cursor, limit):
    return ResourcePage([{{"uri": "leaky://notes/1", "name": "note-1", "title": "token {GITHUB_TOKEN}",
                          "description": "iban {IBAN}"}}])

def read_note(ctx, id):
    return "{CANARY} note " + id

@hookimpl
def register_tools(gateway):
    return [Tool.from_function(give, read_only=True), Tool.from_function(change)]

@hookimpl
def register_resources(gateway):
    return [Resource("leaky://about", "about", lambda ctx: "{CANARY} about")]

@hookimpl
def register_resource_templates(gateway):
    return [ResourceTemplate("leaky://notes/{{id}}", "note", read_note, description="key {AWS_KEY}",
                             listing=listing)]

@hookimpl
def register_prompts(gateway):
    return [Prompt("recall", lambda ctx: "{CANARY} recall", description="token {GITHUB_TOKEN}")]
'''

SECRETS = (AWS_KEY, GITHUB_TOKEN, IBAN, IBAN[-8:], AWS_KEY[4:])


@pytest.fixture
def leaky_home(gateway_home: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    write_config(gateway_home, {"gateway": {"plugins": ["leaky"]}})
    return gateway_home, installed_plugin(tmp_path / "site", "leaky", LEAKY)


async def _everything(client) -> list[tuple[str, object]]:
    """Every method that gives something, called once; each outcome kept (an exception counts as refused)."""
    outcomes: list[tuple[str, object]] = []

    async def attempt(name, call):
        try:
            outcomes.append((name, await call()))
        except Exception as error:  # the SDK raises MCPError for a JSON-RPC error
            outcomes.append((name, error))

    await attempt("tools/call give", lambda: client.call_tool("give", {}))
    await attempt("tools/call change", lambda: client.call_tool("change", {"word": "tulip"}))
    await attempt("resources/list", client.list_resources)
    await attempt("resources/templates/list", client.list_resource_templates)
    await attempt("resources/read", lambda: client.read_resource("leaky://about"))
    await attempt("resources/read template", lambda: client.read_resource("leaky://notes/7"))
    await attempt("prompts/list", client.list_prompts)
    await attempt("prompts/get", lambda: client.get_prompt("recall", {}))
    return outcomes


def _served(home: Path, env: dict[str, str]) -> list[tuple[str, object]]:
    async def session():
        async with serve_client(home, extra_env=env) as client:
            return await _everything(client)

    return anyio.run(session)


def test_every_method_that_gives_writes_one_line_and_masks_what_it_gives(leaky_home):
    home, env = leaky_home
    outcomes = _served(home, env)
    for name, outcome in outcomes:
        assert not isinstance(outcome, Exception), (name, outcome)
        dumped = outcome.model_dump_json()
        for secret in SECRETS:
            assert secret not in dumped, (name, secret)
    logged = read_audit(home)
    methods = [e.get("method") or e.get("tool") or e.get("uri") or e.get("prompt") for e in logged]
    assert methods == [
        "give", "change", "resources/list", "resources/templates/list", "leaky://about", "leaky://notes/7",
        "prompts/list", "recall",
    ]
    listing = next(e for e in logged if e.get("method") == "resources/list")
    assert "leaky://notes/1" in listing["given"] and "leaky://about" in listing["given"]
    # The log holds addresses and lengths, never the words given.
    # Every month's file the run wrote (one, or two when the run crossed the end of a month).
    files = sorted((folders_of(home).state / "audit").glob("*.jsonl"))
    assert files and not any(CANARY in path.read_text() for path in files)


def _month_file(home: Path) -> Path:
    return folders_of(home).state / "audit" / f"{datetime.now(UTC):%Y-%m}.jsonl"


def _month_files(home: Path) -> list[Path]:
    """This month's file and the next's: a run that crosses the end of a month writes its lines in the next."""
    now = datetime.now(UTC)
    following = datetime(now.year + now.month // 12, now.month % 12 + 1, 1, tzinfo=UTC)
    return [folders_of(home).state / "audit" / f"{moment:%Y-%m}.jsonl" for moment in (now, following)]


def _break_by_plain_file(home: Path) -> None:
    audit = folders_of(home).state / "audit"
    audit.parent.mkdir(parents=True, exist_ok=True)
    audit.write_text("not a folder")


def _break_by_folder(home: Path) -> None:
    for path in _month_files(home):
        path.mkdir(parents=True)


def _break_by_link(home: Path) -> None:
    target = home / "elsewhere.jsonl"
    target.write_text("")
    for path in _month_files(home):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)


@pytest.mark.parametrize("breakage", [_break_by_plain_file, _break_by_folder, _break_by_link])
def test_nothing_is_given_while_the_audit_log_cannot_be_written(leaky_home, breakage):
    home, env = leaky_home
    breakage(home)
    outcomes = _served(home, env)
    assert len(outcomes) == 8
    for name, outcome in outcomes:
        text = str(outcome) if isinstance(outcome, Exception) else outcome.model_dump_json()
        assert CANARY not in text, name
        if name.startswith("tools/call"):
            assert outcome.is_error and "audit log" in outcome.content[0].text and "gateway doctor" in text
        else:
            assert isinstance(outcome, Exception) and "audit log" in str(outcome), name
    # The writing tool was never run: its change needs a line first.
    assert not (folders_of(home).data / "plugins" / "leaky" / "words.txt").exists()
    if breakage is _break_by_link:
        assert (home / "elsewhere.jsonl").read_text() == ""  # the link was not followed

    result = subprocess.run(
        gateway_command("doctor"), capture_output=True, text=True, timeout=60,
        env={"PATH": os.environ.get("PATH", ""), **home_environment(home), **env},
    )
    assert result.returncode != 0 and "audit log" in result.stdout


def test_a_log_file_removed_while_serving_is_made_again(leaky_home):
    home, env = leaky_home

    async def session():
        async with serve_client(home, extra_env=env) as client:
            assert not (await client.call_tool("give", {})).is_error
            _month_file(home).unlink()
            second = await client.call_tool("give", {})
            assert not second.is_error

    anyio.run(session)
    assert [e["tool"] for e in read_audit(home)] == ["give"]  # the second line, in the file made again


def test_plugin_folders_and_files_are_the_persons_alone(leaky_home):
    home, env = leaky_home

    async def session():
        async with serve_client(home, extra_env=env) as client:
            assert not (await client.call_tool("change", {"word": "tulip"})).is_error

    anyio.run(session)
    folders = folders_of(home)
    for base in (folders.data, folders.state, folders.cache):
        for folder in (base, base / "plugins", base / "plugins" / "leaky"):
            assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    written = folders.data / "plugins" / "leaky" / "words.txt"
    # The plugin wrote with a plain write_text: the server's umask made it 0600 all the same.
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
