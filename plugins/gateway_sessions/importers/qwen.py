"""Qwen Code (0.1 and later, a fork of Gemini CLI with its own recorder): one JSONL file a session,
``~/.qwen/projects/<folder>/chats/<session id>.jsonl`` (``~/.qwen/tmp/<project hash>/chats/`` in the releases
before the per-folder layout), appended to, a record a line.

Each record (``ChatRecord`` in its ``chatRecordingService``): ``uuid``, ``parentUuid``, ``sessionId``, ``timestamp``
(ISO), ``type`` (``user``, ``assistant``, ``tool_result``, ``system``), ``cwd``, and ``message``, the model's own
content: ``role`` and ``parts``, each a ``text`` (``thought: true`` for reasoning), a ``functionCall``
(``id``, ``name``, ``args``) or a ``functionResponse`` (``id``, ``name``, ``response``). ``system`` records
(compression, titles) carry no message of the conversation and are passed over. Keys are the records' ``uuid``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gateway_sessions.importers import Parsed, json_lines, open_text
from gateway_sessions.model import Message, Session, iso, title_of

AGENT = "qwen"
EXPECTED = "its folder (~/.qwen), one project's chats folder in it, or one .jsonl session"


def default_root() -> Path:
    return Path.home() / ".qwen"


def sources(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    if root.name == "chats":
        return sorted(root.glob("*.jsonl"))
    return sorted(root.glob("projects/*/chats/*.jsonl")) + sorted(root.glob("tmp/*/chats/*.jsonl"))


def _blocks(parts: Any) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            if part.get("thought"):
                blocks.append({"type": "thinking", "thinking": part["text"]})
            elif part["text"].strip():
                blocks.append({"type": "text", "text": part["text"]})
        call = part.get("functionCall")
        if isinstance(call, dict):
            blocks.append({"type": "tool_use", "id": str(call.get("id") or ""), "name": str(call.get("name") or ""),
                           "input": call.get("args")})
        response = part.get("functionResponse")
        if isinstance(response, dict):
            output = response.get("response")
            if isinstance(output, dict) and set(output) <= {"output", "error"}:
                output = output.get("output", output.get("error"))
            blocks.append({"type": "tool_result", "tool_use_id": str(response.get("id") or ""),
                           "content": output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)})
    return blocks


def read(path: Path) -> Parsed:
    parsed = Parsed()
    sessions: dict[str, Session] = {}
    with open_text(path) as lines:
        for record in json_lines(lines, parsed):
            kind = record.get("type")
            if kind not in ("user", "assistant", "tool_result"):
                continue
            message = record.get("message")
            key = record.get("uuid")
            if not isinstance(message, dict) or not isinstance(key, str):
                parsed.broken_lines += 1
                continue
            session_id = str(record.get("sessionId") or path.stem)
            session = sessions.get(session_id)
            when = iso(record.get("timestamp"))
            if session is None:
                session = sessions[session_id] = Session(agent=AGENT, id=session_id, created_at=when)
            cwd = record.get("cwd")
            if isinstance(cwd, str) and cwd:
                session.cwd = session.cwd or cwd
                session.cwds.add(cwd)
            if when:
                session.created_at = min(filter(None, (session.created_at, when)))
                session.updated_at = max(session.updated_at, when)
            role = {"user": "user", "assistant": "assistant", "tool_result": "tool"}[kind]
            blocks = _blocks(message.get("parts"))
            if blocks:
                session.messages.append(Message(key=key, role=role, blocks=blocks, timestamp=when))
    for session in sessions.values():
        if not session.messages:
            continue
        session.created_at = session.created_at or iso(path.stat().st_mtime)
        session.updated_at = session.updated_at or session.created_at
        session.title = title_of(session)
        parsed.sessions.append(session)
    return parsed
