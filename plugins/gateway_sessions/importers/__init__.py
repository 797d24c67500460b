"""Readers of the agents' own transcript files, one module per agent; each only reads, never writes, what it is given.

An importer module offers ``default_root() -> Path`` (where the agent keeps its files), ``sources(root) -> list[Path]``
(the files worth reading under it) and ``read(path) -> Parsed`` (the sessions in one file, and how many of its lines
could not be read).
"""

from __future__ import annotations

import json
import keyword
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from attrs import define, field

from gateway_sessions.model import Session

AGENTS = (
    "claude-code",
    "codex",
    "gemini",
    "opencode",
    "cursor",
    "cline",
    "aider",
    "copilot",
    "goose",
    "continue",
    "qwen",
    "amp",
)


@define
class Parsed:
    sessions: list[Session] = field(factory=list)
    broken_lines: int = 0
    # Per session id, the message keys the agent itself took back (Gemini's rewinds).
    dropped: dict[str, list[str]] = field(factory=dict)


def module(agent: str) -> ModuleType:
    from importlib import import_module

    name = agent.replace("-", "_")
    return import_module(f"gateway_sessions.importers.{name}_" if keyword.iskeyword(name) else f"gateway_sessions.importers.{name}")


def json_lines(lines: Iterator[str], parsed: Parsed) -> Iterator[dict[str, Any]]:
    """Each line's JSON object; a line that is not one is counted in `parsed.broken_lines` and passed over.

    Blank lines are neither (json.loads refuses them too: only then is the line looked at again).
    """
    loads = json.loads
    for line in lines:
        try:
            record = loads(line)
        except ValueError:
            if line.strip():
                parsed.broken_lines += 1
            continue
        if isinstance(record, dict):
            yield record
        else:
            parsed.broken_lines += 1


def blocks_of(content: Any) -> list[dict[str, Any]]:
    """Message content as a list of blocks: a bare string becomes one text block."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return [
            block if isinstance(block, dict) else {"type": "text", "text": block}
            for block in content
            if isinstance(block, dict) or (isinstance(block, str) and block)
        ]
    return []


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def open_text(path: Path):
    """A text stream over a file, decompressing ``.zst`` on the way."""
    if path.name.endswith(".zst"):
        try:
            import zstandard
        except ImportError as error:
            raise ImportError(
                "reading .zst transcripts needs zstandard: pip install 'mcp-gateway[sessions]'"
            ) from error
        import io

        raw = path.open("rb")
        stream = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
        return io.TextIOWrapper(stream, encoding="utf-8", errors="replace")
    return path.open(encoding="utf-8", errors="replace")


def database_signature(path: Path) -> tuple[int, int]:
    """A SQLite store's state for the refresh: the database and its write-ahead log together, since a commit may
    touch only the log (opencode, Goose and Cursor keep their sessions so)."""
    size, mtime = 0, 0
    for part in (path, path.with_name(path.name + "-wal")):
        try:
            status = part.stat()
        except FileNotFoundError:
            continue
        size, mtime = size + status.st_size, max(mtime, status.st_mtime_ns)
    return size, mtime
