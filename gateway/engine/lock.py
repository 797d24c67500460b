"""Pinned tool definitions: what the person approved is what hosts are given, until they approve a change.

A tool's description is text a model reads and follows; an upgrade can change it under the person (a quiet
`pip install -U`, a plugin edited in place). `gateway lock` writes ``tools.lock`` beside the config: per plugin,
its version and, for each tool, resource, resource template and prompt, the whole definition as hosts see it
and its SHA-256. While the lock exists, a definition that differs from it, or that it does not hold (a plugin
installed or a tool added since), is withheld: the tool is listed under its name with a description saying it
is withheld and why, and every call answers that sentence; a resource, template or prompt is not listed, and a
read of it answers the same. `gateway lock --accept [PLUGIN]` shows the difference, then takes the new
definitions in. No lock file: everything is given as it is, and `gateway doctor` suggests one.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import evolve, frozen

from gateway.api.items import Tool, ToolError

LOCK_FILE = "tools.lock"
KINDS = ("tools", "resources", "templates", "prompts")


class LockError(ValueError):
    """The lock file cannot be read; while it cannot, nothing it pins is given (the door closes)."""


def digest(definition: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(definition, sort_keys=True, separators=(",", ":"),
                                     ensure_ascii=False, default=str).encode()).hexdigest()


def tool_definition(name: str, tool: Tool) -> dict[str, Any]:
    return {"name": name, "title": tool.title, "description": tool.description,
            "input_schema": _plain(tool.input_schema), "output_schema": _plain(tool.output_schema),
            "annotations": {"read_only": tool.read_only, "destructive": tool.destructive,
                            "idempotent": tool.idempotent, "open_world": tool.open_world}}


def definitions(catalogue: Any) -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
    """Every plugin's definitions in the catalogue, as hosts see them: {plugin: {kind: {key: definition}}}."""
    found: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}

    def slot(plugin: str, kind: str) -> dict[str, dict[str, Any]]:
        return found.setdefault(plugin, {k: {} for k in KINDS})[kind]

    for name in catalogue.plugin_order:
        found.setdefault(name, {k: {} for k in KINDS})
    for listed in catalogue.tools:
        slot(listed.tool.plugin, "tools")[listed.name] = tool_definition(listed.name, listed.tool)
    for resource in catalogue.resources:
        slot(resource.plugin, "resources")[resource.uri] = {
            "uri": resource.uri, "name": resource.name, "title": resource.title,
            "description": resource.description, "mime_type": resource.mime_type}
    for template in catalogue.templates:
        slot(template.plugin, "templates")[template.uri_template] = {
            "uri_template": template.uri_template, "name": template.name, "title": template.title,
            "description": template.description, "mime_type": template.mime_type}
    for name, prompt in catalogue.prompts.items():
        slot(prompt.plugin, "prompts")[name] = {
            "name": name, "title": prompt.title, "description": prompt.description,
            "arguments": [{"name": a.name, "description": a.description, "required": a.required}
                          for a in prompt.arguments]}
    return found


@frozen
class Lock:
    """What tools.lock holds: per plugin, its version and each definition with its hash."""

    plugins: Mapping[str, Mapping[str, Any]]

    @classmethod
    def read(cls, path: Path) -> Lock | None:
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            raise LockError(f"the tools lock {path} cannot be read ({error.strerror})") from error
        try:
            data = json.loads(raw)
            plugins = data["plugins"]
            if not isinstance(plugins, dict):
                raise TypeError
        except (ValueError, KeyError, TypeError) as error:
            raise LockError(f"the tools lock {path} is not one `gateway lock` wrote; run `gateway lock --accept` "
                            "to write it again after reading what it would pin") from error
        return cls(plugins)

    def hash_of(self, plugin: str, kind: str, key: str) -> str | None:
        entry = self.plugins.get(plugin, {}).get(kind, {}).get(key)
        return entry.get("sha256") if isinstance(entry, Mapping) else None

    def definition_of(self, plugin: str, kind: str, key: str) -> dict[str, Any] | None:
        entry = self.plugins.get(plugin, {}).get(kind, {}).get(key)
        return entry.get("definition") if isinstance(entry, Mapping) else None


def write(path: Path, current: Mapping[str, Mapping[str, Mapping[str, Any]]], versions: Mapping[str, str],
          keep: Lock | None = None, only: str | None = None) -> None:
    """Write the lock: every plugin's current definitions, or with `only`, that plugin's, the rest kept."""
    plugins: dict[str, Any] = dict(keep.plugins) if keep is not None and only is not None else {}
    for plugin, kinds in current.items():
        if only is not None and plugin != only:
            continue
        plugins[plugin] = {"version": versions.get(plugin, ""), **{
            kind: {key: {"sha256": digest(d), "definition": d} for key, d in kinds.get(kind, {}).items()}
            for kind in KINDS}}
    text = json.dumps({"version": 1, "plugins": plugins}, indent=1, sort_keys=True, ensure_ascii=False)
    temporary = path.with_name(f".{path.name}.tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text + "\n")
    os.replace(temporary, path)


def changed(lock: Lock, current: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> dict[str, list[tuple[str, str]]]:
    """Per plugin, the (kind, key) whose definition differs from the lock or is not in it."""
    found: dict[str, list[tuple[str, str]]] = {}
    for plugin, kinds in current.items():
        for kind in KINDS:
            for key, definition in kinds.get(kind, {}).items():
                if lock.hash_of(plugin, kind, key) != digest(definition):
                    found.setdefault(plugin, []).append((kind, key))
    return found


def difference(lock: Lock, current: Mapping[str, Mapping[str, Mapping[str, Any]]], plugin: str) -> str:
    """What changed in a plugin's definitions since the lock, as a unified diff of their JSON."""
    import difflib  # only when a definition changed: not on every start

    lines: list[str] = []
    for kind, key in changed(lock, {plugin: current.get(plugin, {})}).get(plugin, []):
        before = lock.definition_of(plugin, kind, key)
        after = current[plugin][kind][key]
        old = json.dumps(before, indent=1, sort_keys=True, ensure_ascii=False).splitlines() if before else []
        new = json.dumps(after, indent=1, sort_keys=True, ensure_ascii=False).splitlines()
        label = f"{plugin} {kind[:-1]} {key}"
        lines += difflib.unified_diff(old, new, f"{label} (locked)" if before else f"{label} (new)",
                                      f"{label} (now)", lineterm="")
    return "\n".join(lines)


def withheld_sentence(plugin: str, what: str) -> str:
    return (f"{what} is withheld: its definition (from the plugin {plugin}) changed since the person pinned the "
            f"tools with `gateway lock`, or was never pinned. Only the person can take it in, after reading the "
            f"change: `gateway lock --accept {plugin}`. Ask them if it is needed.")


def withheld_tool(name: str, tool: Tool) -> Tool:
    """The tool as listed while withheld: its name, a description saying so, no arguments; a call says why."""
    sentence = withheld_sentence(tool.plugin, f"The tool {name}")

    def refuse(**_arguments: Any) -> str:
        raise ToolError(sentence)

    return evolve(tool, function=refuse, description=sentence,
                  input_schema={"type": "object", "properties": {}, "additionalProperties": True},
                  output_schema=None, title=f"{name} (withheld)")


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
