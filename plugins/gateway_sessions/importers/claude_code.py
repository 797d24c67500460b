"""Claude Code: ``~/.claude/projects/<folder>/<sessionId>.jsonl``, one JSON object per line, plus subagent files.

Subagent transcripts (``<sessionId>/subagents/agent-<id>.jsonl``, or ``agent-<id>.jsonl`` beside the sessions in older
versions) become sessions of their own, ``<sessionId>:agent-<id>``, whose parent is the session that started them.
"""

from __future__ import annotations

import os
from pathlib import Path

from gateway_sessions.importers import Parsed, blocks_of, json_lines, one_line, open_text
from gateway_sessions.model import Message, Session, iso, title_of

AGENT = "claude-code"
# What PATH may be, for `gateway sessions import claude-code PATH` (said when it is not).
EXPECTED = "the folder of per-project folders (~/.claude/projects), one project's folder in it, or one .jsonl transcript"


def default_root() -> Path:
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base).expanduser() if base else Path.home() / ".claude") / "projects"


def sources(root: Path) -> list[Path]:
    """The transcripts under `root`: the folder of per-project folders (``~/.claude/projects``), one project's folder
    in it (its sessions' files are right there), or one file."""
    if root.is_file():
        return [root]
    if any(root.glob("*.jsonl")):  # one project's folder
        return sorted(root.glob("*.jsonl")) + sorted(root.glob("*/subagents/*.jsonl"))
    return sorted(root.glob("*/*.jsonl")) + sorted(root.glob("*/*/subagents/*.jsonl"))


def _is_subagent(path: Path) -> bool:
    return path.name.startswith("agent-") or path.parent.name == "subagents"


def read(path: Path) -> Parsed:
    parsed = Parsed()
    messages: dict[str, Message] = {}
    uuids: set[str] = set()
    summaries: list[tuple[str, str]] = []
    custom_title = ai_title = ""
    session_id = cwd = ""
    cwds: set[str] = set()  # every working directory the lines record (a `cd` changes it)
    first_seen = last_seen = ""
    with open_text(path) as lines:
        for line in json_lines(lines, parsed):
            kind = line.get("type")
            if kind != "user" and kind != "assistant":
                if kind == "summary":
                    if isinstance(line.get("summary"), str):
                        summaries.append((str(line.get("leafUuid", "")), line["summary"]))
                elif kind == "custom-title" and isinstance(line.get("customTitle"), str):
                    custom_title = line["customTitle"]
                elif kind == "ai-title" and isinstance(line.get("aiTitle"), str):
                    ai_title = line["aiTitle"]
                continue
            uuid = line.get("uuid")
            if isinstance(uuid, str):
                uuids.add(uuid)
            if not session_id:
                session_id = str(line.get("sessionId") or "")
            line_cwd = line.get("cwd")
            if line_cwd and isinstance(line_cwd, str):
                cwd = cwd or line_cwd
                cwds.add(line_cwd)
            when = iso(line.get("timestamp"))
            if when:
                if not first_seen or when < first_seen:
                    first_seen = when
                if when > last_seen:
                    last_seen = when
            message = line.get("message")
            if line.get("isMeta") or not isinstance(message, dict):
                continue
            content = message.get("content")
            if isinstance(content, str):  # what a person types: one text block
                blocks = [{"type": "text", "text": content}] if content else []
            else:
                blocks = blocks_of(content)
            role = "summary" if line.get("isCompactSummary") else str(message.get("role") or kind)
            # A streamed reply repeats its message.id on one line per content block: one message, blocks merged.
            key = str((message.get("id") if kind == "assistant" else None) or uuid or "")
            if not key:
                parsed.broken_lines += 1
                continue
            known = messages.get(key)
            if known is None:
                messages[key] = Message(key=key, role=role, blocks=blocks, timestamp=when)
            else:
                known.blocks.extend(block for block in blocks if block not in known.blocks)
    if not messages and not session_id:
        return parsed
    parent_id = ""
    session_id = session_id or path.stem
    if _is_subagent(path):
        parent_id, session_id = session_id, f"{session_id}:{path.stem}"
    # A summary line may describe another session: trust it only when its leaf is in this file.
    summary = next((text for leaf, text in reversed(summaries) if leaf in uuids), "")
    session = Session(
        agent=AGENT,
        id=session_id,
        cwd=cwd,
        parent_id=parent_id,
        created_at=first_seen,
        updated_at=last_seen,
        messages=list(messages.values()),
        cwds=cwds,
    )
    if not session.created_at:
        session.created_at = session.updated_at = iso(path.stat().st_mtime)
    session.given_title = one_line(custom_title or ai_title or summary)
    session.title = title_of(session)
    parsed.sessions.append(session)
    return parsed
