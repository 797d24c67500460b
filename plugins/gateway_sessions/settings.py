"""The keys of the `[plugins.sessions]` table: the store, and where each agent keeps its transcripts."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

PATH = {"format": "path"}  # a path setting: kept as written ("" for the default), read with path_setting


def _where(agent: str, default: str) -> str:
    return f"where {agent} keeps its transcripts; empty: {default}"


def _path(description: str, **options: str) -> Any:
    return Field("", description=description, json_schema_extra=PATH, **options)


class SessionsSettings(BaseModel):
    store: str = _path("the SQLite file the sessions are imported into (empty: sessions.db in the plugin's data "
                       "folder)")
    claude_code: str = _path(_where("Claude Code", "~/.claude/projects"))
    codex: str = _path(_where("Codex", "$CODEX_HOME/sessions or ~/.codex/sessions"))
    gemini: str = _path(_where("Gemini CLI", "~/.gemini/tmp"))
    opencode: str = _path(_where("opencode (its database)", "~/.local/share/opencode/opencode.db"))
    cursor: str = _path(_where("Cursor (its global database)", "~/.config/Cursor/User/globalStorage/state.vscdb"))
    cline: str = _path(_where(
        "Cline, Roo Code and Kilo Code (the editors' settings folder, or one extension's tasks folder)",
        "~/.config, each editor's globalStorage searched"))
    aider: str = _path("a repository holding .aider.chat.history.md, or a folder of such repositories (looked for "
                       "three levels down); empty: only ~/.aider.chat.history.md")
    copilot: str = _path(_where("GitHub Copilot CLI", "$COPILOT_HOME/session-state or ~/.copilot/session-state"))
    goose: str = _path(_where("Goose (its database)", "~/.local/share/goose/sessions/sessions.db"))
    # `continue` is a Python keyword: the field takes it as its alias, the name the table and ctx.settings use.
    continue_: str = _path(_where("Continue", "$CONTINUE_GLOBAL_DIR/sessions or ~/.continue/sessions"),
                           alias="continue")
    qwen: str = _path(_where("Qwen Code", "~/.qwen"))
    amp: str = _path(_where("Amp", "~/.local/share/amp/threads"))
