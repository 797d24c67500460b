"""Past agent sessions (Claude Code, Codex, Gemini CLI, opencode): search, list and read them, rousseau's surface.

The store is one SQLite file (setting ``store``, default ``<data>/gateway/plugins/sessions/sessions.db``) filled by
``gateway sessions import``; the tools only read it. Its ``cron_jobs`` table belongs to the cron plugin.
"""

from __future__ import annotations

from gateway import PluginHost, ResourceTemplate, Setting, Tool, hookimpl
from gateway_sessions import store, tools
from gateway_sessions.store import default_path


@hookimpl
def register_settings(gateway: PluginHost) -> list[Setting]:
    where = "where {} keeps its transcripts; empty: {}"
    return [
        Setting(
            "store", str(default_path(gateway.folders.data)), "the SQLite file the sessions are imported into"
        ),
        Setting("claude_code", "", where.format("Claude Code", "~/.claude/projects")),
        Setting("codex", "", where.format("Codex", "$CODEX_HOME/sessions or ~/.codex/sessions")),
        Setting("gemini", "", where.format("Gemini CLI", "~/.gemini/tmp")),
        Setting(
            "opencode", "", where.format("opencode (its database)", "~/.local/share/opencode/opencode.db")
        ),
    ]


@hookimpl
def register_tools(gateway: PluginHost) -> list[Tool]:
    return [
        Tool(
            name="rousseau_search_sessions",
            function=tools.rousseau_search_sessions,
            title="Search past agent sessions",
            description=(
                "Find past agent sessions by their words. The query is SQLite FTS5 syntax, passed as is: "
                '"exact phrase", AND / OR / NOT, prefix*. Best matches first (BM25 rank, lower is better), '
                f"one session per hit with a short snippet. At most {tools.MAX_LIMIT} hits. When more than "
                f"{store.RANKED_AT_ONCE:,} messages match, the hits are the best of the newest {store.RANKED_AT_ONCE:,} "
                "(the answer says so): add words to narrow the search."
            ),
            input_schema=tools.SEARCH_INPUT,
            output_schema=tools.SEARCH_OUTPUT,
            read_only=True,
        ),
        Tool(
            name="rousseau_list_sessions",
            function=tools.rousseau_list_sessions,
            title="List past agent sessions",
            description=(
                "The past agent sessions on this computer, most recently active first: id, title, message count, "
                f"last update. At most {tools.MAX_LIMIT} rows."
            ),
            input_schema=tools.LIST_INPUT,
            output_schema=tools.LIST_OUTPUT,
            read_only=True,
        ),
        Tool(
            name="rousseau_read_session",
            function=tools.rousseau_read_session,
            title="Read a past agent session",
            description=(
                "One past session's transcript by its id: what the person and the agent wrote, in order. Tool calls "
                "and their results are left out."
            ),
            input_schema=tools.READ_INPUT,
            output_schema=tools.READ_OUTPUT,
            read_only=True,
        ),
    ]


@hookimpl
def register_resource_templates(gateway: PluginHost) -> list[ResourceTemplate]:
    return [
        ResourceTemplate(
            uri_template=tools.URI,
            name="session",
            title="Past agent session",
            description="A past agent session's transcript, as rousseau_read_session gives it.",
            read=tools.read_resource,
            listing=tools.list_resources,
            mime_type="text/plain",
        )
    ]


@hookimpl
def register_commands(gateway: PluginHost) -> list:
    from gateway_sessions.cli import commands

    return commands(gateway)


@hookimpl
def register_demo(gateway: PluginHost) -> list[tuple[str, dict]]:
    from gateway_sessions.demo import make_demo

    return make_demo(gateway)
