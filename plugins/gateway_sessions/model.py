"""What an importer hands the store: one agent session, its messages as content blocks, and the line count it could not read."""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Iterable, Iterator
from typing import Any

from attrs import define, field

from gateway import clip


@define
class Message:
    """One turn; `key` is the agent's own message id (or a stable stand-in), unique within its session."""

    key: str
    role: str
    blocks: list[dict[str, Any]]
    timestamp: str = ""


@define
class Session:
    """One session as an agent recorded it: `id` is the agent's own id, `cwd` the folder it started in.

    `title` is what lists show, masked (made by `title_of`); `given_title` the agent's own title, on one line but
    neither masked nor cut, kept so that the shown title can be made again when the masks change. `cwds` holds
    every other working directory the session recorded (after a `cd`, say).
    """

    agent: str
    id: str
    title: str = ""
    cwd: str = ""
    created_at: str = ""
    updated_at: str = ""
    parent_id: str = ""
    messages: list[Message] = field(factory=list)
    given_title: str = ""
    cwds: set[str] = field(factory=set)


# The form agents write most (Claude Code on every line): UTC, with or without a fraction of a second. Taken apart by
# hand rather than through datetime (a third of the time Claude Code's reader spends outside json.loads); the date is
# still checked by datetime, once per day seen, and the time of day by its digits. Years before 1000 go the long way
# (strftime writes them without leading zeros, and the result must not change).
_UTC_STAMP = re.compile(
    r"([1-9][0-9]{3}-[0-9]{2}-[0-9]{2})T([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])(?:\.[0-9]{1,6})?Z"
)
_valid_days: dict[str, bool] = {}


def _valid_day(day: str) -> bool:
    valid = _valid_days.get(day)
    if valid is None:
        try:
            dt.date.fromisoformat(day)
            valid = True
        except ValueError:
            valid = False
        if len(_valid_days) < 100_000:
            _valid_days[day] = valid
    return valid


def iso(value: Any) -> str:
    """A timestamp (ISO text, epoch seconds or milliseconds) as UTC ``YYYY-MM-DDTHH:MM:SSZ``; '' when unreadable.

    One fixed form, so that text order is time order in the store's indexes.
    """
    if value is None or value == "":
        return ""
    if type(value) is str:
        stamp = _UTC_STAMP.fullmatch(value)
        if stamp is not None and _valid_day(stamp[1]):
            return f"{stamp[1]}T{stamp[2]}:{stamp[3]}:{stamp[4]}Z"
    try:
        if isinstance(value, int | float):
            seconds = value / 1000 if value > 1e11 else value
            moment = dt.datetime.fromtimestamp(seconds, dt.UTC)
        else:
            moment = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=dt.UTC)
    except (ValueError, OverflowError, OSError):
        return ""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def text_of(blocks: list[dict[str, Any]]) -> str:
    """The words a reader sees in a message: its text blocks, joined (tool calls, results and thinking left out)."""
    return "\n\n".join(
        block["text"]
        for block in blocks
        if block.get("type") == "text" and isinstance(block.get("text"), str)
    ).strip()


TITLE_LIMIT = 80


def first_words(session: Session, limit: int = TITLE_LIMIT) -> str:
    """A title made of the first words the person typed: the whole message masked, then on one line and cut."""
    return first_words_of((message.role, text_of(message.blocks)) for message in session.messages)


def first_words_of(texts: Iterable[tuple[str, str]], limit: int = TITLE_LIMIT) -> str:
    """`first_words` over (role, text) pairs in order; the text is the raw one, masked whole here before the cut."""
    for role, text in texts:
        if role != "user":
            continue
        text = text.strip()
        if text and not text.startswith("<"):
            return clip(text, limit)
    return ""


def title_of(session: Session) -> str:
    """The title lists show: the agent's own (masked, whole), else the person's first words (masked, then cut)."""
    return clip(session.given_title) if session.given_title else first_words(session)


# Tool inputs that name a file or folder, as the agents spell them: Claude Code (file_path, notebook_path, path),
# Gemini CLI (file_path, absolute_path, dir_path, path, paths), opencode (filePath, path), Codex shell calls (workdir,
# working_directory).
_PATH_KEYS = frozenset(
    (
        "file_path",
        "filePath",
        "notebook_path",
        "path",
        "absolute_path",
        "dir_path",
        "directory",
        "workdir",
        "working_directory",
        "cwd",
        "target_file",  # Cursor's read_file and edit_file
        "relative_workspace_path",  # Cursor's list_dir
        "filepath",  # Continue's read_file, edit_existing_file, create_new_file
        "dirPath",  # Continue's ls
    )
)
_PATH_LIST_KEYS = frozenset(("paths", "file_paths"))
# Codex's apply_patch names its files in the patch text.
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$", re.MULTILINE)
_LONGEST_PATH = 4096


def _path_values(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _PATH_KEYS and isinstance(item, str):
                yield item
            elif key in _PATH_LIST_KEYS and isinstance(item, list):
                yield from (entry for entry in item if isinstance(entry, str))
            elif isinstance(item, dict | list):
                yield from _path_values(item)
            elif isinstance(item, str) and "*** " in item:
                yield from _PATCH_FILE.findall(item)
    elif isinstance(value, list):
        for item in value:
            yield from _path_values(item)
    elif isinstance(value, str) and "*** " in value:
        yield from _PATCH_FILE.findall(value)


def _absolute(path: str, cwd: str) -> str | None:
    path = path.strip()
    if not path or len(path) > _LONGEST_PATH or "\n" in path or "://" in path:
        return None
    if path.startswith("~"):
        return path
    if not os.path.isabs(path):
        if not os.path.isabs(cwd):
            return None
        path = os.path.join(cwd, path)
    return os.path.normpath(path)


def tool_paths(blocks: Iterable[dict[str, Any]], cwd: str = "") -> set[str]:
    """The files and folders the tool calls among `blocks` name, absolute (relative ones taken from `cwd`)."""
    found: set[str] = set()
    for block in blocks:
        if block.get("type") == "tool_use":
            for value in _path_values(block.get("input")):
                path = _absolute(value, cwd)
                if path is not None:
                    found.add(path)
    return found


def paths_of(session: Session) -> set[str]:
    """Every place the session belongs to: each working directory it recorded, each path its tool calls name."""
    places = {path for path in (session.cwd, *session.cwds) if path}
    for message in session.messages:
        places |= tool_paths(message.blocks, session.cwd)
    return places
