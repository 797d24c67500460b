"""Cursor: the chats of its agent (Composer), in the editor's global SQLite database,
``<config>/Cursor/User/globalStorage/state.vscdb``, opened read-only.

The format Cursor writes since its split storage (composer data ``_v`` 3 to 10, bubbles ``_v`` 2 and 3; Cursor
0.43 to 2.x): table ``cursorDiskKV(key, value)``, where ``composerData:<composer id>`` holds a chat's header (``name``,
``createdAt`` and ``lastUpdatedAt`` in epoch milliseconds, and ``fullConversationHeadersOnly``, the bubbles in order,
each ``{bubbleId, type}``; older chats hold their bubbles inline in ``conversation``) and
``bubbleId:<composer id>:<bubble id>`` one bubble: ``type`` 1 for the person, 2 for the model, ``text``,
``thinking.text``, ``createdAt`` (ISO), ``workspaceUris``, and for a tool call ``toolFormerData`` (``name``,
``rawArgs`` or ``params`` as JSON text, ``result``, ``toolCallId``). A chat's folder is the workspace whose own
database (``workspaceStorage/<hash>/state.vscdb``, item ``composer.composerData``) lists it, the folder being in
that workspace's ``workspace.json``; else the first ``workspaceUris`` of its bubbles.

A value that is not JSON is counted as a broken line and passed over (a chat without its header, or a bubble).
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from gateway_sessions.importers import Parsed, database_signature, one_line
from gateway_sessions.model import Message, Session, iso, title_of

AGENT = "cursor"
EXPECTED = "its global database (…/Cursor/User/globalStorage/state.vscdb) or the folder holding it"


def default_root() -> Path:
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        config = os.environ.get("XDG_CONFIG_HOME")
        base = Path(config) if config else Path.home() / ".config"
    return base / "Cursor" / "User" / "globalStorage" / "state.vscdb"


def sources(root: Path) -> list[Path]:
    if root.is_dir():
        root = root / "state.vscdb"
    return [root] if root.is_file() else []


signature = database_signature  # the database and its write-ahead log together


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)


def _json(raw: Any, parsed: Parsed | None = None) -> dict[str, Any] | None:
    try:
        value = json.loads(raw) if isinstance(raw, str | bytes) else None
    except ValueError:
        value = None
    if not isinstance(value, dict):
        if parsed is not None:
            parsed.broken_lines += 1
        return None
    return value


def _folder(uri: Any) -> str:
    if not isinstance(uri, str):
        return ""
    if uri.startswith("/"):
        return uri
    parts = urlsplit(uri)
    return unquote(parts.path) if parts.scheme == "file" else ""


def _workspaces(path: Path) -> dict[str, str]:
    """Each chat's folder, from the workspaces' own databases beside the global one."""
    found: dict[str, str] = {}
    storage = path.parent.parent / "workspaceStorage"
    for workspace in sorted(storage.glob("*/workspace.json")) if storage.is_dir() else []:
        try:
            folder = _folder(json.loads(workspace.read_text(encoding="utf-8")).get("folder"))
        except (OSError, ValueError, AttributeError):
            continue
        database = workspace.parent / "state.vscdb"
        if not folder or not database.is_file():
            continue
        try:
            connection = _connect(database)
            try:
                row = connection.execute("SELECT value FROM ItemTable WHERE key = 'composer.composerData'").fetchone()
            finally:
                connection.close()
        except sqlite3.Error:
            continue
        data = _json(row[0]) if row else None
        for composer in (data or {}).get("allComposers") or []:
            if isinstance(composer, dict) and isinstance(composer.get("composerId"), str):
                found[composer["composerId"]] = folder
    return found


def _tool_blocks(tool: dict[str, Any], key: str) -> list[dict[str, Any]]:
    call_id = str(tool.get("toolCallId") or key)
    raw = tool.get("rawArgs") or tool.get("params") or "{}"
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        arguments = raw
    blocks: list[dict[str, Any]] = [
        {"type": "tool_use", "id": call_id, "name": str(tool.get("name") or ""), "input": arguments}
    ]
    if tool.get("result") is not None:
        blocks.append({"type": "tool_result", "tool_use_id": call_id, "content": tool.get("result")})
    return blocks


def _message(bubble: dict[str, Any], key: str, folders: list[str]) -> Message | None:
    role = {1: "user", 2: "assistant"}.get(bubble.get("type"))
    if role is None:
        return None
    blocks: list[dict[str, Any]] = []
    thinking = bubble.get("thinking")
    if isinstance(thinking, dict) and isinstance(thinking.get("text"), str) and thinking["text"]:
        blocks.append({"type": "thinking", "thinking": thinking["text"]})
    if isinstance(bubble.get("text"), str) and bubble["text"].strip():
        blocks.append({"type": "text", "text": bubble["text"]})
    tool = bubble.get("toolFormerData")
    if isinstance(tool, dict) and tool.get("name"):
        blocks.extend(_tool_blocks(tool, key))
    for uri in bubble.get("workspaceUris") or []:
        folder = _folder(uri)
        if folder:
            folders.append(folder)
    if not blocks:
        return None
    return Message(key=key, role=role, blocks=blocks, timestamp=iso(bubble.get("createdAt")))


def read(path: Path) -> Parsed:
    parsed = Parsed()
    folders_by_chat = _workspaces(path)
    connection = _connect(path)
    try:
        if connection.execute("SELECT 1 FROM sqlite_master WHERE name = 'cursorDiskKV'").fetchone() is None:
            return parsed
        headers = connection.execute(
            "SELECT key, value FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;'"
        ).fetchall()
        for key, value in headers:
            data = _json(value, parsed)
            if data is None:
                continue
            chat = str(data.get("composerId") or key.split(":", 1)[1])
            bubbles: dict[str, dict[str, Any]] = {}
            prefix = f"bubbleId:{chat}:"
            for bubble_key, raw in connection.execute(
                "SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?", (prefix, prefix[:-1] + ";")
            ):
                bubble = _json(raw, parsed)
                if bubble is not None:
                    bubbles[bubble_key[len(prefix):]] = bubble
            order = [
                (str(header.get("bubbleId")), bubbles.get(str(header.get("bubbleId"))))
                for header in data.get("fullConversationHeadersOnly") or []
                if isinstance(header, dict)
            ]
            if not order:  # the older form: the bubbles inline
                order = [
                    (str(bubble.get("bubbleId") or number), bubble)
                    for number, bubble in enumerate(data.get("conversation") or [])
                    if isinstance(bubble, dict)
                ]
            folders: list[str] = []
            messages = [
                message
                for bubble_id, bubble in order
                if bubble is not None and (message := _message(bubble, bubble_id, folders)) is not None
            ]
            if not messages:
                continue
            created = iso(data.get("createdAt")) or next((m.timestamp for m in messages if m.timestamp), "")
            updated = iso(data.get("lastUpdatedAt")) or max((m.timestamp for m in messages), default="") or created
            cwd = folders_by_chat.get(chat) or (folders[0] if folders else "")
            session = Session(
                agent=AGENT,
                id=chat,
                cwd=cwd,
                created_at=created or iso(path.stat().st_mtime),
                updated_at=updated or created,
                messages=messages,
                cwds=set(folders),
            )
            session.given_title = one_line(data.get("name") or "")
            session.title = title_of(session)
            parsed.sessions.append(session)
    finally:
        connection.close()
    return parsed
