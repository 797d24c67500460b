"""Icons for hosts: a plugin's packaged ``icon.svg`` (and the gateway's own), checked once and given as a data URI.

A plugin ships one small SVG file named ``icon.svg`` inside its package. The core reads it once, with
importlib.resources, refuses it when it is too large, is not an SVG document, or holds a script, an event handler
or a reference to anything outside itself, and otherwise attaches it (``data:image/svg+xml;base64,...``) to every
tool, resource, resource template and prompt of that plugin. A refused or missing icon only means no icon: the
plugin serves as before, and the refusal is logged once on stderr.

Icons are not part of what ``gateway lock`` pins: a model never reads them, and the checks here keep them inert
pictures, so a changed icon cannot change what an agent is told or does.
"""

from __future__ import annotations

import base64
import functools
import importlib.resources
import re
import types
from typing import Any

from attrs import frozen

from gateway.engine.log import get_logger

ICON_FILE = "icon.svg"
MIME_TYPE = "image/svg+xml"
# Far above what a plain icon needs (the built-ins' are under 1 KB), far below what would weigh on every list.
MAX_ICON_BYTES = 8 * 1024
SVG_NAMESPACE = "http://www.w3.org/2000/svg"
# The gateway's own icon, for the server's Implementation info.
GATEWAY_PACKAGE = "gateway"

log = get_logger("gateway.api.icons")

# Words that have no place in an inert picture, looked for in the text as written (any case) before it is parsed:
# scripts, HTML islands, entity declarations (which could expand or point outside), CSS imports.
_FORBIDDEN_TEXT = ("<script", "<!doctype", "<!entity", "<foreignobject", "javascript:", "@import")
_FORBIDDEN_ELEMENTS = frozenset({"script", "foreignobject", "iframe", "embed", "object", "audio", "video"})
_URL_REFERENCE = re.compile(r"url\(\s*['\"]?\s*([^'\")\s]*)", re.IGNORECASE)


class IconRefused(ValueError):
    """An icon file that the core will not give to hosts; the message says why."""


@frozen
class Icon:
    """One icon as hosts are given it: a data URI, its media type and the sizes it suits (an SVG: any)."""

    src: str
    mime_type: str = MIME_TYPE
    sizes: tuple[str, ...] = ("any",)


def _local(name: str) -> str:
    """An element or attribute name without its namespace, lower-cased."""
    return name.rsplit("}", 1)[-1].lower()


def _outside_reference(value: str) -> str | None:
    """The first target in `value` (a ``url(...)`` in a style) that is not a fragment of the same document."""
    for target in _URL_REFERENCE.findall(value):
        if not target.startswith("#"):
            return target or "an empty url()"
    return None


def checked_svg(data: bytes) -> bytes:
    """`data` if it is a small, inert SVG document; IconRefused saying what is wrong otherwise."""
    if len(data) > MAX_ICON_BYTES:
        raise IconRefused(f"it is {len(data)} bytes; an icon may have {MAX_ICON_BYTES} at most")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise IconRefused("it is not UTF-8 text") from None
    lowered = text.lower()
    for word in _FORBIDDEN_TEXT:
        if word in lowered:
            raise IconRefused(f"it holds {word!r}; an icon must be a plain picture")
    import xml.etree.ElementTree as ElementTree  # only when an icon is read: a start without icons goes without it

    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        raise IconRefused(f"it is not well-formed XML ({error})") from None
    if root.tag != f"{{{SVG_NAMESPACE}}}svg":
        raise IconRefused(f"its root element is {root.tag!r}, not an <svg> in the SVG namespace")
    for element in root.iter():
        name = _local(element.tag)
        if name in _FORBIDDEN_ELEMENTS:
            raise IconRefused(f"it holds a <{name}> element; an icon must be a plain picture")
        for attribute, value in element.attrib.items():
            key = _local(attribute)
            if key.startswith("on"):
                raise IconRefused(f"it holds an event handler ({key}); an icon must be a plain picture")
            if key in ("href", "src") and not value.strip().startswith("#"):
                raise IconRefused(f"it refers to something outside itself ({key}={value[:60]!r})")
            outside = _outside_reference(value)
            if outside is not None:
                raise IconRefused(f"it refers to something outside itself (url({outside[:60]}))")
        outside = _outside_reference(element.text or "")
        if outside is not None:
            raise IconRefused(f"it refers to something outside itself (url({outside[:60]}))")
    return data


def icon_from_svg(data: bytes) -> Icon:
    """The icon hosts are given for an SVG document (checked first; IconRefused when it is not fit)."""
    encoded = base64.b64encode(checked_svg(data)).decode("ascii")
    return Icon(src=f"data:{MIME_TYPE};base64,{encoded}")


@functools.lru_cache(maxsize=256)
def packaged_icon(package: str) -> Icon | None:
    """The icon a package ships as ``icon.svg``, read once; None when it ships none or the one it ships is
    refused (said once on stderr)."""
    try:
        found = importlib.resources.files(package).joinpath(ICON_FILE)
        if not found.is_file():
            return None
        with found.open("rb") as handle:
            data = handle.read(MAX_ICON_BYTES + 1)
    except (ModuleNotFoundError, TypeError, OSError) as error:
        log.warning("icon cannot be read", package=package, error=str(error))
        return None
    try:
        return icon_from_svg(data)
    except IconRefused as refused:
        log.warning("icon refused", package=package, file=ICON_FILE, reason=str(refused))
        return None


def plugin_icon(module: Any) -> Icon | None:
    """The icon of a loaded plugin: its package's ``icon.svg``. A plugin given as a plain module, a class or an
    object (as tests give them) has no package to ship one, and so no icon."""
    if not isinstance(module, types.ModuleType):
        return None
    spec = getattr(module, "__spec__", None)
    if spec is None or spec.submodule_search_locations is None:
        return None
    return packaged_icon(module.__name__)


def gateway_icon() -> Icon | None:
    """The gateway's own icon, for the server's Implementation info."""
    return packaged_icon(GATEWAY_PACKAGE)
