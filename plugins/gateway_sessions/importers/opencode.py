"""opencode (1.2 and later): its SQLite database, ``~/.local/share/opencode/opencode.db``, opened read-only.

Tables ``session`` (id, parent_id, directory, title, time_created, time_updated), ``message`` (id, session_id,
data: JSON with the role and times) and ``part`` (id, message_id, data: JSON, ``type`` text, tool, reasoning, file…).
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from gateway_sessions.importers import Parsed, database_signature, one_line
from gateway_sessions.model import Message, Session, iso, title_of

AGENT = "opencode"
# What PATH may be, for `gateway sessions import opencode PATH` (said when it is not).
EXPECTED = "its database (~/.local/share/opencode/opencode.db) or the folder holding it"


def default_root() -> Path:
    base = os.environ.get("XDG_DATA_HOME")
    return (Path(base) if base else Path.home() / ".local" / "share") / "opencode" / "opencode.db"


def sources(root: Path) -> list[Path]:
    if root.is_dir():
        root = root / "opencode.db"
    return [root] if root.is_file() else []


signature = database_signature  # the database and its write-ahead log together


def _json(raw: Any) -> dict[str, Any]:
    try:
        value = json.loads(raw) if isinstance(raw, str | bytes) else raw
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def read(path: Path) -> Parsed:
    parsed = Parsed()
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        connection.row_factory = sqlite3.Row
        parts: dict[str, list[dict[str, Any]]] = {}
        for row in connection.execute("SELECT message_id, data FROM part ORDER BY message_id, id"):
            data = _json(row["data"])
            if not data:
                parsed.broken_lines += 1
                continue
            block = _block(data)
            if block is not None:
                parts.setdefault(row["message_id"], []).extend(block)
        messages: dict[str, list[Message]] = {}
        cwds: dict[str, set[str]] = {}  # each message's working directory (its data's path.cwd)
        for row in connection.execute("SELECT id, session_id, data FROM message ORDER BY session_id, id"):
            data = _json(row["data"])
            if not data:
                parsed.broken_lines += 1
                continue
            where = data.get("path")
            if isinstance(where, dict) and isinstance(where.get("cwd"), str) and where["cwd"]:
                cwds.setdefault(row["session_id"], set()).add(where["cwd"])
            created = (
                iso((data.get("time") or {}).get("created")) if isinstance(data.get("time"), dict) else ""
            )
            messages.setdefault(row["session_id"], []).append(
                Message(
                    key=row["id"],
                    role=str(data.get("role") or "assistant"),
                    blocks=parts.get(row["id"], []),
                    timestamp=created,
                )
            )
        for row in connection.execute(
            "SELECT id, parent_id, directory, title, time_created, time_updated FROM session ORDER BY id"
        ):
            session = Session(
                agent=AGENT,
                id=row["id"],
                parent_id=row["parent_id"] or "",
                cwd=row["directory"] or "",
                created_at=iso(row["time_created"]),
                updated_at=iso(row["time_updated"]) or iso(row["time_created"]),
                messages=messages.get(row["id"], []),
                cwds=cwds.get(row["id"], set()),
            )
            session.given_title = one_line(row["title"] or "")
            session.title = title_of(session)
            parsed.sessions.append(session)
    finally:
        connection.close()
    return parsed


def _block(data: dict[str, Any]) -> list[dict[str, Any]] | None:
    kind = data.get("type")
    if kind == "text" and not data.get("synthetic"):
        return [{"type": "text", "text": str(data.get("text", ""))}]
    if kind == "reasoning":
        return [{"type": "thinking", "thinking": str(data.get("text", ""))}]
    if kind == "tool":
        state = data.get("state") if isinstance(data.get("state"), dict) else {}
        call_id = str(data.get("callID") or data.get("id") or "")
        blocks = [
            {"type": "tool_use", "id": call_id, "name": data.get("tool", ""), "input": state.get("input")}
        ]
        if "output" in state or "error" in state:
            blocks.append(
                {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": state.get("output", state.get("error")),
                    "is_error": state.get("status") == "error",
                }
            )
        return blocks
    if kind == "file":
        return [{"type": "document", "name": data.get("filename", ""), "mime": data.get("mime", "")}]
    return None
