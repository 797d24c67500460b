"""The activity timeline: what the person was doing, from ActivityWatch or any tadoru-envelope recorder.

Tools get_timeline, query_events and get_status (read-only); resources timeline://recent, timeline://config
and timeline://events/{id}; the resume_my_work prompt; `gateway timeline import activitywatch` and
`gateway timeline ingest`. See README.md beside this file for the inputs, outputs and choices.
"""

from __future__ import annotations

from gateway import PluginHost, hookimpl


@hookimpl
def register_settings(gateway: PluginHost) -> type:
    from gateway_timeline.settings import TimelineSettings

    return TimelineSettings


@hookimpl
def register_tools(gateway: PluginHost):
    from gateway_timeline.tools import tool_list

    return tool_list()


@hookimpl
def register_resources(gateway: PluginHost):
    from gateway_timeline.resources import resource_list

    return resource_list()


@hookimpl
def register_resource_templates(gateway: PluginHost):
    from gateway_timeline.resources import template_list

    return template_list()


@hookimpl
def register_prompts(gateway: PluginHost):
    from gateway_timeline.resources import prompt_list

    return prompt_list()


@hookimpl
def register_refresh(gateway: PluginHost):
    from gateway import Refresh

    return [Refresh(run=_refresh, sources=_sources, stale=_stale)]


def _refresh(ctx):  # the importer and the store are loaded by the first call, not at start (refresh.py)
    from gateway_timeline.refresh import refresh

    return refresh(ctx)


def _stale(ctx):
    from gateway_timeline.refresh import stale

    return stale(ctx)


@hookimpl
def shutdown(gateway: PluginHost) -> None:
    import sys

    refresh = sys.modules.get("gateway_timeline.refresh")  # loaded by a call: nothing watched otherwise
    if refresh is not None:
        refresh.close_watches()


def _sources(ctx):
    from gateway_timeline.refresh import sources

    return sources(ctx)


@hookimpl
def register_commands(gateway: PluginHost):
    from gateway_timeline.cli import make_group

    return [make_group(gateway)]


@hookimpl
def register_demo(gateway: PluginHost):
    from gateway_timeline.demo import make_demo

    return make_demo(gateway)


@hookimpl
def traits_of(gateway: PluginHost, address: str):
    """An event's traits, for `gateway access why timeline://events/ID`."""
    from gateway_timeline import described

    return described.traits_of(gateway, address)


@hookimpl
def census(gateway: PluginHost):
    """Every event within the retention period, as `timeline events`."""
    from gateway_timeline import described

    return described.census(gateway)
