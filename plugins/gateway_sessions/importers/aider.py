"""Aider: ``.aider.chat.history.md`` at the root of each repository it was run in (aider 0.x, its default
``--chat-history-file``), a Markdown log it only appends to.

The lines as aider writes them (``aider/io.py``): each run starts with ``# aider chat started at YYYY-MM-DD HH:MM:SS``
(local time), which begins a session here; what the person typed is on lines beginning ``#### ``; aider's own notices
(files added, edits applied, commits, errors) are block quotes, lines beginning ``> ``; everything else is the model's
reply. Aider names no tool calls, so its notices become them: ``Added F to the chat`` a read of F, ``Applied edit to
F`` an edit, and a ``/run`` or ``!`` command typed by the person a command run in the repository.

Aider keeps no ids: a session's id is ``aider-`` and a digest of the file's path, then the time it started
(``aider-3f2a9c1e-20260302T091500``). A header whose time cannot be read is counted as a broken line and its
lines go to the session before; a last line cut short is read as it is (and read again whole next time).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from pathlib import Path
from typing import Any

from gateway_sessions.importers import Parsed, open_text
from gateway_sessions.model import Message, Session, iso, title_of

AGENT = "aider"
FILE = ".aider.chat.history.md"
EXPECTED = f"a repository holding {FILE}, a folder of such repositories, or the file itself"
_HEADER = re.compile(r"^# aider chat started at (.*)$")
_ADDED = re.compile(r"^Added (.+?) to the chat")
_APPLIED = re.compile(r"^Applied edit to (.+)$")
_DEPTH = 3  # how deep under the setting's folder repositories are looked for


def default_root() -> Path:
    """Nothing to look at until the person names their repositories (setting ``aider``): a file seldom there."""
    return Path.home() / FILE


def sources(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    found: list[Path] = []
    pattern = FILE
    for _ in range(_DEPTH + 1):
        found.extend(path for path in sorted(root.glob(pattern)) if path.is_file())
        pattern = "*/" + pattern
    return found


def _local_time(text: str) -> str:
    moment = dt.datetime.strptime(text.strip(), "%Y-%m-%d %H:%M:%S")
    return moment.astimezone().astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Run:
    def __init__(self, started: str, stamp: str) -> None:
        self.started = started
        self.stamp = stamp
        self.messages: list[Message] = []
        self.kind = ""
        self.lines: list[str] = []
        self.calls = 0

    def flush(self, cwd: str) -> None:
        text = "\n".join(self.lines).strip()
        kind, self.kind, self.lines = self.kind, "", []
        if not text:
            return
        key = str(len(self.messages))
        if kind == "user":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
            command = text[len("/run "):] if text.startswith("/run ") else text[1:] if text.startswith("!") else ""
            if command:
                blocks.append(self._call("run_command", {"command": command.strip(), "cwd": cwd}))
            self.messages.append(Message(key=key, role="user", blocks=blocks, timestamp=self.stamp))
        elif kind == "notice":
            blocks = []
            for line in text.splitlines():
                added, applied = _ADDED.match(line), _APPLIED.match(line)
                if added:
                    blocks.append(self._call("add", {"path": added.group(1).strip()}))
                elif applied:
                    blocks.append(self._call("edit", {"file_path": applied.group(1).strip()}))
            blocks.append({"type": "tool_result", "tool_use_id": "", "content": text})
            self.messages.append(Message(key=key, role="tool", blocks=blocks, timestamp=self.stamp))
        else:
            self.messages.append(
                Message(key=key, role="assistant", blocks=[{"type": "text", "text": text}], timestamp=self.stamp)
            )

    def _call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        return {"type": "tool_use", "id": f"aider-{self.calls}", "name": name, "input": arguments}

    def add(self, kind: str, line: str, cwd: str) -> None:
        if kind != self.kind:
            self.flush(cwd)
            self.kind = kind
        self.lines.append(line)


def read(path: Path) -> Parsed:
    parsed = Parsed()
    cwd = str(path.parent)
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:8]
    runs: list[_Run] = []
    with open_text(path) as lines:
        for raw in lines:
            line = raw.rstrip("\n").rstrip()
            header = _HEADER.match(line)
            if header:
                try:
                    stamp = _local_time(header.group(1))
                except ValueError:
                    parsed.broken_lines += 1
                    continue
                if runs:
                    runs[-1].flush(cwd)
                runs.append(_Run(stamp.replace("-", "").replace(":", "").rstrip("Z"), stamp))
                continue
            if not runs:
                if line.strip():
                    parsed.broken_lines += 1  # lines before any header: not aider's
                continue
            run = runs[-1]
            if line.startswith("#### ") or line == "####":
                run.add("user", line[5:], cwd)
            elif line.startswith("> ") or line == ">":
                run.add("notice", line[2:], cwd)
            elif line or run.kind == "assistant":
                run.add("assistant", line, cwd)
    if runs:
        runs[-1].flush(cwd)
    last_written = iso(path.stat().st_mtime)
    for number, run in enumerate(runs):
        if not run.messages:
            continue
        session = Session(
            agent=AGENT,
            id=f"aider-{digest}-{run.started}",
            cwd=cwd,
            created_at=run.stamp,
            updated_at=max(run.stamp, last_written) if number == len(runs) - 1 else run.stamp,
            messages=run.messages,
        )
        session.title = title_of(session)
        parsed.sessions.append(session)
    return parsed
