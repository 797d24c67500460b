"""The plain-data items a plugin registers (tools, resources, templates, prompts) and what they answer."""

from __future__ import annotations

import functools
import inspect
import re
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
from attrs import field, frozen

from gateway.api.answer import Answer as Answer  # noqa: F401 (re-exported: what a plugin function gives back)
from gateway.api.errors import Refused as Refused  # noqa: F401 (re-exported: the items a plugin uses)
from gateway.api.errors import ToolError as ToolError

NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _check_name(instance: Any, attribute: attrs.Attribute, value: str) -> None:
    if not isinstance(value, str) or not NAME_PATTERN.match(value):
        raise ValueError(
            f"{type(instance).__name__} name {value!r} is not valid: use 1 to 64 letters, digits, '_' or '-'"
        )


def _freeze_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return None if value is None else types.MappingProxyType(dict(value))


@frozen
class Tool:
    """One tool as hosts see it, and the function that answers it.

    The function takes the checked arguments as keywords; when its first parameter is annotated ``Context``
    (or named ``ctx``) it also gets the per-call :class:`gateway.Context` first. It may be sync or async and returns ``str``, ``dict`` or
    :class:`Answer`, or raises :class:`ToolError`. ``private_arguments`` are logged by their length only.
    ``output_schema`` is the one ``from_function`` makes from a return annotation ``Answer[Shape]``.
    """

    name: str = field(validator=_check_name)
    function: Callable[..., Any] = field(repr=False)
    description: str = ""
    input_schema: Mapping[str, Any] = field(
        factory=lambda: {"type": "object", "properties": {}}, converter=_freeze_mapping
    )
    title: str | None = None
    output_schema: Mapping[str, Any] | None = field(default=None, converter=_freeze_mapping)
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False
    private_arguments: tuple[str, ...] = field(default=(), converter=tuple)
    plugin: str = ""

    @classmethod
    def from_function(
        cls,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        input_schema: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> Tool:
        """Build a tool from a typed function: its name, its docstring, and a schema from its parameters.

        Each parameter's type hint gives its schema (through pydantic): ``Annotated[str, "the words"]`` or
        ``Field(description=...)`` a description, ``Literal`` an enum, ``annotated_types``/``Field`` bounds,
        ``date``/``datetime`` an ISO string that the function receives parsed. The Context goes to the parameter
        annotated ``Context`` (or a first one named ``ctx``). A parameter without a type hint, or of a type no
        JSON schema describes, raises :class:`TypeError` naming the tool and the parameter. A return annotation
        ``Answer[Shape]`` gives the output schema. Options given with :func:`tool` come first; keywords given
        here win.
        """
        from gateway.api import schemas

        options = {**getattr(function, TOOL_OPTIONS, {}), **options}
        name = name or options.pop("name", None) or function.__name__
        _refuse_output_schema(options, name)
        description = description if description is not None else options.pop("description", None)
        options.pop("name", None)
        options.pop("description", None)
        described = schemas.describe(function, name, with_schema=input_schema is None)
        return cls(
            name=name,
            function=schemas.calling(function, described),
            description=description if description is not None else docstring_description(function),
            input_schema=input_schema if input_schema is not None else described.schema,
            output_schema=described.output,
            **options,
        )

    @property
    def wants_context(self) -> bool:
        return wants_context(self.function)

    @property
    def properties(self) -> Mapping[str, Any]:
        return self.input_schema.get("properties") or {}


@frozen
class Resource:
    """A fixed resource: a URI and the function (``read(ctx)``) that gives its text."""

    uri: str
    name: str = field(validator=_check_name)
    read: Callable[..., Any] = field(repr=False)
    description: str = ""
    title: str | None = None
    mime_type: str = "text/markdown"
    plugin: str = ""


@frozen
class ResourcePage:
    """One page of a template's resources, newest or first first; `next_cursor` is opaque and None at the end."""

    resources: Sequence[Resource | Mapping[str, Any]]
    next_cursor: str | None = None


@frozen
class ResourceTemplate:
    """A family of resources, ``scheme://things/{id}``.

    ``read(ctx, **params)`` gives one by the template's parameters; ``listing(ctx, cursor, limit)`` (optional)
    returns a :class:`ResourcePage` of concrete resources for resources/list, each a dict with ``uri``,
    ``name`` and optionally ``title``, ``description``, ``mime_type``. ``complete(ctx, argument, value)``
    (optional) suggests values of a parameter for completion/complete: only what the gate lets the host see.
    """

    uri_template: str
    name: str = field(validator=_check_name)
    read: Callable[..., Any] = field(repr=False)
    description: str = ""
    title: str | None = None
    mime_type: str = "text/markdown"
    listing: Callable[..., ResourcePage] | None = field(default=None, repr=False)
    plugin: str = ""
    complete: Callable[..., list[str]] | None = field(default=None, repr=False)

    def match(self, uri: str) -> dict[str, str] | None:
        """The template's parameters if `uri` is one of its resources, else None."""
        found = _template_regex(self.uri_template).fullmatch(uri)
        return None if found is None else {k: _unquote(v) for k, v in found.groupdict().items()}


@frozen
class PromptArgument:
    name: str
    description: str = ""
    required: bool = False


@frozen
class Prompt:
    """A prompt template; ``render(ctx, **arguments)`` returns the user message's text (or an Answer)."""

    name: str = field(validator=_check_name)
    render: Callable[..., Any] = field(repr=False)
    description: str = ""
    title: str | None = None
    arguments: tuple[PromptArgument, ...] = field(default=(), converter=tuple)
    plugin: str = ""
    # complete(ctx, argument, value): suggested values of an argument for completion/complete (gated, bounded).
    complete: Callable[..., list[str]] | None = field(default=None, repr=False)


# --- helpers -----------------------------------------------------------------------------------------


@frozen
class Detected:
    """What ``gateway setup --detect`` found for one plugin: its table's settings, and where each came from."""

    settings: Mapping[str, Any] = attrs.field(factory=dict, converter=dict)
    found: tuple[str, ...] = attrs.field(default=(), converter=tuple)


@functools.lru_cache(maxsize=4096)
def wants_context(function: Callable[..., Any]) -> bool:
    """Does this plugin function take the per-call Context first (annotated ``Context``, or named ``ctx``)?"""
    from gateway.api.schemas import context_parameter

    try:
        first = next(iter(inspect.signature(function).parameters), None)
    except (TypeError, ValueError):
        return False
    return first is not None and context_parameter(function) == first


TOOL_OPTIONS = "__gateway_tool__"


def tool(**options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a bare function its tool options (``read_only=True``, ``title=...``) where it is defined.

    ``register_tools`` may return bare functions: each becomes ``Tool.from_function(function, **options)``.
    Without this a bare function is a writing tool (``read_only=False``): hidden under ``read_only = true``
    and refused when its audit line cannot be written first.
    """

    _refuse_output_schema(options, "?")

    def mark(function: Callable[..., Any]) -> Callable[..., Any]:
        setattr(function, TOOL_OPTIONS, dict(options))
        return function

    return mark


def _refuse_output_schema(options: Mapping[str, Any], name: str) -> None:
    if "output_schema" in options:
        raise TypeError(
            f"tool {name}: output_schema is no longer given by hand; say the data's shape in the return annotation, "
            "-> Answer[Shape] (Shape a TypedDict, dataclass, attrs class or pydantic model)"
        )


def docstring_description(function: Callable[..., Any]) -> str:
    """The docstring, cleaned, without an ``Args:``/``Parameters`` section (the schema says those)."""
    lines = inspect.cleandoc(function.__doc__ or "").splitlines()
    for index, line in enumerate(lines):
        if line.strip().rstrip(":") in ("Args", "Arguments", "Parameters", "Returns"):
            lines = lines[:index]
            break
    return "\n".join(lines).strip()


_template_cache: dict[str, re.Pattern[str]] = {}


def _template_regex(template: str) -> re.Pattern[str]:
    pattern = _template_cache.get(template)
    if pattern is None:
        parts = re.split(r"\{([a-zA-Z_][a-zA-Z0-9_]*)\}", template)
        regex = "".join(
            re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+)" for i, part in enumerate(parts)
        )
        pattern = _template_cache[template] = re.compile(regex, re.DOTALL)
    return pattern


def _unquote(value: str) -> str:
    from urllib.parse import unquote

    return unquote(value)


def schema_of(function: Callable[..., Any]) -> dict[str, Any]:
    """A JSON Schema for a function's keyword parameters (the Context excluded); no extra arguments allowed."""
    from gateway.api import schemas

    return schemas.describe(function, getattr(function, "__name__", "?")).schema
