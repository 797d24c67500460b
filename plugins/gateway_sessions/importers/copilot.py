"""GitHub Copilot CLI (0.0.3xx and later): one folder a session, ``~/.copilot/session-state/<session id>/`` holding
``events.jsonl`` (older releases: ``session-state/<session id>.jsonl``), appended to, an event a line.

Each event: ``type``, ``id``, ``timestamp`` (ISO), ``parentId`` and ``data``. Read here: ``session.start`` (``sessionId``,
``startTime``, ``context.cwd``), ``user.message`` and ``assistant.message`` (``content``; an assistant's
``toolRequests``, each ``toolCallId``, ``toolName``, ``arguments``), ``tool.execution_start`` (a call not already
requested) and ``tool.execution_complete`` (``toolCallId``, ``success``, ``result``). Other events (model changes,
deltas, hooks, information) are passed over. ``COPILOT_HOME`` moves the folder, as it does for the CLI.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from gateway_sessions.importers import Parsed, json_lines, open_text
from gateway_sessions.model import Message, Session, iso, title_of

AGENT = "copilot"
EXPECTED = "its session-state folder (~/.copilot/session-state), one session's folder, or one events.jsonl"


def default_root() -> Path:
    base = os.environ.get("COPILOT_HOME")
    return (Path(base) if base else Path.home() / ".copilot") / "session-state"


def sources(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    if (root / "events.jsonl").is_file():
        return [root / "events.jsonl"]
    return sorted(root.glob("*/events.jsonl")) + sorted(root.glob("*.jsonl"))


_ROLES = {
    "user.message": "user",
    "assistant.message": "assistant",
    "tool.execution_start": "assistant",
    "tool.execution_complete": "tool",
}


def _result(data: dict[str, Any]) -> str:
    result = data.get("result")
    if isinstance(result, dict):
        result = result.get("content", result.get("detailedContent", result))
    if result is None:
        result = data.get("error")
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def read(path: Path) -> Parsed:
    parsed = Parsed()
    session_id = path.parent.name if path.name == "events.jsonl" else path.stem
    session = Session(agent=AGENT, id=session_id)
    requested: set[str] = set()
    with open_text(path) as lines:
        for event in json_lines(lines, parsed):
            kind = event.get("type")
            data = event.get("data") if isinstance(event.get("data"), dict) else {}
            key = str(event.get("id") or "")
            when = iso(event.get("timestamp"))
            if when:
                session.created_at = min(filter(None, (session.created_at, when)))
                session.updated_at = max(session.updated_at, when)
            if kind == "session.start":
                session.id = str(data.get("sessionId") or session.id)
                context = data.get("context") if isinstance(data.get("context"), dict) else {}
                if isinstance(context.get("cwd"), str):
                    session.cwd = context["cwd"]
                continue
            if kind not in _ROLES:
                continue
            if not key:
                parsed.broken_lines += 1
                continue
            blocks: list[dict[str, Any]] = []
            content = data.get("content") if kind in ("user.message", "assistant.message") else None
            if isinstance(content, str) and content.strip():
                blocks.append({"type": "text", "text": content})
            requests = data.get("toolRequests") if kind == "assistant.message" else None
            if kind == "tool.execution_start":
                requests = [data]
            for request in requests if isinstance(requests, list) else []:
                if not isinstance(request, dict):
                    continue
                call_id = str(request.get("toolCallId") or "")
                if call_id in requested:
                    continue
                requested.add(call_id)
                blocks.append({"type": "tool_use", "id": call_id, "name": str(request.get("toolName") or ""),
                               "input": request.get("arguments")})
            if kind == "tool.execution_complete":
                blocks.append({"type": "tool_result", "tool_use_id": str(data.get("toolCallId") or ""),
                               "content": _result(data), "is_error": data.get("success") is False})
            if blocks:
                role = _ROLES[kind]
                session.messages.append(Message(key=key, role=role, blocks=blocks, timestamp=when))
    if not session.messages:
        return parsed
    session.created_at = session.created_at or iso(path.stat().st_mtime)
    session.updated_at = session.updated_at or session.created_at
    session.title = title_of(session)
    parsed.sessions.append(session)
    return parsed
