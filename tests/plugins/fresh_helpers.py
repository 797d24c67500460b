"""Transcripts written as Claude Code writes them, for the freshness tests."""

from __future__ import annotations

import json
from pathlib import Path


def claude_line(session_id: str, n: int, text: str, cwd: str, role: str = "user") -> dict:
    return {
        "type": role,
        "uuid": f"{session_id}-{n}",
        "sessionId": session_id,
        "cwd": cwd,
        "timestamp": f"2026-03-02T{9 + n // 3600 % 10:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
        "message": {"role": role, "content": text, **({"id": f"msg-{session_id}-{n}"} if role == "assistant" else {})},
    }


def claude_session(
    home: Path, session_id: str, texts: list[str], cwd: Path, project: str = "-home-ada-src", append: bool = False,
    first: int = 1,
) -> Path:
    """Write (or append to) a Claude Code transcript under `home`'s ~/.claude/projects."""
    path = home / ".claude" / "projects" / project / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        claude_line(session_id, first + i, text, str(cwd), "user" if (first + i) % 2 else "assistant")
        for i, text in enumerate(texts)
    ]
    with path.open("a" if append else "w") as handle:
        handle.write("".join(json.dumps(line) + "\n" for line in lines))
    return path


def open_projects(home: Path) -> list[dict]:
    (home / "src" / "orchard").mkdir(parents=True, exist_ok=True)
    (home / "src" / "vault").mkdir(parents=True, exist_ok=True)
    return [
        {"id": "orchard", "name": "Orchard", "ai": True, "paths": [str(home / "src" / "orchard")]},
        {"id": "vault", "name": "Vault", "ai": False, "paths": [str(home / "src" / "vault")]},
    ]
