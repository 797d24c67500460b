"""gateway: one MCP server for what a person keeps on their own computer.

The public API a plugin uses: the hook marker, the items it registers, what a tool is given and returns,
the consent gate and the privacy toolkit.
"""

import structlog

if not structlog.is_configured():
    # structlog's default writes to stdout, which would corrupt a stdio MCP stream.
    from gateway.log import configure

    configure()

from gateway.access import Gate, Kept, Project
from gateway.context import Context, Folders, PluginHost
from gateway.hookspecs import hookimpl
from gateway.items import (
    Answer,
    Detected,
    Prompt,
    PromptArgument,
    Resource,
    ResourcePage,
    ResourceTemplate,
    Setting,
    Tool,
    ToolError,
    tool,
)
from gateway.kit import GateMemo, left_out_sentence, plural
from gateway.privacy import MASKS_VERSION, clip, frame, mask, mask_secrets, one_line
from gateway.traits import Person, Reason, Traits

__version__ = "0.1.0"

__all__ = [
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
    "Setting",
    "Tool",
    "ToolError",
    "Traits",
    "clip",
    "frame",
    "hookimpl",
    "left_out_sentence",
    "mask",
    "mask_secrets",
    "one_line",
    "plural",
    "tool",
]
