"""The fixtures of Cursor, Cline (and Roo Code) and Aider, put where those agents keep their files in a test home."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"

CURSOR_CHAT = "3c1e7d2a-4b5f-4c6d-9e8f-0a1b2c3d4e5f"  # Cursor, in the orchard: reads and edits a file
CURSOR_VAULT = "8d7c6b5a-9e8f-4a1b-8c2d-1f2e3d4c5b6a"  # Cursor, in the vault (by its workspace); canary below
CURSOR_CANARY = "sloecanary"
CLINE_TASK = "1772535600000"  # Cline, orchard: XML and native tool calls, a broken element, a cut-off end
ROO_TASK = "0199b2c3-roo0-7aaa-8bbb-0c1d2e3f4a5b"  # Roo Code, in the vault
AIDER_FILE = ".aider.chat.history.md"


def _database(path: Path, script: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.executescript(script.read_text())
    connection.commit()
    connection.close()
    return path


def place_cursor(home: Path) -> Path:
    """Cursor's global database and one workspace's (the vault's), as Cursor lays them out on Linux."""
    user = home / ".config" / "Cursor" / "User"
    _database(user / "workspaceStorage" / "a1b2c3" / "state.vscdb", FIXTURES / "cursor" / "workspace-vault.sql")
    shutil.copy(FIXTURES / "cursor" / "workspace-vault.json", user / "workspaceStorage" / "a1b2c3" / "workspace.json")
    return _database(user / "globalStorage" / "state.vscdb", FIXTURES / "cursor" / "global.sql")


def place_cline(home: Path) -> Path:
    """Cline's and Roo Code's task folders under VS Code's settings folder."""
    shutil.copytree(FIXTURES / "cline", home / ".config", dirs_exist_ok=True)
    return home / ".config"


def place_aider(home: Path) -> Path:
    """An Aider history at the root of a repository; returns the folder of repositories (the setting's value)."""
    repository = home / "src" / "orchard"
    repository.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / "aider" / "orchard" / AIDER_FILE, repository / AIDER_FILE)
    return home / "src"


# The Claude Code and Codex fixtures too (for served tests that cannot import the sessions tests' conftest).
CLAUDE_VAULT = "9e8d7c6b-3333-4a1b-8c2d-fedcba987654"  # in the closed project
CLAUDE_CANARY = "zanzibarcanary"
PROJECTS = [
    {"id": "vault", "name": "Vault", "ai": False, "paths": ["/home/ada/src/vault"]},
    {"id": "orchard", "name": "Orchard", "ai": True, "paths": ["/home/ada/src/orchard"]},
]


def place_claude_code_and_codex(home: Path) -> None:
    shutil.copytree(FIXTURES / "claude-code", home / ".claude" / "projects")
    shutil.copytree(FIXTURES / "codex", home / ".codex" / "sessions")


COPILOT_SESSION = "6b1f2c3d-7777-4e8f-9a0b-1c2d3e4f5a6b"
QWEN_SESSION = "c0ffee00-8888-4a1b-9c2d-3e4f5a6b7c8d"
CONTINUE_SESSION = "5e55ion0-9999-4c1d-8e2f-3a4b5c6d7e8f"
CONTINUE_CUT = "cut00000-aaaa-4bbb-8ccc-dddddddddddd"
AMP_THREAD = "T-019b9d03-62e3-772f-9780-3e637f90eaec"
GOOSE_SESSION = "20260307_1"


def place_copilot(home: Path) -> Path:
    shutil.copytree(FIXTURES / "copilot", home / ".copilot")
    return home / ".copilot" / "session-state"


def place_qwen(home: Path) -> Path:
    shutil.copytree(FIXTURES / "qwen", home / ".qwen")
    return home / ".qwen"


def place_continue(home: Path) -> Path:
    shutil.copytree(FIXTURES / "continue", home / ".continue")
    return home / ".continue" / "sessions"


def place_amp(home: Path) -> Path:
    shutil.copytree(FIXTURES / "amp", home / ".local" / "share" / "amp")
    return home / ".local" / "share" / "amp" / "threads"


def place_goose(home: Path) -> Path:
    return _database(home / ".local" / "share" / "goose" / "sessions" / "sessions.db", FIXTURES / "goose" / "sessions.sql")
