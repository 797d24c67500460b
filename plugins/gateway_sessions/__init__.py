"""Past agent sessions (Claude Code, Codex, Gemini CLI, opencode): search, list and read them, rousseau's surface.

The store is one SQLite file (setting ``store``, default ``<data>/gateway/plugins/sessions/sessions.db``) filled by
``gateway sessions import``; the tools only read it. Its ``cron_jobs`` table belongs to the cron plugin.
"""

from __future__ import annotations

from collections.abc import Iterator

from gateway import (
    Context,
    PluginHost,
    Refresh,
    Refreshed,
    ResourceTemplate,
    Source,
    Traits,
    hookimpl,
)
from gateway_sessions import tools


@hookimpl
def register_settings(gateway: PluginHost) -> type:
    from gateway_sessions.settings import SessionsSettings

    return SessionsSettings


@hookimpl
def register_tools(gateway: PluginHost) -> list:
    from gateway_sessions import activity

    return [
        tools.rousseau_search_sessions,
        tools.rousseau_list_sessions,
        tools.rousseau_read_session,
        activity.sessions_touching,
        activity.search_tool_calls,
        activity.agent_week,
    ]


@hookimpl
def register_resources(gateway: PluginHost) -> list:
    from gateway_sessions import activity

    return [activity.WEEK_RESOURCE]


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
            complete=tools.complete_id,
        )
    ]


@hookimpl
def traits_of(gateway: PluginHost, address: str) -> Traits | None:
    """A session's places, for `gateway access why rousseau://sessions/ID` (a bare session id is read too)."""
    from gateway_sessions import described

    return described.traits_of(gateway, address)


@hookimpl
def census(gateway: PluginHost) -> Iterator[tuple[str, Traits]]:
    """Every session, as `sessions of <agent>`, with its places."""
    from gateway_sessions import described

    return described.census(gateway)


@hookimpl
def register_refresh(gateway: PluginHost) -> list[Refresh]:
    return [Refresh(run=_refresh, sources=_sources, stale=_stale)]


def _refresh(ctx: Context) -> Refreshed:  # the importers are loaded by the first call, not at start (refresh.py)
    from gateway_sessions.refresh import refresh

    return refresh(ctx)


def _stale(ctx: Context) -> bool:
    from gateway_sessions.refresh import stale

    return stale(ctx)


@hookimpl
def shutdown(gateway: PluginHost) -> None:
    import sys

    refresh = sys.modules.get("gateway_sessions.refresh")  # loaded by a call: nothing watched otherwise
    if refresh is not None:
        refresh.close_watches()


def _sources(ctx: Context) -> list[Source]:
    from gateway_sessions.refresh import sources

    return sources(ctx)


@hookimpl
def register_commands(gateway: PluginHost) -> list:
    from gateway_sessions.cli import commands

    return commands(gateway)


@hookimpl
def register_demo(gateway: PluginHost) -> list[tuple[str, dict]]:
    from gateway_sessions.demo import make_demo

    return make_demo(gateway)
