"""Scheduled agent jobs, read-only for agents: ``rousseau_cron_list`` and ``rousseau://cron/{name}``.

Jobs live in the ``cron_jobs`` table of the sessions plugin's SQLite file (setting ``store``); ``gateway cron`` is the
only way to add, remove, enable or disable them.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.util import find_spec

from gateway import PluginHost, ResourceTemplate, Traits, hookimpl

if find_spec("croniter") is None:  # checked without importing it: importing croniter is slow
    raise ImportError("the cron plugin needs croniter: pip install 'mcp-gateway[cron]'")

from gateway_cron import tools  # noqa: E402
from gateway_cron.defaults import default_path  # noqa: E402


@hookimpl
def register_settings(gateway: PluginHost) -> type:
    from gateway_cron.settings import CronSettings

    return CronSettings


@hookimpl
def register_tools(gateway: PluginHost) -> list:
    return [tools.rousseau_cron_list]


@hookimpl
def register_resource_templates(gateway: PluginHost) -> list[ResourceTemplate]:
    return [
        ResourceTemplate(
            uri_template=tools.URI,
            name="cron_job",
            title="Scheduled job",
            description="One scheduled job: its schedule, prompt, delivery target, last and next run.",
            read=tools.read_job,
            listing=tools.list_resources,
            mime_type="text/plain",
        )
    ]


@hookimpl
def traits_of(gateway: PluginHost, address: str) -> Traits | None:
    """A job's traits, for `gateway access why rousseau://cron/NAME`."""
    from gateway_cron import store

    prefix = tools.URI.split("{", 1)[0]
    if not address.startswith(prefix):
        return None
    name = address[len(prefix):]
    path = gateway.path_setting("store", default_path(gateway.folders.data))
    job = next((j for j in store.read_jobs(path) if j.name == name), None)
    return tools.traits(job) if job is not None else None


@hookimpl
def census(gateway: PluginHost) -> Iterator[tuple[str, Traits]]:
    """Every job, as `cron jobs`."""
    from gateway_cron import store

    for job in store.read_jobs(gateway.path_setting("store", default_path(gateway.folders.data))):
        yield "cron jobs", tools.traits(job)


@hookimpl
def register_commands(gateway: PluginHost) -> list:
    from gateway_cron.cli import commands

    return commands(gateway)


@hookimpl
def register_demo(gateway: PluginHost) -> list[tuple[str, dict]]:
    from gateway_cron.demo import make_demo

    return make_demo(gateway)
