"""gateway: one MCP server for what a person keeps on their own computer.

The public API a plugin uses: the hook marker, the items it registers, what a tool is given and returns,
the consent gate and the privacy toolkit.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not typing's: `import gateway` imports nothing (see _EXPORTS)

__version__ = "0.1.0"

# Every public name, and the module it lives in: each is imported on first use (PEP 562), so that `import gateway`
# (which every `gateway` command, and every module of the package, begins with) costs nothing by itself. A command
# that needs little (`gateway mail index` with nothing new) imports little; a plugin's `from gateway import X`
# imports what X needs.
_EXPORTS = {
    "Context": "gateway.api.context", "Folders": "gateway.api.context", "PluginHost": "gateway.api.context",
    "hookimpl": "gateway.api.hookspecs",
    **dict.fromkeys(("Answer", "Detected", "Prompt", "PromptArgument", "Resource", "ResourcePage",
                     "ResourceTemplate", "Tool", "ToolError", "tool"), "gateway.api.items"),
    "GateMemo": "gateway.api.kit", "left_out_sentence": "gateway.api.kit", "plural": "gateway.api.kit",
    "open_store": "gateway.api.kit", "usable_cores": "gateway.api.kit", "computer_zone": "gateway.api.zone",
    "Gate": "gateway.gate.access", "Kept": "gateway.gate.access", "Project": "gateway.gate.access",
    "path_forms": "gateway.gate.routes",
    **dict.fromkeys(("MASK_LABELS", "Person", "Reason", "Traits", "closed_by_hidden_words", "may_take"),
                    "gateway.gate.traits"),
    **dict.fromkeys(("MASKS_VERSION", "clip", "frame", "mask", "mask_secrets", "mask_url", "one_line"),
                    "gateway.privacy"),
    "Refresh": "gateway.api.refresh", "Refreshed": "gateway.api.refresh", "Source": "gateway.api.refresh",
    "watched_signature": "gateway.api.refresh", "Changes": "gateway.api.changes", "Names": "gateway.api.changes",
    "merged": "gateway.api.changes", "toward": "gateway.api.changes", "files_folders": "gateway.api.changes",
    "replayable": "gateway.commands.replay",
}
_RENAMED = {"words_pattern": ("gateway.gate.traits", "_pattern"),
            "REPLAY_SECONDS": ("gateway.commands.replay", "SECONDS")}


def __getattr__(name: str) -> object:
    found = _RENAMED.get(name) or ((_EXPORTS[name], name) if name in _EXPORTS else None)
    if found is None:
        raise AttributeError(f"module 'gateway' has no attribute {name!r}")
    # structlog's default writes to stdout, which would corrupt a stdio MCP stream: set up before a plugin's
    # module can log (gateway.engine.log sets it up when imported).
    importlib.import_module("gateway.engine.log")
    value = getattr(importlib.import_module(found[0]), found[1])
    globals()[name] = value  # asked once
    return value


if TYPE_CHECKING:  # what type checkers and editors read; at run time the names come from __getattr__
    from gateway.api.changes import Changes, Names, files_folders, merged, toward
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
    from gateway.api.kit import GateMemo, left_out_sentence, open_store, plural, usable_cores
    from gateway.api.refresh import Refresh, Refreshed, Source, watched_signature
    from gateway.api.zone import computer_zone
    from gateway.commands.replay import SECONDS as REPLAY_SECONDS
    from gateway.commands.replay import replayable
    from gateway.gate.access import Gate, Kept, Project
    from gateway.gate.routes import path_forms
    from gateway.gate.traits import MASK_LABELS, Person, Reason, Traits, closed_by_hidden_words, may_take
    from gateway.gate.traits import _pattern as words_pattern
    from gateway.privacy import MASKS_VERSION, clip, frame, mask, mask_secrets, mask_url, one_line

__all__ = [
    "MASK_LABELS",
    "Changes",
    "Names",
    "Refresh",
    "Refreshed",
    "Source",
    "merged",
    "files_folders",
    "toward",
    "watched_signature",
    "words_pattern",
    "MASKS_VERSION",
    "REPLAY_SECONDS",
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
    "computer_zone",
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
    "replayable",
    "tool",
    "usable_cores",
]
