"""Cline and its forks (Roo Code, Kilo Code): one folder per task in the editor's storage for the extension,
``<editor config>/User/globalStorage/<extension>/tasks/<task id>/``.

Read from each task folder (Cline 3.x, Roo Code 3.x): ``api_conversation_history.json``, the conversation as the model
saw it (a JSON array of Anthropic-style messages: ``role`` and ``content``, a string or content blocks, with ``ts`` in
milliseconds on Roo Code's), and ``ui_messages.json`` beside it for the times (``ts`` of each message shown). Tool
calls are content blocks (``tool_use``, native tool calling) or, in the XML form both extensions also write, tags in
the assistant's text (``<read_file><path>src/a.ts</path></read_file>``), which become tool calls here. The task's
first message is wrapped in ``<task>``; ``<environment_details>`` blocks (injected by the extension) are left out,
and give the working directory (``# Current Working Directory (/path) Files``) when the extension's
``state/taskHistory.json`` (``cwdOnTaskInitialization``) does not.

The files are whole JSON documents rewritten at each turn: a file cut short by a crash (half-written) gives the
messages before the cut, and an element that is not a message is counted as a broken line and passed over.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from gateway_sessions.importers import Parsed, blocks_of
from gateway_sessions.model import Message, Session, iso, title_of

AGENT = "cline"
EXPECTED = (
    "the folder holding your editors' settings (~/.config), one extension's tasks folder, or one task folder"
)
# The extension's folder under globalStorage, and the agent its sessions are said to come from.
EXTENSIONS = {
    "saoudrizwan.claude-dev": "cline",
    "rooveterinaryinc.roo-cline": "roo-code",
    "kilocode.kilo-code": "kilo-code",
}
EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf", "Trae")
HISTORY = "api_conversation_history.json"
_TOOLS = (
    "read_file", "write_to_file", "replace_in_file", "apply_diff", "insert_content", "search_and_replace",
    "execute_command", "list_files", "search_files", "list_code_definition_names", "browser_action",
    "use_mcp_tool", "access_mcp_resource", "new_task", "fetch_instructions", "codebase_search",
)
_TOOL_TAG = re.compile(r"<(" + "|".join(_TOOLS) + r")>(.*?)</\1>", re.DOTALL)
_PARAMETER = re.compile(r"<(\w+)>(.*?)</\1>", re.DOTALL)
_CWD = re.compile(r"# Current (?:Working|Workspace) Directory \((.+?)\) Files")
_NEXT_MESSAGE = re.compile(r'\{\s*"role"\s*:')
_RESULT = re.compile(r"^\[[\w-]+(?: for .*?)?\] Result:", re.DOTALL)


def default_root() -> Path:
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    base = os.environ.get("XDG_CONFIG_HOME")
    return Path(base) if base else Path.home() / ".config"


def sources(root: Path) -> list[Path]:
    """The task histories under `root`: the editors' settings folder, one extension's folder or tasks folder, one
    task folder, or one history file."""
    if root.is_file():
        return [root]
    if (root / HISTORY).is_file():
        return [root / HISTORY]
    found = sorted(root.glob(f"*/{HISTORY}")) + sorted(root.glob(f"tasks/*/{HISTORY}"))
    if found:
        return found
    for editor in EDITORS:
        for extension in EXTENSIONS:
            found.extend(sorted((root / editor / "User" / "globalStorage" / extension / "tasks").glob(f"*/{HISTORY}")))
    return found


def json_array(path: Path, parsed: Parsed) -> list[Any]:
    """The elements of a JSON array file; one cut short gives those before the cut, a broken one is counted."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    try:
        value = json.loads(text)
        return value if isinstance(value, list) else []
    except ValueError:
        pass
    position = text.find("[") + 1
    if position == 0:
        parsed.broken_lines += 1
        return []
    return elements_from(text, position, parsed, _NEXT_MESSAGE)


