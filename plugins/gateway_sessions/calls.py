"""What a session's tool calls did to files: each call's tool, its arguments, and the files and folders it read,
edited, wrote or ran a command naming, taken from the content blocks the importers keep.

The verb comes from the tool's name, as each agent spells it (Claude Code's `Read`/`Edit`/`Write`/`Bash`, Codex's
`shell` and `apply_patch`, Gemini CLI's `read_file`/`replace`/`write_file`/`run_shell_command`, opencode's, Cline's,
Cursor's...); an unknown tool that names a path is taken to have read it. A shell command's paths are the words of its
command line that look like paths (holding a `/`, or a name with an extension), taken from the call's working
directory; the command itself is not run or interpreted further.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from typing import Any

from attrs import define, field

from gateway_sessions.model import _absolute, _path_values

READ, EDIT, WRITE, RAN = "read", "edit", "write", "ran"
ACTIONS = (READ, EDIT, WRITE, RAN)

_EDIT_TOOLS = frozenset(
    name.casefold()
    for name in (
        "Edit", "MultiEdit", "NotebookEdit", "edit", "multiedit", "replace", "str_replace", "str_replace_editor",
        "str_replace_based_edit_tool", "edit_file", "replace_in_file", "apply_diff", "search_replace",
        "search_and_replace", "insert_content", "patch", "edit_notebook", "apply_patch", "edit_existing_file",
        "single_find_and_replace", "multi_edit",
    )
)
_WRITE_TOOLS = frozenset(
    name.casefold()
    for name in ("Write", "write_file", "write_to_file", "create_file", "create", "new_file", "write", "create_new_file")
)
_RUN_TOOLS = frozenset(
    name.casefold()
    for name in (
        "Bash", "shell", "exec_command", "local_shell", "local_shell_call", "shell_command", "run_shell_command",
        "execute_command", "run_terminal_cmd", "run_terminal_command", "bash", "terminal", "run_command",
        "developer__shell", "container.exec",
    )
)
_COMMAND_KEYS = ("command", "cmd", "commandLine", "script")
_FILE_LIKE = re.compile(r"^[\w.@+-]*\w\.[A-Za-z0-9]{1,10}$")
_MOST_COMMAND_PATHS = 32
ARGUMENTS_LIMIT = 1_000
RESULT_LIMIT = 600


@define
class Call:
    """One tool call of a message: its place among the message's calls, the agent's call id, and where it acted."""

    position: int
    call_id: str
    tool: str
    arguments: Any
    places: dict[str, str] = field(factory=dict)  # absolute path -> read, edit, write or ran


# Editor tools that take what they do as an argument (Goose's developer__text_editor, Anthropic's text editor tool as
# Copilot CLI and others name it): `view` reads, `create`/`write` writes, the rest edit.
_EDITOR_COMMANDS = {"view": READ, "create": WRITE, "write": WRITE}


def action_of(tool: str, arguments: Any = None) -> str:
    """What a tool of this name (and, for an editor tool, this `command` argument) does to the paths it names."""
    folded = tool.casefold()
    if (folded.endswith("text_editor") or folded.startswith("str_replace")) and isinstance(arguments, dict):
        command = arguments.get("command")
        if isinstance(command, str):
            return _EDITOR_COMMANDS.get(command, EDIT)
    if folded in _EDIT_TOOLS:
        return EDIT
    if folded in _WRITE_TOOLS:
        return WRITE
    if folded in _RUN_TOOLS or folded.endswith("__shell") or folded.endswith("_shell"):
        return RAN
    return READ


def _command_words(command: Any) -> Iterator[str]:
    if isinstance(command, list):
        for part in command:
            if isinstance(part, str):
                yield from _command_words(part)
        return
    if not isinstance(command, str) or len(command) > 20_000:
        return
    try:
        words = shlex.split(command, comments=False)
    except ValueError:  # an unbalanced quote: split on spaces
        words = command.split()
    for word in words:
        if " " in word and not word.startswith("/"):
            yield from _command_words(word)  # `bash -lc "cat a/b"`: the inner command line
            continue
        word = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        if not word or word.startswith("-") or "://" in word or "$" in word or "*" in word:
            continue
        if "/" in word or _FILE_LIKE.match(word) or word.startswith("~"):
            yield word.rstrip(";|&")


def command_paths(arguments: Any, cwd: str) -> set[str]:
    """The absolute paths a shell call's command line names (relative ones taken from `cwd`)."""
    if not isinstance(arguments, dict):
        return set()
    found: set[str] = set()
    for key in _COMMAND_KEYS:
        for word in _command_words(arguments.get(key)):
            path = _absolute(word, cwd)
            if path is not None:
                found.add(path)
            if len(found) >= _MOST_COMMAND_PATHS:
                return found
    return found


def _workdir(arguments: Any, cwd: str) -> str:
    if isinstance(arguments, dict):
        for key in ("workdir", "working_directory", "cwd", "directory"):
            value = arguments.get(key)
            if isinstance(value, str) and value.strip():
                return _absolute(value, cwd) or cwd
    return cwd


_PATCH_VERB = re.compile(r"^\*\*\* (Add File|Update File|Delete File|Move to): (.+)$", re.MULTILINE)


def _patches(value: Any) -> Iterator[str]:
    """The strings of a call's input that hold patch markers, at any depth."""
    if isinstance(value, str):
        if "*** " in value:
            yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _patches(item)
    elif isinstance(value, list):
        for item in value:
            yield from _patches(item)


def calls_of(blocks: list[dict[str, Any]], cwd: str) -> list[Call]:
    """The tool calls among a message's content blocks, with the places each acted on."""
    found: list[Call] = []
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            continue
        tool = str(block.get("name") or "")
        arguments = block.get("input")
        call = Call(position=len(found), call_id=str(block.get("id") or ""), tool=tool, arguments=arguments)
        action = action_of(tool, arguments)
        for value in _path_values(arguments):
            path = _absolute(value, cwd)
            if path is not None:
                call.places[path] = action
        for patch in _patches(arguments):  # Codex's apply_patch: each file's own verb
            for verb, name in _PATCH_VERB.findall(patch):
                path = _absolute(name, cwd)
                if path is not None:
                    call.places[path] = WRITE if verb in ("Add File", "Move to") else EDIT
        if action == RAN:
            workdir = _workdir(arguments, cwd)
            for path in command_paths(arguments, workdir):
                call.places.setdefault(path, RAN)
        found.append(call)
    return found


def results_of(blocks: list[dict[str, Any]]) -> Iterator[tuple[str, str, bool]]:
    """(call id, text, is an error) of each tool result among a message's content blocks."""
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        call_id = str(block.get("tool_use_id") or "")
        if not call_id:
            continue
        content = block.get("content")
        if isinstance(content, list):
            content = "\n".join(
                str(item.get("text", "")) if isinstance(item, dict) else str(item) for item in content
            )
        elif content is not None and not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False)
        yield call_id, content or "", bool(block.get("is_error"))


def arguments_text(arguments: Any) -> str:
    """The call's input on one line, as JSON (a plain string as it is); masked and cut by the store."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, separators=(", ", ": "))

