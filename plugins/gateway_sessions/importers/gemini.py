"""Gemini CLI: ``~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`` (older versions: one ``.json`` file).

The JSONL file is an upsert log: a metadata line, then message records rewritten whole when they change (the last
one of an id wins), ``{"$rewindTo": id}`` taking back that message and all after it, and ``{"$set": {...}}``
patching the metadata. The working directory comes from ``~/.gemini/projects.json`` (folder → project name), the
project folder's ``.project_root`` file, or the metadata's ``directories``; a project known only by its hash has none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gateway_sessions.importers import Parsed, blocks_of, json_lines, one_line, open_text
from gateway_sessions.model import Message, Session, iso, title_of

AGENT = "gemini"
# What PATH may be, for `gateway sessions import gemini PATH` (said when it is not).
EXPECTED = "the folder of per-project folders (~/.gemini/tmp) or one chat file"
_ROLES = {"user": "user", "gemini": "assistant", "model": "assistant"}


def default_root() -> Path:
    return Path.home() / ".gemini" / "tmp"


def sources(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(
        path
        for pattern in ("*/chats/**/*.jsonl", "*/chats/**/*.json")
        for path in root.glob(pattern)
        if path.is_file()
    )


def read(path: Path) -> Parsed:
    parsed = Parsed()
    metadata: dict[str, Any] = {}
    records: dict[str, dict[str, Any]] = {}
    dropped: list[str] = []
    if path.suffix == ".json":
        try:
            whole = json.loads(path.read_text(encoding="utf-8", errors="replace"))
        except ValueError:
            parsed.broken_lines += 1
            return parsed
        if not isinstance(whole, dict):
            parsed.broken_lines += 1
            return parsed
        metadata = whole
        for record in whole.get("messages") or []:
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                records[record["id"]] = record
    else:
        with open_text(path) as lines:
            for record in json_lines(lines, parsed):
                if isinstance(record.get("$rewindTo"), str):
                    ids = list(records)
                    cut = ids.index(record["$rewindTo"]) if record["$rewindTo"] in ids else len(ids)
                    for key in ids[cut:]:
                        dropped.append(key)
                        del records[key]
                elif "$set" in record and isinstance(record["$set"], dict):
                    patch = record["$set"]
                    metadata.update({k: v for k, v in patch.items() if k != "messages"})
                    # A context rewrite (compression) lists messages again: keep what we have, add what is new.
                    for message in patch.get("messages") or []:
                        if isinstance(message, dict) and isinstance(message.get("id"), str):
                            records.setdefault(message["id"], message)
                elif isinstance(record.get("id"), str) and "type" in record:
                    records[record["id"]] = record
                elif not metadata and "sessionId" in record:
                    metadata = record
    messages = [m for m in (_message(r) for r in records.values()) if m is not None]
    session_id = str(metadata.get("sessionId") or path.stem)
    stamps = [m.timestamp for m in messages if m.timestamp]
    created = iso(metadata.get("startTime")) or min(stamps, default="") or iso(path.stat().st_mtime)
    updated = max([iso(metadata.get("lastUpdated")), *stamps, created])
    parent = path.parent.name if path.parent.name != "chats" else ""
    session = Session(
        agent=AGENT,
        id=session_id,
        parent_id=parent,
        cwd=_cwd(path, metadata),
        created_at=created,
        updated_at=updated,
        messages=messages,
        cwds={folder for folder in metadata.get("directories") or () if isinstance(folder, str) and folder},
    )
    session.given_title = one_line(str(metadata.get("summary") or ""))
    session.title = title_of(session)
    parsed.sessions.append(session)
    surviving = {m.key for m in messages}
    parsed.dropped[session_id] = [key for key in dropped if key not in surviving]
    return parsed


def _message(record: dict[str, Any]) -> Message | None:
    role = _ROLES.get(str(record.get("type")))
    if role is None:  # info, error and warning lines are the CLI's own notices
        return None
    blocks = _content_blocks(record.get("content"))
    for thought in record.get("thoughts") or []:
        if isinstance(thought, dict):
            words = ": ".join(str(thought[k]) for k in ("subject", "description") if thought.get(k))
            blocks.insert(0, {"type": "thinking", "thinking": words})
    for call in record.get("toolCalls") or []:
        if not isinstance(call, dict):
            continue
        call_id = str(call.get("id") or "")
        blocks.append(
            {"type": "tool_use", "id": call_id, "name": call.get("name", ""), "input": call.get("args")}
        )
        if call.get("result") is not None:
            blocks.append(
                {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": _result_text(call["result"]),
                    "is_error": call.get("status") == "error",
                }
            )
    return Message(key=str(record["id"]), role=role, blocks=blocks, timestamp=iso(record.get("timestamp")))


def _content_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, list):
        return [
            {"type": "text", "text": part["text"]} if isinstance(part, dict) and "text" in part else part
            for part in blocks_of(content)
            if not (isinstance(part, dict) and part.get("thought"))
        ]
    return blocks_of(content)


def _result_text(result: Any) -> Any:
    """A tool's result as Gemini keeps it (function responses), reduced to its output where there is one."""
    if isinstance(result, list):
        outputs = []
        for part in result:
            response = part.get("functionResponse", {}).get("response", {}) if isinstance(part, dict) else {}
            outputs.append(response.get("output", response) if isinstance(response, dict) else response)
        return outputs[0] if len(outputs) == 1 else outputs
    return result


def _cwd(path: Path, metadata: dict[str, Any]) -> str:
    project_folder = path.parent
    while project_folder.name != "chats" and project_folder != project_folder.parent:
        project_folder = project_folder.parent
    project_folder = project_folder.parent
    marker = project_folder / ".project_root"
    if marker.is_file():
        return marker.read_text(encoding="utf-8", errors="replace").strip()
    registry = project_folder.parent.parent / "projects.json"
    if registry.is_file():
        try:
            projects = json.loads(registry.read_text(encoding="utf-8")).get("projects", {})
        except (ValueError, AttributeError):
            projects = {}
        for folder, name in projects.items() if isinstance(projects, dict) else ():
            if name == project_folder.name:
                return str(folder)
    directories = metadata.get("directories")
    if isinstance(directories, list) and directories and isinstance(directories[0], str):
        return directories[0]
    return ""
