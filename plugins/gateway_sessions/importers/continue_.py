"""Continue (the VS Code and JetBrains extension, and its `cn` command line, 1.x): one JSON file a session,
``~/.continue/sessions/<session id>.json`` (``CONTINUE_GLOBAL_DIR`` moves ``~/.continue``), written whole at each turn,
with ``sessions.json`` beside it listing each session's ``dateCreated``.

A session file (``PersistedSessionInfo``): ``sessionId``, ``title``, ``workspaceDirectory`` (a ``file://`` address)
and ``history``, a list of items each holding a ``message`` (``role``: user, assistant, thinking, tool, system;
``content``, a string or parts ``{type: text, text}``; an assistant's ``toolCalls``, each ``{id, function: {name,
arguments}}`` with the arguments as JSON text; a tool message's ``toolCallId``). Keys are the items' places in the
history. The messages carry no times: a session is dated by ``sessions.json`` (else by its file), and its messages
by the session.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from gateway_sessions.importers import Parsed, one_line
from gateway_sessions.importers.cline import elements_from
from gateway_sessions.model import Message, Session, iso, title_of

AGENT = "continue"
EXPECTED = "its sessions folder (~/.continue/sessions) or one session's .json file"


def default_root() -> Path:
    base = os.environ.get("CONTINUE_GLOBAL_DIR")
    return (Path(base) if base else Path.home() / ".continue") / "sessions"


def sources(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(path for path in root.glob("*.json") if path.name != "sessions.json")


def _folder(uri: Any) -> str:
    if not isinstance(uri, str):
        return ""
    parts = urlsplit(uri)
    return unquote(parts.path) if parts.scheme == "file" else uri if uri.startswith("/") else ""


def _created(path: Path, session_id: str) -> str:
    try:
        index = json.loads((path.parent / "sessions.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    for item in index if isinstance(index, list) else []:
        if isinstance(item, dict) and item.get("sessionId") == session_id:
            stamp = item.get("dateCreated")
            return iso(int(stamp)) if isinstance(stamp, str) and stamp.isdigit() else iso(stamp)
    return ""


def _text_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    parts = content if isinstance(content, list) else []
    return [
        {"type": "text", "text": part["text"]}
        for part in parts
        if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
    ]


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    role = message.get("role")
    content = message.get("content")
    if role == "thinking":
        return [{"type": "thinking", "thinking": content}] if isinstance(content, str) and content else []
    if role == "tool":
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        return [{"type": "tool_result", "tool_use_id": str(message.get("toolCallId") or ""), "content": text}]
    blocks = _text_parts(content)
    for call in message.get("toolCalls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            continue
        raw = function.get("arguments")
        try:
            arguments = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            arguments = raw
        blocks.append({"type": "tool_use", "id": str(call.get("id") or ""), "name": str(function.get("name") or ""),
                       "input": arguments})
    return blocks


def _cut_short(text: str, parsed: Parsed) -> dict[str, Any] | None:
    """A session file cut short by a crash: its id, title and folder if they came before the cut, and the history's
    items before it (the last, cut one counted as broken)."""
    parsed.broken_lines += 1
    start = text.find('"history"')
    bracket = text.find("[", start) if start >= 0 else -1
    if bracket < 0:
        return None
    found: dict[str, Any] = {"history": [e for e in elements_from(text, bracket + 1, Parsed()) if e is not None]}
    for key in ("sessionId", "title", "workspaceDirectory"):
        match = re.search(rf'"{key}"\s*:\s*("(?:[^"\\]|\\.)*")', text)
        if match:
            found[key] = json.loads(match.group(1))
    return found


def read(path: Path) -> Parsed:
    parsed = Parsed()
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        data = json.loads(text)
    except ValueError:
        data = _cut_short(text, parsed)
    if not isinstance(data, dict):
        return parsed
    session_id = str(data.get("sessionId") or path.stem)
    when = _created(path, session_id) or iso(path.stat().st_mtime)
    messages: list[Message] = []
    for number, item in enumerate(data.get("history") or []):
        message = item.get("message") if isinstance(item, dict) else None
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            parsed.broken_lines += 1
            continue
        blocks = _blocks(message)
        if blocks and message["role"] != "system":
            role = {"thinking": "assistant"}.get(message["role"], message["role"])
            messages.append(Message(key=str(number), role=role, blocks=blocks, timestamp=when))
    if not messages:
        return parsed
    session = Session(
        agent=AGENT,
        id=session_id,
        cwd=_folder(data.get("workspaceDirectory")),
        created_at=when,
        updated_at=max(when, iso(path.stat().st_mtime)),
        messages=messages,
    )
    title = data.get("title")
    session.given_title = one_line(title) if isinstance(title, str) and title != "New Session" else ""
    session.title = title_of(session)
    parsed.sessions.append(session)
    return parsed
