"""Every TOML and shell block of every README and guide works as written: TOML parses, a config block is one the
gateway loads with no unknown key and every account entry valid, a manifest block is one the gate reads, and each
`gateway ...` command a shell block shows exists (its `--help` answers)."""

from __future__ import annotations

import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from gateway.commands.cli import main
from gateway.gate.access import Manifest
from gateway.testing import write_config

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted([ROOT / "README.md", *ROOT.glob("plugins/*/README.md"), *ROOT.glob("docs/*.md"),
                    *ROOT.glob("contrib/*/README.md"), *ROOT.glob("contrib/README.md")])
_BLOCK = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _blocks(kind: str) -> list[tuple[str, str]]:
    found = []
    for document in DOCUMENTS:
        for number, match in enumerate(_BLOCK.finditer(document.read_text(encoding="utf-8"))):
            if match.group(1) in ((kind,) if kind != "sh" else ("sh", "bash", "shell", "console")):
                found.append((f"{document.relative_to(ROOT)}#{kind}{number}", match.group(2)))
    return found


TOML = _blocks("toml")
SHELL = _blocks("sh")


def test_the_documents_have_blocks_to_check():
    assert len(TOML) >= 5 and SHELL


@pytest.mark.parametrize(("where", "text"), TOML, ids=[where for where, _ in TOML])
def test_every_toml_block_parses_and_loads(where, text, gateway_home):
    data = tomllib.loads(text)  # a block that is not valid TOML fails here, naming itself
    if isinstance(data.get("project"), list):
        Manifest.from_dict(data, source=where)
        return
    if not ({"gateway", "plugins", "access"} & set(data)):
        return  # a fragment of another file (a host's config, a tool's own)
    write_config(gateway_home, data, projects=[])
    from gateway.engine.core import make_gateway_from_environment

    gateway = make_gateway_from_environment()
    snapshot = gateway.snapshot()
    assert snapshot.error is None, f"{where}: {snapshot.error}"
    problems = gateway.catalogue(snapshot).problems
    assert not problems, f"{where}: {problems}"
    mail = data.get("plugins", {}).get("mail", {})
    if "accounts" in mail:
        from maildirs.accounts import accounts_of

        accounts_of(mail["accounts"], lambda value: value)  # each account's keys, as the plugin checks them


def _commands(text: str) -> list[list[str]]:
    commands = []
    for line in text.splitlines():
        line = line.split(" #")[0].strip().removeprefix("$ ")
        for part in re.split(r"\s*(?:&&|\|\||;|\|)\s*", line):
            words = shlex.split(part) if part else []
            if words and words[0] in ("gateway", ".venv/bin/gateway"):
                commands.append(words[1:])
    return commands


@pytest.mark.parametrize(("where", "text"), SHELL, ids=[where for where, _ in SHELL])
def test_every_shell_block_is_valid_and_its_gateway_commands_exist(where, text, gateway_home):
    syntax = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True, timeout=30)
    assert syntax.returncode == 0, f"{where}: {syntax.stderr}"
    for words in _commands(text):
        path = []
        for word in words:
            if word.startswith("-") or not re.fullmatch(r"[a-z][a-z-]*", word):
                break
            path.append(word)
        result = CliRunner().invoke(main, [*path, "--help"])
        # Past the command's own words come its arguments: drop them until --help is taken.
        while result.exit_code != 0 and path:
            path.pop()
            result = CliRunner().invoke(main, [*path, "--help"])
        assert result.exit_code == 0 and path, f"{where}: `gateway {' '.join(words)}` is not a command"


@pytest.mark.parametrize("document", DOCUMENTS, ids=[str(d.relative_to(ROOT)) for d in DOCUMENTS])
def test_every_document_stands_alone(document):
    """No path outside the repository, no issue number: a reader of the clone has everything it points at."""
    text = document.read_text(encoding="utf-8")
    assert "../shared" not in text, f"{document.name} points outside the repository"
    assert not re.search(r"\b[Ii]ssues? #?\d+\b", text), f"{document.name} names an issue number"