def elements_from(text: str, position: int, parsed: Parsed, resume: re.Pattern[str] | None = None) -> list[Any]:
    """The elements of the JSON array whose first element starts at `position` of `text`, as far as they can be read.

    A broken element is counted in `parsed.broken_lines` and holds its place (None), so that the elements after it
    keep their numbers; reading starts again where `resume` next matches (else it stops there).
    """
    decoder = json.JSONDecoder()
    elements: list[Any] = []
    while position < len(text):
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        if position >= len(text) or text[position] == "]":
            break
        try:
            value, position = decoder.raw_decode(text, position)
            elements.append(value)
        except ValueError:
            parsed.broken_lines += 1
            elements.append(None)  # holds its place: the messages after it keep their numbers (their keys)
            # Start again at the next element after the broken one's beginning (compact or indented alike).
            following = resume.search(text, position + 1) if resume is not None else None
            if following is None:
                break
            position = following.start()
    return elements


def _task_histories(task: Path) -> dict[str, str]:
    """The working directory of each task, from the extension's own index of tasks (Cline 3.x); {} without it."""
    index = task.parent.parent / "state" / "taskHistory.json"
    try:
        items = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {
        str(item.get("id")): str(item["cwdOnTaskInitialization"])
        for item in items
        if isinstance(item, dict) and isinstance(item.get("cwdOnTaskInitialization"), str)
    } if isinstance(items, list) else {}


def _xml_calls(text: str, key: str) -> tuple[str, list[dict[str, Any]]]:
    calls = []
    for number, found in enumerate(_TOOL_TAG.finditer(text)):
        arguments = {name: value.strip("\n") for name, value in _PARAMETER.findall(found.group(2))}
        calls.append({"type": "tool_use", "id": f"{key}-xml-{number}", "name": found.group(1), "input": arguments})
    return (_TOOL_TAG.sub("", text).strip(), calls) if calls else (text, [])


def _blocks(role: str, content: Any, key: str, cwd: list[str]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in blocks_of(content):
        if block.get("type") != "text" or not isinstance(block.get("text"), str):
            blocks.append(block)
            continue
        text = block["text"]
        stripped = text.lstrip()
        if stripped.startswith("<environment_details>"):
            found = _CWD.search(text)
            if found and not cwd:
                cwd.append(found.group(1))
            continue
        if role == "user" and stripped.startswith("<task>"):
            text = stripped.removeprefix("<task>").split("</task>", 1)[0].strip()
        elif role == "user" and (_RESULT.match(stripped) or (blocks and blocks[-1].get("type") == "tool_result")):
            blocks.append({"type": "tool_result", "tool_use_id": "", "content": text})
            continue
        if role == "assistant":
            text, calls = _xml_calls(text, key)
            if text:
                blocks.append({"type": "text", "text": text})
            blocks.extend(calls)
            continue
        if text:
            blocks.append({"type": "text", "text": text})
    return blocks


def read(path: Path) -> Parsed:
    parsed = Parsed()
    task = path.parent
    extension = task.parent.parent.name
    agent = EXTENSIONS.get(extension, AGENT)
    history = json_array(path, parsed)
    shown = [item for item in json_array(task / "ui_messages.json", Parsed()) if isinstance(item, dict)]
    times = [iso(item.get("ts")) for item in shown if item.get("ts")]
    times = [stamp for stamp in times if stamp]
    cwd: list[str] = []
    known = _task_histories(task).get(task.name)
    if known:
        cwd.append(known)
    messages: list[Message] = []
    for number, item in enumerate(history):
        if item is None:  # counted by json_array
            continue
        if not isinstance(item, dict) or item.get("role") not in ("user", "assistant"):
            parsed.broken_lines += 1
            continue
        key = str(number)
        blocks = _blocks(item["role"], item.get("content"), key, cwd)
        if blocks:
            messages.append(Message(key=key, role=item["role"], blocks=blocks, timestamp=iso(item.get("ts"))))
    if not messages:
        return parsed
    stamps = sorted([m.timestamp for m in messages if m.timestamp] + times)
    fallback = iso(task.name) if task.name.isdigit() else ""  # Cline's older task ids are epoch milliseconds
    created = stamps[0] if stamps else fallback or iso(path.stat().st_mtime)
    session = Session(
        agent=agent,
        id=task.name,
        cwd=cwd[0] if cwd else "",
        created_at=created,
        updated_at=stamps[-1] if stamps else created,
        messages=messages,
    )
    session.title = title_of(session)
    parsed.sessions.append(session)
    return parsed
