"""The plain-data items a plugin registers (tools, resources, templates, prompts) and what they answer."""

from __future__ import annotations

import functools
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import attrs
from attrs import field, frozen

NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class ToolError(Exception):
    """The agent asked for something that cannot be given; the message is a sentence it can act on."""


class Refused(ToolError):
    """The gate kept the item: the message names nothing; `owners` (project ids) stays for the person's eyes."""

    def __init__(self, message: str, owners: frozenset[str] = frozenset()) -> None:
        super().__init__(message)
        self.owners = frozenset(owners)


def _check_name(instance: Any, attribute: attrs.Attribute, value: str) -> None:
    if not isinstance(value, str) or not NAME_PATTERN.match(value):
        raise ValueError(
            f"{type(instance).__name__} name {value!r} is not valid: use 1 to 64 letters, digits, '_' or '-'"
        )


def _freeze_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return None if value is None else types.MappingProxyType(dict(value))


@frozen
class Answer:
    """What a tool, resource or prompt gives back: lines for the model, the same as data, and what the audit keeps.

    `given` names the items given by their addresses (``rousseau://sessions/abc``), `left_out` counts what the
    gate kept back; both go to the audit log, never the text.
    """

    text: str
    data: Mapping[str, Any] | None = None
    given: tuple[str, ...] = field(default=(), converter=tuple)
    left_out: int = 0
    is_error: bool = False
    # The owners of a Refused, for an in-process caller (`gateway access why`); never sent, never audited.
    refused_by: frozenset[str] | None = field(default=None, repr=False, eq=False)

    @classmethod
    def of(cls, value: Any) -> Answer:
        """Turn what a plugin function returned into an Answer (str, dict, Answer or None)."""
        if isinstance(value, Answer):
            return value
        if value is None:
            return cls(text="")
        if isinstance(value, str):
            return cls(text=value)
        if isinstance(value, Mapping):
            import json

            return cls(text=json.dumps(value, ensure_ascii=False, indent=1, default=str), data=dict(value))
        raise TypeError(f"a plugin function returned {type(value).__name__}; return str, dict or Answer")


@frozen
class Tool:
    """One tool as hosts see it, and the function that answers it.

    The function takes the checked arguments as keywords; when its first parameter is named ``ctx`` it also
    gets the per-call :class:`gateway.Context`. It may be sync or async and returns ``str``, ``dict`` or
    :class:`Answer`, or raises :class:`ToolError`. ``private_arguments`` are logged by their length only.
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
        """Build a tool from a typed function: its name, its docstring, and a schema from its parameters."""
        return cls(
            name=name or function.__name__,
            function=function,
            description=description if description is not None else inspect.cleandoc(function.__doc__ or ""),
            input_schema=input_schema if input_schema is not None else schema_of(function),
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
    ``name`` and optionally ``title``, ``description``, ``mime_type``.
    """

    uri_template: str
    name: str = field(validator=_check_name)
    read: Callable[..., Any] = field(repr=False)
    description: str = ""
    title: str | None = None
    mime_type: str = "text/markdown"
    listing: Callable[..., ResourcePage] | None = field(default=None, repr=False)
    plugin: str = ""

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


@frozen
class Setting:
    """One key a plugin accepts in its ``[plugins.<name>]`` table, with its default and a line of help."""

    name: str
    default: Any = None
    help: str = ""


# --- helpers -----------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def wants_context(function: Callable[..., Any]) -> bool:
    """Does this plugin function take the per-call Context (its first parameter is named ``ctx``)?"""
    try:
        parameters = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return False
    return bool(parameters) and parameters[0] == "ctx"


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


_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object"}


def _schema_of_annotation(annotation: Any) -> dict[str, Any]:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation in _JSON_TYPES:
        return {"type": _JSON_TYPES[annotation]}
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (list, tuple, Sequence, typing.Sequence) or annotation in (list, tuple):
        item = args[0] if args else Any
        return {"type": "array", "items": _schema_of_annotation(item)} if item is not Any else {"type": "array"}
    if origin in (dict, Mapping) or annotation is dict:
        return {"type": "object"}
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:
            return _schema_of_annotation(options[0])
        return {"anyOf": [_schema_of_annotation(a) for a in options]}
    return {}


def schema_of(function: Callable[..., Any]) -> dict[str, Any]:
    """A JSON Schema for a function's keyword parameters (``ctx`` excluded); no extra arguments allowed."""
    hints = typing.get_type_hints(function)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for index, (name, parameter) in enumerate(inspect.signature(function).parameters.items()):
        if index == 0 and name == "ctx":
            continue
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        prop = _schema_of_annotation(hints.get(name, Any))
        if parameter.default is inspect.Parameter.empty:
            required.append(name)
        elif parameter.default is not None:
            prop["default"] = parameter.default
        properties[name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema
