"""What the terminal shows of the plugins (`gateway plugins [--json]`): each one's state, origin, hooks, and every
tool, resource, prompt and setting it registered, so that a plugin author sees what a host would be given."""

from __future__ import annotations

from typing import Any

from gateway.api.settings import described
from gateway.engine.core import Catalogue, Gateway
from gateway.engine.registry import Plugin


def plugin_views(gateway: Gateway) -> tuple[list[dict[str, Any]], list[str]]:
    """One dict per plugin found (enabled ones in config order, then the others), and the problems to report.

    A plugin that is off is not imported (importing runs its code and makes its folders): it shows what its
    distribution says, and ``loaded: false``.
    """
    snapshot = gateway.snapshot()
    catalogue = gateway.catalogue(snapshot)
    problems = [snapshot.error] if snapshot.error is not None else list(catalogue.problems)
    enabled = gateway.enabled(snapshot.config) if snapshot.error is None else []
    names = list(dict.fromkeys(enabled + gateway.registry.names()))
    views = []
    for name in names:
        candidate = gateway.registry.candidates.get(name)
        view: dict[str, Any] = {
            "name": name,
            "enabled": name in enabled,
            "serving": name in catalogue.plugin_order and snapshot.error is None,
            "version": candidate.version if candidate else "",
            "origin": candidate.origin if candidate else "not installed",
            "loaded": False,
            "error": None,
        }
        if name in enabled:
            plugin = gateway.registry.get(name, snapshot.config.table(name))
            view.update(_loaded_view(gateway, plugin, catalogue, snapshot.config.prefix(name)))
            if plugin.ok:
                view["error"] = plugin.table_problem(snapshot.config.table(name))
        views.append(view)
    return views, problems


def _loaded_view(gateway: Gateway, plugin: Plugin, catalogue: Catalogue, prefix: str) -> dict[str, Any]:
    if not plugin.ok:
        return {"loaded": False, "error": plugin.error, "version": plugin.version}
    listed = {item.tool.name: item.name for item in catalogue.tools if item.tool.plugin == plugin.name}
    return {
        "loaded": True,
        "version": plugin.version,
        "hooks": hooks_of(gateway, plugin.name),
        "tools": [
            {
                "name": prefix + tool.name,
                "title": tool.title,
                "read_only": tool.read_only,
                "destructive": tool.destructive,
                # Off in the config (disabled_tools, read_only) or refused (a name another plugin has).
                "listed": tool.name in listed,
            }
            for tool in plugin.tools
        ],
        "resources": [
            {"uri": r.uri, "name": r.name, "title": r.title, "mime_type": r.mime_type} for r in plugin.resources
        ],
        "resource_templates": [
            {"uri_template": t.uri_template, "name": t.name, "title": t.title, "mime_type": t.mime_type,
             "lists_its_resources": t.listing is not None}
            for t in plugin.templates
        ],
        "prompts": [
            {"name": prefix + p.name, "title": p.title,
             "arguments": [{"name": a.name, "required": a.required} for a in p.arguments]}
            for p in plugin.prompts
        ],
        "settings": described(plugin.settings_model),
    }


def hooks_of(gateway: Gateway, name: str) -> list[str]:
    """The hooks a loaded plugin implements, by name, sorted."""
    module = gateway.registry.manager.get_plugin(name)
    if module is None:
        return []
    return sorted(caller.name for caller in gateway.registry.manager.get_hookcallers(module) or [])


def plugin_lines(view: dict[str, Any]) -> list[str]:
    """The plain-text lines `gateway plugins` prints for one plugin."""
    state = "on" if view["enabled"] else "off"
    lines = [f"{view['name']} [{state}] {view['version']} ({view['origin']})".replace("  ", " ")]
    if view["error"]:
        lines.append(f"  error: {view['error']}")
    elif view["loaded"]:
        public = [tool["name"] for tool in view["tools"] if tool["listed"]]
        lines.append(f"  tools: {', '.join(public) or '(none)'}")
        hidden = [tool["name"] for tool in view["tools"] if not tool["listed"]]
        if hidden:
            lines.append(f"  not listed (config): {', '.join(hidden)}")
    return lines
