"""The hooks a plugin implements: the one file a plugin author reads.

A plugin is a module (named by an entry point in the ``gateway.plugins`` group) holding functions marked
``@hookimpl``. Registration hooks are synchronous and pure: they return lists of plain items and do no
work; the work happens when a tool runs, through the :class:`gateway.Context` it is given. Each hook gets
``gateway``, a :class:`gateway.PluginHost` naming the plugin, its folders and its settings (defaults filled).

Hooks are called through pluggy, once per plugin with only that plugin's implementations: a plugin's own
``wrapper=True`` implementation wraps its own hook; across plugins the order is ``[gateway] plugins``, so
``tryfirst``/``trylast`` order nothing there and a wrapper never sees another plugin's call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    import click
    from pydantic import BaseModel

    from gateway.api.context import PluginHost
    from gateway.api.items import Detected, Prompt, Resource, ResourceTemplate, Tool
    from gateway.api.refresh import Refresh
    from gateway.gate.traits import Traits

hookspec = pluggy.HookspecMarker("gateway")
hookimpl = pluggy.HookimplMarker("gateway")


@hookspec
def register_settings(gateway: PluginHost) -> type[BaseModel]:
    """One pydantic model class: its fields are the keys your ``[plugins.<name>]`` table takes (any other is refused)."""


@hookspec
def register_tools(gateway: PluginHost) -> list[Tool | Callable]:
    """Your tools, in the order hosts should list them (a bare function becomes ``Tool.from_function(it)``)."""


@hookspec
def register_resources(gateway: PluginHost) -> list[Resource]:
    """Your fixed resources (one URI each)."""


@hookspec
def register_resource_templates(gateway: PluginHost) -> list[ResourceTemplate]:
    """Your resource templates (``scheme://things/{id}``), optionally able to list their resources."""


@hookspec
def register_prompts(gateway: PluginHost) -> list[Prompt]:
    """Your prompts."""


@hookspec
def register_refresh(gateway: PluginHost) -> list[Refresh]:
    """How to bring your store up to date from its sources: run before your tools and resources answer (under
    ``[gateway] refresh_budget_ms``) and by ``gateway watch``; cheap when nothing changed."""


@hookspec
def register_commands(gateway: PluginHost) -> list[click.Command]:
    """Click commands (or groups) added under ``gateway`` on the command line, e.g. ``gateway foo import``."""


@hookspec
def register_demo(gateway: PluginHost) -> list[tuple[str, dict]]:
    """For ``gateway demo``: write invented data into your folders, return the calls (tool, arguments) to show."""


@hookspec
def traits_of(gateway: PluginHost, address: str) -> Traits | None:
    """For the person's ``gateway access why ADDRESS``: when ADDRESS (a resource URI, or an address one of your
    tools hands out) names a thing of yours, its traits, as your tools give them to the gate; else None. The
    core says which route took it and which could not apply. Never called for an agent."""


@hookspec
def census(gateway: PluginHost) -> Iterable[tuple[str, Traits]]:
    """For the person's ``gateway access list``: every thing you hold now, as (source, traits), where source
    names the kind and place (``mail account work``, ``task list home``); the core counts what each route takes
    in each source. A generator is welcome; it may take a few seconds on a large store."""


@hookspec
def tied_projects(gateway: PluginHost, addresses: Sequence[str]) -> Mapping[str, Iterable[str]] | None:
    """The projects the person tied each of these addresses to, from a tie store you keep (leave out an address
    with no tie, and one you do not know). Every plugin reads ties through ``ctx.tied(addresses)``, which asks
    every enabled plugin, so all agree about a tied thing. Called on a call's worker thread: keep it quick (one
    query for the whole batch); raise rather than answer partly: a tie that cannot be read fails the call."""


@hookspec
def detect(gateway: PluginHost) -> Detected | None:
    """For ``gateway setup --detect``: the settings your table needs, found in the configs of the tools the
    person already runs (never by running anything that writes), with a sentence per finding saying where."""


@hookspec
def startup(gateway: PluginHost) -> None:
    """Called once when the server starts serving (stdio or HTTP), before the first request."""


@hookspec
def shutdown(gateway: PluginHost) -> None:
    """Called once when the server stops."""
