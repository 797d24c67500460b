"""JSON Schemas from a function's type hints (through pydantic), in the portable subset every host's validator takes.

pydantic writes the schema of each parameter; this module then inlines its ``$defs``, drops its ``title``s,
says "optional" by leaving a parameter out of ``required`` rather than by a ``null`` type, and keeps only
the standard ``format`` words, so that no host (the Inspector, Claude, Cursor, VS Code, Gemini) warns.
"""

from __future__ import annotations

import functools
import inspect
import json
import marshal
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal

import attrs

# The formats of JSON Schema 2020-12; pydantic also writes its own ("path", "password", "binary"...).
STANDARD_FORMATS = frozenset({
    "date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname", "ipv4", "ipv6",
    "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template", "json-pointer",
    "relative-json-pointer", "regex",
})
# Keywords whose value is one schema, a list of schemas, or a mapping of names to schemas.
_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else")
_MANY = ("anyOf", "oneOf", "allOf")
_NAMED = ("properties", "patternProperties")


class SchemaError(TypeError):
    """A type no portable JSON Schema describes; the message names the tool and the parameter."""


def portable(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` with ``$ref``s inlined, ``title``s dropped, ``null`` options removed and only standard formats.

    Raises SchemaError for what cannot be said portably (a recursive type, a fixed-length tuple).
    """
    definitions = dict(schema.get("$defs") or {})
    return _portable(schema, definitions, ())


def _portable(node: Any, definitions: Mapping[str, Any], seen: tuple[str, ...]) -> Any:
    if not isinstance(node, Mapping):
        return node
    node = dict(node)
    ref = node.pop("$ref", None)
    if ref is not None:
        name = str(ref).rpartition("/")[2]
        if name in seen or name not in definitions:
            raise SchemaError(f"the type {name} refers to itself (or to an unknown definition); no portable schema says that")
        node = {**definitions[name], **node}
        return _portable(node, definitions, (*seen, name))
    node.pop("$defs", None)
    node.pop("title", None)
    if "prefixItems" in node:
        raise SchemaError("a fixed-length tuple has no portable schema; use list[...] or tuple[X, ...]")
    if "const" in node:
        node["enum"] = [node.pop("const")]
    if node.get("format") is not None and node["format"] not in STANDARD_FORMATS:
        del node["format"]
    for key in _ONE:
        if isinstance(node.get(key), Mapping):
            node[key] = _portable(node[key], definitions, seen)
    for key in _NAMED:
        if isinstance(node.get(key), Mapping):
            node[key] = {name: _portable(sub, definitions, seen) for name, sub in node[key].items()}
    for key in _MANY:
        if isinstance(node.get(key), list):
            options = [_portable(sub, definitions, seen) for sub in node[key]]
            options = [o for o in options if o != {"type": "null"}]
            if len(options) == 1:
                del node[key]
                node = {**options[0], **node}
            else:
                node[key] = options
    if isinstance(node.get("type"), list):
        kinds = [t for t in node["type"] if t != "null"]
        node["type"] = kinds[0] if len(kinds) == 1 else kinds
    if "default" in node and node["default"] is None:
        del node["default"]
    return node


# --- a function's parameters ----------------------------------------------------------------------------


@attrs.frozen
class Described:
    """What a function's signature says: its input schema, its context parameter, and how to convert arguments."""

    schema: dict[str, Any]
    context: str | None
    converters: Mapping[str, Callable[[Any], Any]]
    output: dict[str, Any] | None = None


def is_context_annotation(annotation: Any) -> bool:
    """Is this annotation the per-call Context (the class, a subclass, or its name as a string)?"""
    from gateway.api.context import Context

    if isinstance(annotation, str):
        return annotation.rpartition(".")[2] == "Context"
    return isinstance(annotation, type) and issubclass(annotation, Context)


def context_parameter(function: Callable[..., Any]) -> str | None:
    """The parameter that takes the Context: the one annotated ``Context`` (any name), else a first one named ``ctx``."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    for parameter in parameters:
        if parameter.annotation is not inspect.Parameter.empty and is_context_annotation(parameter.annotation):
            return parameter.name
    if parameters and parameters[0].name == "ctx":  # the convention before types said it; kept working
        return "ctx"
    return None


def _hints(function: Callable[..., Any], tool: str) -> dict[str, Any]:
    from gateway.api.context import Context

    # Context may be imported only under TYPE_CHECKING in the plugin: give it to the resolver.
    namespace = {"Context": Context, **getattr(function, "__globals__", {})}
    try:
        return typing.get_type_hints(function, globalns=namespace, include_extras=True)
    except Exception as error:
        raise SchemaError(f"tool {tool}: its type hints cannot be read ({type(error).__name__}: {error})") from error


def _descriptions(annotation: Any) -> tuple[Any, list[str]]:
    """The annotation without its plain-string metadata, and those strings (``Annotated[str, "the words"]``)."""
    if typing.get_origin(annotation) is Annotated:
        inner, *metadata = typing.get_args(annotation)
        words = [m for m in metadata if isinstance(m, str)]
        rest = [m for m in metadata if not isinstance(m, str)]
        return (Annotated[(inner, *rest)] if rest else inner), words
    return annotation, []


_PLAIN = (str, int, float, bool, type(None), Any, dict, list)


def _is_plain(annotation: Any) -> bool:
    """Does JSON already give the function this type (no conversion after the check)?"""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _is_plain(typing.get_args(annotation)[0])
    if origin is Literal:
        return True
    if origin in (list, dict, typing.Union, types.UnionType, Sequence, Mapping):
        return all(_is_plain(a) for a in typing.get_args(annotation))
    return annotation in _PLAIN


def describe(function: Callable[..., Any], tool: str, *, with_schema: bool = True) -> Described:
    """Describe `function` as the tool named `tool`; raises SchemaError naming the parameter it cannot describe.

    While a plugin loads, a description kept from an earlier start is given again when nothing it was read from
    has changed (`gateway.api.kept_schemas`), and a new one is kept.
    """
    from gateway.api import kept_schemas

    kept = kept_schemas.active()
    found = kept_schemas.key_of(function, tool, with_schema, FAST_SCHEMAS) if kept is not None else None
    if found is not None:
        entry = kept.lookup(*found)
        if entry is not None:
            return _described_again(function, tool, marshal.loads(marshal.dumps(entry)))
    described, hints = _describe(function, tool, with_schema)
    if found is not None:
        plain = {"schema": described.schema, "output": described.output, "context": described.context,
                 "converted": tuple(described.converters)}
        try:
            copied = marshal.loads(marshal.dumps(plain))
        except ValueError:  # a default or a bound that is not plain data: described again next time
            return described
        read = {name: hint for name, hint in hints.items() if name != described.context}
        kept.keep(*found, copied, kept.files_of(function, read))
    return described


def _described_again(function: Callable[..., Any], tool: str, entry: dict[str, Any]) -> Described:
    converters = {name: _Converter(function, tool, name) for name in entry["converted"]}
    return Described(schema=entry["schema"], context=entry["context"], converters=converters, output=entry["output"])


class _Converter:
    """A parameter's pydantic conversion, made when a call first needs it (a description given again made none)."""

    def __init__(self, function: Callable[..., Any], tool: str, name: str) -> None:
        self.function, self.tool, self.name = function, tool, name
        self.convert: Callable[[Any], Any] | None = None

    def __call__(self, value: Any) -> Any:
        if self.convert is None:
            annotation, _words = _descriptions(_hints(self.function, self.tool)[self.name])
            self.convert = _adapter(annotation)[0].validate_python
        return self.convert(value)


def _describe(function: Callable[..., Any], tool: str, with_schema: bool) -> tuple[Described, dict[str, Any]]:
    context = context_parameter(function)
    hints = _hints(function, tool) if with_schema else {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    converters: dict[str, Callable[[Any], Any]] = {}
    for name, parameter in inspect.signature(function).parameters.items():
        if name == context or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if not with_schema:
            continue
        if name not in hints:
            raise SchemaError(
                f"tool {tool}: parameter {name!r} has no type annotation, so hosts cannot be told what it takes; "
                f"annotate it (for instance {name}: str)"
            )
        annotation, words = _descriptions(hints[name])
        if parameter.kind is parameter.POSITIONAL_ONLY:
            raise SchemaError(f"tool {tool}: parameter {name!r} is positional-only; arguments are given by name")
        prop, adapter = _parameter_schema(annotation, tool, name)
        if words:
            prop["description"] = " ".join(words)
        if parameter.default is inspect.Parameter.empty:
            required.append(name)
        elif parameter.default is not None:
            if adapter is not None or not _json_native(parameter.default, prop):
                adapter = adapter or _adapter(annotation)[0]
                prop["default"] = _json_default(adapter, parameter.default, tool, name)
            else:
                prop["default"] = parameter.default
        properties[name] = prop
        if not _is_plain(annotation):
            converters[name] = (adapter or _adapter(annotation)[0]).validate_python
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    if not with_schema:  # the input schema given by hand: the hints still say the output's shape, if readable
        try:
            hints = _hints(function, tool)
        except SchemaError:
            hints = {}
    return Described(schema=schema, context=context, converters=converters,
                     output=output_schema(hints.get("return"), tool)), hints


# --- what a tool answers -------------------------------------------------------------------------------------


def _without_attrs(annotation: Any) -> Any:
    """`annotation` with each attrs class in it as the TypedDict of its fields (pydantic does not read attrs)."""
    if isinstance(annotation, type) and attrs.has(annotation):
        from typing import NotRequired

        from typing_extensions import TypedDict

        attrs.resolve_types(annotation)
        fields = {
            f.name: _without_attrs(f.type) if f.default is attrs.NOTHING else NotRequired[_without_attrs(f.type)]
            for f in attrs.fields(annotation)
        }
        return TypedDict(annotation.__name__, fields)  # type: ignore[operator]
    arguments = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if not arguments or origin is Literal:
        return annotation
    if origin is Annotated:
        return Annotated[(_without_attrs(arguments[0]), *arguments[1:])]
    converted = tuple(_without_attrs(argument) for argument in arguments)
    if converted == arguments:
        return annotation
    if origin in (typing.Union, types.UnionType):
        return typing.Union[converted]  # noqa: UP007 (built from a tuple)
    return origin[converted] if origin in (list, dict, tuple) else annotation


def output_schema(annotation: Any, tool: str) -> dict[str, Any] | None:
    """The output schema a return annotation ``Answer[Shape]`` says, portable; None for any other annotation.

    ``Shape`` is a TypedDict (from ``typing_extensions`` before Python 3.12, as pydantic asks), a dataclass, an
    attrs class or a pydantic model; pydantic writes its schema, in the serialization mode (what the data is).
    """
    from gateway.api.answer import Answer

    if typing.get_origin(annotation) is not Answer:
        return None
    (shape,) = typing.get_args(annotation)
    if shape is Any or isinstance(shape, typing.TypeVar):
        return None
    simple = _simple_shape(shape) if FAST_SCHEMAS else None
    if simple is not None:
        return simple
    from pydantic import PydanticUserError, TypeAdapter

    try:
        raw = TypeAdapter(_without_attrs(shape)).json_schema(mode="serialization")
    except (PydanticUserError, TypeError, ValueError) as error:
        shown = getattr(shape, "__name__", None) or repr(shape)
        raise SchemaError(
            f"tool {tool}: its return annotation Answer[{shown}] has no JSON schema; use a TypedDict, dataclass, "
            f"attrs class or pydantic model of JSON types (pydantic: {str(error).splitlines()[0][:160]})"
        ) from None
    try:
        schema = portable(raw)
    except SchemaError as error:
        raise SchemaError(f"tool {tool}: its return annotation: {error}") from None
    if schema.get("type") != "object":
        raise SchemaError(f"tool {tool}: Answer[...] must name an object's shape (MCP's structured content is one)")
    return schema


def _parameter_schema(annotation: Any, tool: str, name: str) -> tuple[dict[str, Any], Any]:
    from pydantic import PydanticUserError

    from gateway.api.context import Context

    if annotation is Context:
        raise SchemaError(f"tool {tool}: only one parameter takes the Context; {name!r} is a second one")
    if isinstance(annotation, str) or typing.get_origin(annotation) is typing.ForwardRef:
        raise SchemaError(f"tool {tool}: parameter {name!r} has the type {annotation!r}, which cannot be resolved")
    simple = _simple(annotation) if FAST_SCHEMAS else None
    if simple is not None:
        return simple, None
    try:
        adapter, raw = _adapter(annotation)
    except (PydanticUserError, TypeError, ValueError) as error:
        shown = getattr(annotation, "__name__", None) or repr(annotation)
        raise SchemaError(
            f"tool {tool}: parameter {name!r} has the type {shown}, which no JSON schema describes; use str, int, "
            "float, bool, Literal, list, dict, date or datetime (Annotated for descriptions and bounds), or give "
            f"input_schema by hand (pydantic: {str(error).splitlines()[0][:160]})"
        ) from None
    try:
        return portable(raw), adapter
    except SchemaError as error:
        raise SchemaError(f"tool {tool}: parameter {name!r}: {error}") from None


# --- the common annotations, written without pydantic ------------------------------------------------------
#
# A pydantic TypeAdapter costs a millisecond or two to make, and every tool's parameters are described when the
# gateway starts, before it can answer tools/list. The plain forms below (str, int, float, bool, a Literal of
# strings, X | None, list[X], with Field's description and annotated_types' bounds) are written here directly, as
# pydantic then `portable` would write them (a test compares the two on every built-in tool); anything else
# goes to pydantic.

FAST_SCHEMAS = True
_PLAIN_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}
_BOUNDS = {"Ge": ("ge", "minimum"), "Le": ("le", "maximum"), "Gt": ("gt", "exclusiveMinimum"),
           "Lt": ("lt", "exclusiveMaximum")}


def _simple(annotation: Any) -> dict[str, Any] | None:
    """The portable schema of a plain annotation, or None for pydantic to write."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        inner, *metadata = typing.get_args(annotation)
        schema = _simple(inner)
        if schema is None or not all(_constrain(schema, item) for item in metadata):
            return None
        # pydantic sorts a type's keys; over `X | None` the outer keys come after X's (as `portable` merges them).
        return schema if typing.get_origin(inner) in (typing.Union, types.UnionType) else _sorted(schema)
    if origin is None and annotation in _PLAIN_TYPES:
        return {"type": _PLAIN_TYPES[annotation]}
    if origin is Literal:
        values = typing.get_args(annotation)
        return {"enum": list(values), "type": "string"} if values and all(type(v) is str for v in values) else None
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(annotation)
        kept = [option for option in options if option is not type(None)]
        return _simple(kept[0]) if len(options) == 2 and len(kept) == 1 else None
    if origin is list:
        items = typing.get_args(annotation)
        inner = _simple(items[0]) if len(items) == 1 else None
        return None if inner is None else {"items": _sorted(inner), "type": "array"}
    return None


def _simple_shape(shape: Any) -> dict[str, Any] | None:
    """The portable schema of a TypedDict of plain fields (nested TypedDicts, lists and string-keyed dicts of them
    included), as pydantic then `portable` write it; None for pydantic to write."""
    import typing_extensions

    if not typing_extensions.is_typeddict(shape):
        return None
    try:
        hints = typing_extensions.get_type_hints(shape, include_extras=True)
    except Exception:  # a name only pydantic's resolver finds (or none does): pydantic says which
        return None
    properties, required = {}, []
    for key, annotation in hints.items():
        # Under postponed annotations the class cannot see NotRequired in its strings: the resolved hint says it.
        wrapper = typing.get_origin(annotation)
        if wrapper is typing_extensions.Required or (
                wrapper is not typing_extensions.NotRequired and key in shape.__required_keys__):
            required.append(key)
        while typing.get_origin(annotation) in (typing_extensions.NotRequired, typing_extensions.Required):
            annotation = typing.get_args(annotation)[0]
        schema = _simple_value(annotation)
        if schema is None:
            return None
        properties[key] = schema
    found: dict[str, Any] = {"properties": properties, "type": "object"}
    if required:
        found["required"] = required
    if shape.__doc__:
        found["description"] = inspect.cleandoc(shape.__doc__)
    return found


def _simple_value(annotation: Any) -> dict[str, Any] | None:
    """One field of a shape: what `_simple` writes, a nested shape, or a list or string-keyed dict of either."""
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list and len(arguments) == 1:
        items = _simple_value(arguments[0])
        return None if items is None else {"items": items, "type": "array"}
    if origin is dict and len(arguments) == 2 and arguments[0] is str:
        if arguments[1] is Any:
            return {"additionalProperties": True, "type": "object"}
        values = _simple_value(arguments[1])
        return None if values is None else {"additionalProperties": values, "type": "object"}
    shape = _simple_shape(annotation)
    return shape if shape is not None else _simple(annotation)


def _constrain(schema: dict[str, Any], item: Any) -> bool:
    """Apply one metadata item (Field with a description and bounds, or an annotated_types bound); False if it is
    anything else."""
    from pydantic.fields import FieldInfo

    from gateway.wire.seams import explicit_field_attributes

    if isinstance(item, FieldInfo):
        if explicit_field_attributes(item) - {"description"}:
            return False
        if not all(_constrain(schema, bound) for bound in item.metadata):
            return False
        if item.description is not None:
            schema["description"] = item.description
        return True
    kind = type(item).__name__
    if type(item).__module__ == "annotated_types" and kind in _BOUNDS:
        attribute, keyword = _BOUNDS[kind]
        if schema.get("type") not in ("integer", "number"):
            return False
        schema[keyword] = getattr(item, attribute)
        return True
    if type(item).__module__ == "annotated_types" and kind in ("MinLen", "MaxLen"):
        word = {"string": "Length", "array": "Items"}.get(schema.get("type", ""))
        if word is None:
            return False
        schema[("min" if kind == "MinLen" else "max") + word] = item.min_length if kind == "MinLen" else item.max_length
        return True
    return False


def _sorted(schema: dict[str, Any]) -> dict[str, Any]:
    """Keys in pydantic's order (sorted), so that hosts see the very text they saw before."""
    return dict(sorted(schema.items()))


def _json_native(value: Any, schema: Mapping[str, Any]) -> bool:
    """Is this default already the JSON value pydantic would write for the schema (no conversion)?"""
    kind = schema.get("type")
    if "enum" in schema:
        return type(value) is str and value in schema["enum"]
    return (kind == "string" and type(value) is str) or (kind == "integer" and type(value) is int) or (
        kind == "number" and type(value) is float) or (kind == "boolean" and type(value) is bool)


_ADAPTERS: dict[Any, tuple[Any, dict[str, Any]]] = {}


def _adapter(annotation: Any) -> tuple[Any, dict[str, Any]]:
    """pydantic's adapter of a type and its schema, made once per type (a few milliseconds each, at load)."""
    from pydantic import TypeAdapter

    try:
        found = _ADAPTERS.get(annotation)
    except TypeError:  # an annotation holding something unhashable: made each time
        adapter = TypeAdapter(annotation)
        return adapter, adapter.json_schema()
    if found is None:
        adapter = TypeAdapter(annotation)
        found = _ADAPTERS[annotation] = (adapter, adapter.json_schema())
    return found


def _json_default(adapter: Any, default: Any, tool: str, name: str) -> Any:
    try:
        value = adapter.dump_python(default, mode="json")
        json.dumps(value)
        return value
    except Exception as error:
        raise SchemaError(f"tool {tool}: the default of parameter {name!r} cannot be said in JSON ({error})") from None


def _first_parameter(function: Callable[..., Any]) -> str | None:
    """The name of the function's first parameter, as `inspect.signature` gives it (read from the code object of a
    plain function, which is quicker)."""
    if isinstance(function, types.FunctionType) and not {"__wrapped__", "__signature__"} & function.__dict__.keys():
        code = function.__code__
        if code.co_argcount:
            return code.co_varnames[0]
        if code.co_flags & inspect.CO_VARARGS:  # after the keyword-only names in the code's own order
            return code.co_varnames[code.co_kwonlyargcount]
        return code.co_varnames[0] if code.co_kwonlyargcount or code.co_flags & inspect.CO_VARKEYWORDS else None
    return next(iter(inspect.signature(function).parameters), None)


def calling(function: Callable[..., Any], described: Described) -> Callable[..., Any]:
    """`function` as the core calls tools, ``f(ctx, **arguments)`` or ``f(**arguments)``, converting arguments.

    The core passes the Context first, by position; a function that takes it under another name or place, or
    whose arguments pydantic converts after the check (a ``date`` from its ISO string), is wrapped.
    """
    context, converters = described.context, described.converters
    if not converters and (context is None or context == _first_parameter(function)):
        return function

    def convert(arguments: dict[str, Any]) -> dict[str, Any]:
        if not converters:
            return arguments
        from pydantic import ValidationError

        from gateway.api.errors import ToolError

        converted = dict(arguments)
        for name, convert_one in converters.items():
            if name in converted:
                try:
                    converted[name] = convert_one(converted[name])
                except ValidationError as error:
                    problem = error.errors()[0].get("msg", "not valid") if error.errors() else "not valid"
                    raise ToolError(f"argument {name!r}: {problem}") from None
        return converted

    if inspect.iscoroutinefunction(function):
        if context is None:
            async def call(**arguments: Any) -> Any:
                return await function(**convert(arguments))
        else:
            async def call(ctx: Any, /, **arguments: Any) -> Any:
                return await function(**{context: ctx}, **convert(arguments))
    elif context is None:
        def call(**arguments: Any) -> Any:
            return function(**convert(arguments))
    else:
        def call(ctx: Any, /, **arguments: Any) -> Any:
            return function(**{context: ctx}, **convert(arguments))

    functools.update_wrapper(call, function)
    # The core reads the calling convention from the signature: the Context first, then keywords.
    from gateway.api.context import Context

    parameters = [
        p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
        for n, p in inspect.signature(function).parameters.items()
        if n != context and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if context is not None:
        parameters.insert(0, inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_ONLY, annotation=Context))
    call.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    return call
