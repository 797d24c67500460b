"""Codex CLI: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`` (or ``.jsonl.zst``).

Each line is ``{timestamp, type, payload}``; the conversation is in the ``response_item`` lines. What Codex injects
into the conversation itself (environment context, the user's standing instructions, developer messages) is skipped.
Codex gives its items no ids, so a message's key is its line number: the files only ever grow.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from gateway_sessions.importers import Parsed, json_lines, open_text
from gateway_sessions.model import Message, Session, iso, title_of

AGENT = "codex"
# What PATH may be, for `gateway sessions import codex PATH` (said when it is not).
EXPECTED = "the sessions folder (~/.codex/sessions, or $CODEX_HOME/sessions), a folder in it, or one rollout file"
_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


def default_root() -> Path:
    base = os.environ.get("CODEX_HOME")
    return (Path(base).expanduser() if base else Path.home() / ".codex") / "sessions"


def sources(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted([*root.rglob("rollout-*.jsonl"), *root.rglob("rollout-*.jsonl.zst")])


def _parts_text(content: Any) -> list[dict[str, Any]]:
    blocks = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": part["text"]})
    return blocks


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _message(item: dict[str, Any], key: str, when: str) -> Message | None:
    kind = item.get("type")
    if kind == "message":
        role = item.get("role")
        if role not in ("user", "assistant"):
            return None
        blocks = _parts_text(item.get("content"))
        if role == "user" and blocks and blocks[0]["text"].lstrip().startswith(_INJECTED):
            return None
        return Message(key=key, role=role, blocks=blocks, timestamp=when) if blocks else None
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        block = {
            "type": "tool_use",
            "id": item.get("call_id") or item.get("id") or key,
            "name": item.get("name") or kind,
            "input": _arguments(item.get("arguments", item.get("input", item.get("action")))),
        }
        return Message(key=key, role="assistant", blocks=[block], timestamp=when)
    if kind in ("function_call_output", "custom_tool_call_output"):
        output = item.get("output")
        if isinstance(output, dict):
            output = output.get("content", output)
        block = {"type": "tool_result", "tool_use_id": item.get("call_id", ""), "content": output}
        return Message(key=key, role="tool", blocks=[block], timestamp=when)
    if kind == "reasoning":
        thinking = "\n".join(part["text"] for part in _parts_text(item.get("summary")))
        if thinking:
            return Message(
                key=key, role="assistant", blocks=[{"type": "thinking", "thinking": thinking}], timestamp=when
            )
    return None


def read(path: Path) -> Parsed:
    parsed = Parsed()
    meta: dict[str, Any] = {}
    messages: list[Message] = []
    first_seen = last_seen = ""
    cwds: set[str] = set()  # each turn's working directory (turn_context lines)
    with open_text(path) as lines:
        for number, line in enumerate(json_lines(lines, parsed), start=1):
            when = iso(line.get("timestamp"))
            if when:
                first_seen = min(first_seen, when) if first_seen else when
                last_seen = max(last_seen, when)
            kind, payload = line.get("type"), line.get("payload")
            if not isinstance(payload, dict):
                # Older rollouts: a bare metadata object first, then bare response items.
                if number == 1 and "id" in line and kind is None:
                    meta = line
                    continue
                kind, payload = "response_item", line
            if kind == "turn_context" and isinstance(payload.get("cwd"), str) and payload["cwd"]:
                cwds.add(payload["cwd"])
            elif kind == "session_meta":
                meta = {**payload, **meta} if meta else payload
            elif kind == "response_item":
                message = _message(payload, f"L{number}", when)
                if message is not None:
                    messages.append(message)
    found = _UUID.search(path.name)
    session_id = str(meta.get("id") or (found.group(0) if found else path.name.split(".")[0]))
    created = iso(meta.get("timestamp")) or first_seen or iso(path.stat().st_mtime)
    session = Session(
        agent=AGENT,
        id=session_id,
        cwd=str(meta.get("cwd") or ""),
        created_at=created,
        updated_at=max(last_seen, created),
        messages=messages,
        cwds=cwds,
    )
    session.title = title_of(session)
    parsed.sessions.append(session)
    return parsed
