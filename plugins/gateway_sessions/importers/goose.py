"""Goose (1.10 and later): its SQLite database, ``~/.local/share/goose/sessions/sessions.db`` (``$XDG_DATA_HOME``),
opened read-only; older releases' one JSONL file a session beside it is imported by Goose itself into this database.

Tables (schema version 9): ``sessions`` (``id``, ``name`` or ``description``, ``working_dir``, ``created_at``,
``updated_at``, ``session_type``) and ``messages`` (``id``, ``message_id``, ``session_id``, ``role``,
``content_json``, ``created_timestamp`` in epoch seconds). A message's content is a list of parts tagged by
``type``: ``text``, ``thinking``, ``toolRequest`` (``id``, ``toolCall.value``: ``name`` and ``arguments``) and
``toolResponse`` (``id``, ``toolResult.value``: the tool's contents). A message whose content is not JSON is counted
as a broken line and passed over.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from gateway_sessions.importers import Parsed, database_signature, one_line
from gateway_sessions.model import Message, Session, iso, title_of

AGENT = "goose"
EXPECTED = "its database (~/.local/share/goose/sessions/sessions.db) or the folder holding it"


def default_root() -> Path:
    base = os.environ.get("XDG_DATA_HOME")
    return (Path(base) if base else Path.home() / ".local" / "share") / "goose" / "sessions" / "sessions.db"


def sources(root: Path) -> list[Path]:
    if root.is_dir():
        root = root / "sessions.db"
    return [root] if root.is_file() else []


signature = database_signature  # the database and its write-ahead log together


def _result_text(result: Any) -> str:
    value = result.get("value") if isinstance(result, dict) else result
    if isinstance(value, list):
        return "\n".join(str(item.get("text", "")) for item in value if isinstance(item, dict))
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _blocks(content: Any) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str) and part["text"].strip():
            blocks.append({"type": "text", "text": part["text"]})
        elif kind == "thinking" and isinstance(part.get("thinking"), str):
            blocks.append({"type": "thinking", "thinking": part["thinking"]})
        elif kind == "toolRequest":
            call = part.get("toolCall")
            value = call.get("value") if isinstance(call, dict) else None
            if isinstance(value, dict):
                blocks.append({"type": "tool_use", "id": str(part.get("id") or ""), "name": str(value.get("name") or ""),
                               "input": value.get("arguments")})
        elif kind == "toolResponse":
            result = part.get("toolResult")
            blocks.append({"type": "tool_result", "tool_use_id": str(part.get("id") or ""),
                           "content": _result_text(result),
                           "is_error": isinstance(result, dict) and result.get("status") == "error"})
    return blocks


def read(path: Path) -> Parsed:
    parsed = Parsed()
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        connection.row_factory = sqlite3.Row
        messages: dict[str, list[Message]] = {}
        for row in connection.execute(
            "SELECT id, message_id, session_id, role, content_json, created_timestamp FROM messages ORDER BY id"
        ):
            try:
                content = json.loads(row["content_json"])
            except (TypeError, ValueError):
                parsed.broken_lines += 1
                continue
            blocks = _blocks(content)
            if blocks:
                messages.setdefault(row["session_id"], []).append(
                    Message(key=str(row["message_id"] or row["id"]), role=str(row["role"]), blocks=blocks,
                            timestamp=iso(row["created_timestamp"]))
                )
        columns = {column[1] for column in connection.execute("PRAGMA table_info(sessions)")}
        name = "CASE WHEN name != '' THEN name ELSE description END" if "name" in columns else "description"
        for row in connection.execute(
            f"SELECT id, {name} AS title, working_dir, created_at, updated_at FROM sessions"
        ):
            found = messages.get(row["id"])
            if not found:
                continue
            session = Session(
                agent=AGENT,
                id=str(row["id"]),
                cwd=str(row["working_dir"] or ""),
                created_at=iso(row["created_at"]) or found[0].timestamp,
                updated_at=iso(row["updated_at"]) or found[-1].timestamp,
                messages=found,
            )
            session.given_title = one_line(row["title"] or "")
            session.title = title_of(session)
            parsed.sessions.append(session)
    finally:
        connection.close()
    return parsed
