"""Small transcripts in each agent's own format (tests/plugins/sessions/fixtures), put where the agents keep them.

The sessions tests import these names; the fixtures built on them are in conftest.py."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from gateway_sessions import store
from gateway_sessions.importing import import_agent

from gateway.testing import folders_of

FIXTURES = Path(__file__).parent / "fixtures"

PEARS = "5f0c1d2e-1111-4a5b-9c8d-0123456789ab"  # Claude Code, summary title, a tool call and its result
NOTES = "7a8b9c0d-2222-4e5f-8a9b-abcdef012345"  # Claude Code, custom title, a pasted key and card number
SUBAGENT = f"{NOTES}:agent-a1b2c3d"
VAULT = "9e8d7c6b-3333-4a1b-8c2d-fedcba987654"  # Claude Code, in the closed project; canary word below
CANARY = "zanzibarcanary"
PLUMS = "0199a1b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b"  # Codex

CLOSED_VAULT = [
    {"id": "vault", "name": "Vault", "ai": False, "paths": ["/home/ada/src/vault"]},
    {"id": "orchard", "name": "Orchard", "ai": True, "paths": ["/home/ada/src/orchard"]},
]


def place_fixtures(home: Path) -> None:
    """Copy the fixtures where each agent keeps its transcripts by default."""
    shutil.copytree(FIXTURES / "claude-code", home / ".claude" / "projects")
    shutil.copytree(FIXTURES / "codex", home / ".codex" / "sessions")
    shutil.copytree(FIXTURES / "gemini", home / ".gemini")
    make_opencode_db(home / ".local" / "share" / "opencode" / "opencode.db")


def make_opencode_db(path: Path) -> Path:
    """opencode keeps SQLite: build it from the hand-written SQL of the fixture."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.executescript((FIXTURES / "opencode" / "opencode.sql").read_text())
    connection.commit()
    connection.close()
    return path


def store_path(home: Path) -> Path:
    return store.default_path(folders_of(home).for_plugin("sessions").data)


def import_all(home: Path, agents=("claude-code", "codex")) -> list:
    connection = store.open_for_writing(store_path(home))
    try:
        return [import_agent(connection, agent) for agent in agents]
    finally:
        connection.close()
