"""Amp (Sourcegraph's agent; its command line and editor extensions since they keep threads in one place): one JSON
file a thread, ``~/.local/share/amp/threads/T-<id>.json`` (``$XDG_DATA_HOME``), written whole at each turn.

A thread: ``id``, ``title``, ``created`` (epoch milliseconds), ``env.initial.trees`` (the folders it works in, each
``uri``, a ``file://`` address) and ``messages``, each ``role``, ``messageId`` and ``content``: blocks in the Anthropic
form (``text``, ``thinking``, ``tool_use`` with ``id``, ``name``, ``input``), and tool results as ``tool_result``
blocks naming their call by ``toolUseID`` with the outcome in ``run`` (``status``, ``result``). Keys are the
messages' ``messageId``. A thread file cut short by a crash gives the messages before the cut.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from gateway_sessions.importers import Parsed, blocks_of, one_line
from gateway_sessions.importers.cline import elements_from
from gateway_sessions.model import Message, Session, iso, title_of

AGENT = "amp"
EXPECTED = "its threads folder (~/.local/share/amp/threads) or one thread's .json file"
_NEXT_MESSAGE = re.compile(r'\{\s*"role"\s*:')


def default_root() -> Path:
    base = os.environ.get("XDG_DATA_HOME")
    return (Path(base) if base else Path.home() / ".local" / "share") / "amp" / "threads"


def sources(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(root.glob("T-*.json"))


def _folder(uri: Any) -> str:
    if not isinstance(uri, str):
        return ""
    parts = urlsplit(uri)
    return unquote(parts.path) if parts.scheme == "file" else ""


def _blocks(content: Any) -> list[dict[str, Any]]:
    blocks = []
    for block in blocks_of(content):
        if block.get("type") == "tool_result" and "tool_use_id" not in block:
            run = block.get("run") if isinstance(block.get("run"), dict) else {}
            result = run.get("result", block.get("content"))
            blocks.append({"type": "tool_result", "tool_use_id": str(block.get("toolUseID") or ""),
                           "content": result if isinstance(result, str) else json.dumps(result, ensure_ascii=False),
                           "is_error": run.get("status") == "error"})
        else:
            blocks.append(block)
    return blocks


def _cut_short(text: str, parsed: Parsed) -> dict[str, Any] | None:
    parsed.broken_lines += 1
    start = text.find('"messages"')
    bracket = text.find("[", start) if start >= 0 else -1
    if bracket < 0:
        return None
    found: dict[str, Any] = {"messages": [m for m in elements_from(text, bracket + 1, Parsed(), _NEXT_MESSAGE) if m]}
    for key in ("id", "title"):
        match = re.search(rf'"{key}"\s*:\s*("(?:[^"\\]|\\.)*")', text)
        if match:
            found[key] = json.loads(match.group(1))
    for key in ("created",):
        match = re.search(rf'"{key}"\s*:\s*([0-9]+)', text)
        if match:
            found[key] = int(match.group(1))
    uri = re.search(r'"uri"\s*:\s*("(?:[^"\\]|\\.)*")', text)
    if uri:
        found["env"] = {"initial": {"trees": [{"uri": json.loads(uri.group(1))}]}}
    return found


def read(path: Path) -> Parsed:
    parsed = Parsed()
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        thread = json.loads(text)
    except ValueError:
        thread = _cut_short(text, parsed)
    if not isinstance(thread, dict):
        return parsed
    trees = ((thread.get("env") or {}).get("initial") or {}).get("trees") or []
    folders = [folder for folder in (_folder(tree.get("uri")) for tree in trees if isinstance(tree, dict)) if folder]
    created = iso(thread.get("created")) or iso(path.stat().st_mtime)
    messages: list[Message] = []
    for number, item in enumerate(thread.get("messages") or []):
        if not isinstance(item, dict) or item.get("role") not in ("user", "assistant"):
            parsed.broken_lines += 1
            continue
        blocks = _blocks(item.get("content"))
        if blocks:
            key = str(item.get("messageId", number))
            messages.append(Message(key=key, role=item["role"], blocks=blocks, timestamp=created))
    if not messages:
        return parsed
    session = Session(
        agent=AGENT,
        id=str(thread.get("id") or path.stem),
        cwd=folders[0] if folders else "",
        cwds=set(folders[1:]),
        created_at=created,
        updated_at=max(created, iso(path.stat().st_mtime)),
        messages=messages,
    )
    session.given_title = one_line(thread.get("title") or "") if isinstance(thread.get("title"), str) else ""
    session.title = title_of(session)
    parsed.sessions.append(session)
    return parsed
