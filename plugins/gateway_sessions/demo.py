"""For `gateway demo`: three invented Claude Code sessions, imported like real ones."""

from __future__ import annotations

import json
from pathlib import Path

from gateway import PluginHost

# (session id, working folder under the demo home, title, what the person and the agent said)
SESSIONS = [
    ("d1e1a000-0000-4000-8000-000000000001", "projects/garden", "Compost rota for the community garden",
     ["Draft a compost rota for the garden volunteers, Ada and Bo (bo@garden.example.org).",
      "Here is a rota: Ada turns the compost on Mondays, Bo on Thursdays; the sieve is in shed 2."]),
    ("d1e1a000-0000-4000-8000-000000000002", "projects/lawsuit", "Letter to the neighbour's lawyer",
     ["Help me answer the letter from lee@law.example.net about the fence.",
      "Here is a calm reply that sticks to the dates and the survey."]),
    ("d1e1a000-0000-4000-8000-000000000003", "notes", "Sign-in trouble",
     ["My login code is 482913 and the reset link https://example.com/reset?token=abc123def456 fails.",
      "Ask the site for a new reset link; codes like that expire after a few minutes."]),
]


def _line(session_id: str, cwd: str, index: int, role: str, text: str) -> str:
    stamp = f"2026-11-2{index // 2 + 1}T09:{index:02d}:00.000Z"
    message: dict = {"role": role, "content": text if role == "user" else [{"type": "text", "text": text}]}
    if role == "assistant":
        message["id"] = f"msg_demo_{session_id[-4:]}_{index}"
    return json.dumps({
        "type": role, "uuid": f"{session_id[:-4]}{index:04d}", "parentUuid": None, "sessionId": session_id,
        "cwd": cwd, "timestamp": stamp, "message": message,
    })


def write_transcripts(home: Path) -> Path:
    """Claude Code's layout: one JSONL per session in a folder named after the working folder."""
    root = home / ".claude" / "projects"
    for session_id, folder, title, turns in SESSIONS:
        cwd = str(home / folder)
        target = root / cwd.replace("/", "-")
        target.mkdir(parents=True, exist_ok=True)
        lines = [_line(session_id, cwd, i, "user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(turns)]
        lines.append(json.dumps({"type": "custom-title", "customTitle": title, "sessionId": session_id}))
        (target / f"{session_id}.jsonl").write_text("\n".join(lines) + "\n")
    return root


def make_demo(host: PluginHost) -> list[tuple[str, dict]]:
    from gateway_sessions import store
    from gateway_sessions.importing import import_agent

    root = write_transcripts(Path.home())
    connection = store.open_for_writing(host.path_setting("store", store.default_path(host.folders.data)))
    try:
        import_agent(connection, "claude-code", root)
    finally:
        connection.close()
    return [
        ("rousseau_list_sessions", {"limit": 5}),
        ("rousseau_search_sessions", {"query": "compost OR fence OR login"}),
        ("rousseau_read_session", {"id": SESSIONS[0][0]}),
        ("rousseau_read_session", {"id": SESSIONS[1][0]}),
        ("rousseau_read_session", {"id": SESSIONS[2][0]}),
    ]
