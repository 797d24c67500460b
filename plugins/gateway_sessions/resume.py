"""The shell command that resumes a session in its own agent, as data the person can run (the gateway never runs it).

Each agent's own form, from its documentation or source:

- Claude Code: ``claude --resume ID``, run in the session's folder (its sessions are kept per folder);
- Codex CLI: ``codex resume ID`` (``-C DIR`` would also do; ``cd`` keeps one form for all);
- Gemini CLI: ``gemini --resume ID`` in the project's folder (sessions are per project);
- opencode: ``opencode --session ID`` (``-s``) in its folder;
- Qwen Code (a Gemini CLI fork): ``qwen --resume ID``;
- GitHub Copilot CLI: ``copilot --resume ID``;
- Goose: ``goose session --resume --session-id ID``;
- Amp: ``amp threads continue ID``;
- Aider: ``aider --restore-chat-history`` in the repository (it keeps one history a repository, not ids);
- Cursor, Cline and Roo Code, Continue: their chats live inside an editor and have no command that opens one by id:
  no command is given ('').

A subagent's transcript (Claude Code's ``ID:agent-…``) cannot be resumed alone: the command resumes the session
that started it. Every id and folder is quoted with ``shlex.quote``, so an id or a folder holding spaces, quotes or
``;`` stays one word.
"""

from __future__ import annotations

import shlex

_BY_ID = {
    "claude-code": ("claude", "--resume"),
    "codex": ("codex", "resume"),
    "gemini": ("gemini", "--resume"),
    "opencode": ("opencode", "--session"),
    "qwen": ("qwen", "--resume"),
    "copilot": ("copilot", "--resume"),
    "goose": ("goose", "session", "--resume", "--session-id"),
    "amp": ("amp", "threads", "continue"),
}


def resume_command(agent: str, session_id: str, cwd: str = "", parent_id: str = "") -> str:
    """The command line that resumes the session, quoted for a POSIX shell; '' when the agent has none."""
    if agent == "aider":
        command = "aider --restore-chat-history"
    else:
        words = _BY_ID.get(agent)
        if words is None or not session_id:
            return ""
        resumed = parent_id or session_id
        if agent == "claude-code" and not parent_id and ":agent-" in resumed:
            resumed = resumed.split(":agent-", 1)[0]
        command = " ".join((*words, shlex.quote(resumed)))
    return f"cd {shlex.quote(cwd)} && {command}" if cwd else command
