"""gateway: one MCP server for what a person keeps on their own computer.

The public API a plugin uses: the hook marker, the items it registers, what a tool is given and returns,
the consent gate and the privacy toolkit.
"""

import structlog

if not structlog.is_configured():
    # structlog's default writes to stdout, which would corrupt a stdio MCP stream.
    from gateway.engine.log import configure

    configure()

from gateway.api.context import Context, Folders, PluginHost
from gateway.api.hookspecs import hookimpl
from gateway.api.items import (
    Answer,
    Detected,
    Prompt,
    PromptArgument,
    Resource,
    ResourcePage,
    ResourceTemplate,
    Tool,
    ToolError,
    tool,
)
from gateway.api.kit import GateMemo, left_out_sentence, plural
from gateway.gate.access import Gate, Kept, Project
from gateway.gate.routes import path_forms
from gateway.gate.traits import MASK_LABELS, Person, Reason, Traits, closed_by_hidden_words, may_take
from gateway.gate.traits import _pattern as words_pattern
from gateway.privacy import MASKS_VERSION, clip, frame, mask, mask_secrets, mask_url, one_line

__version__ = "0.1.0"

# Taught by the plugin guide, loaded only when a plugin asks for them (a refresh's pieces, file notifications):
# `gateway serve` does not pay their import unless a plugin uses them.
_LAZY = {
    "Refresh": "gateway.api.refresh", "Refreshed": "gateway.api.refresh", "Source": "gateway.api.refresh",
    "watched_signature": "gateway.api.refresh", "Changes": "gateway.api.changes", "Names": "gateway.api.changes",
    "merged": "gateway.api.changes", "toward": "gateway.api.changes", "open_store": "gateway.api.kit",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gateway' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)

__all__ = [
    "MASK_LABELS",
    "Changes",
    "Names",
    "Refresh",
    "Refreshed",
    "Source",
    "merged",
    "toward",
    "watched_signature",
    "words_pattern",
    "MASKS_VERSION",
    "Answer",
    "Context",
    "Detected",
    "Folders",
    "GateMemo",
    "Gate",
    "Kept",
    "Person",
    "PluginHost",
    "Project",
    "Prompt",
    "PromptArgument",
    "Reason",
    "Resource",
    "ResourcePage",
    "ResourceTemplate",
    "Tool",
    "ToolError",
    "Traits",
    "clip",
    "closed_by_hidden_words",
    "frame",
    "hookimpl",
    "left_out_sentence",
    "mask",
    "mask_secrets",
    "mask_url",
    "may_take",
    "one_line",
    "open_store",
    "path_forms",
    "plural",
    "tool",
]
