"""Arguments checked against a tool's input schema before its function runs (the SDK does not check them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gateway.items import Tool, ToolError

_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "array": "a list",
    "null": "null",
}
_validators: dict[int, Any] = {}
_fast: dict[int, Any] = {}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, Mapping):
        return "object"
    return "null" if value is None else type(value).__name__


def _cached(cache: dict[int, Any], schema: Any, make: Any) -> Any:
    """A per-schema object, keyed by identity; the schema is kept with it so a reused id never matches."""
    found = cache.get(id(schema))
    if found is None or found[0] is not schema:
        found = cache[id(schema)] = (schema, make(schema))
    return found[1]


def _validator(tool: Tool) -> Any:
    def make(schema: Any) -> Any:
        # Imported here: jsonschema is a tenth of a second that only a failed check needs.
        from jsonschema import Draft202012Validator

        return Draft202012Validator(_plain(schema))

    return _cached(_validators, tool.input_schema, make)


def _fast_check(tool: Tool) -> Any:
    """A validator compiled to Python (fastjsonschema): the cheap yes; jsonschema only explains a no."""
    def make(schema: Any) -> Any:
        import fastjsonschema

        try:
            return fastjsonschema.compile(_plain(schema), use_default=False)
        except Exception:
            # A schema fastjsonschema cannot compile is still checked, by jsonschema alone.
            return False

    return _cached(_fast, tool.input_schema, make)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _takes(tool: Tool, name: str) -> str:
    names = list(tool.properties)
    return f"{name} takes: {', '.join(names)}" if names else f"{name} takes no arguments"


def check_arguments(tool: Tool, public_name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """Return the arguments if the schema takes them, else raise ToolError naming what is wrong."""
    arguments = dict(arguments or {})
    schema = tool.input_schema
    if schema.get("additionalProperties", False) is not True:
        unknown = [key for key in arguments if key not in tool.properties]
        if unknown:
            plural = "s" if len(unknown) > 1 else ""
            raise ToolError(
                f"unknown argument{plural} {', '.join(repr(u) for u in unknown)}; {_takes(tool, public_name)}."
            )
    fast = _fast_check(tool)
    if fast:
        try:
            fast(arguments)
            return arguments
        except Exception:  # fastjsonschema.JsonSchemaException: jsonschema says what is wrong below
            pass
    problems = []
    for error in sorted(_validator(tool).iter_errors(arguments), key=lambda e: list(e.absolute_path)):
        problems.append(_sentence(error, tool, public_name))
    if problems:
        raise ToolError("; ".join(dict.fromkeys(problems)) + ".")
    return arguments


def _sentence(error: Any, tool: Tool, public_name: str) -> str:
    path = list(error.absolute_path)
    where = "argument " + repr(".".join(str(p) for p in path)) if path else "the arguments"
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return f"missing argument {missing!r} (required); {_takes(tool, public_name)}"
    if error.validator == "type":
        expected = error.validator_value
        words = " or ".join(_TYPE_WORDS.get(t, t) for t in (expected if isinstance(expected, list) else [expected]))
        return f"{where} must be {words}, not {_json_type(error.instance)}"
    if error.validator == "enum":
        return f"{where} must be one of {', '.join(repr(v) for v in error.validator_value)}"
    if error.validator == "additionalProperties":
        return f"{where}: {_short(error.message)}"
    bound = error.validator_value
    if error.validator == "maxLength":
        # Never the value itself: it may be megabytes, and it is the agent's own text anyway.
        return f"{where} is {len(error.instance):,} characters long, over the limit of {bound:,}; shorten it"
    if error.validator == "minLength":
        return f"{where} must be at least {bound:,} character{'s' if bound != 1 else ''} long"
    if error.validator == "maxItems":
        return f"{where} has {len(error.instance):,} items, over the limit of {bound:,}; give fewer"
    return f"{where}: {_short(error.message)}"


def _short(message: str, limit: int = 200) -> str:
    """jsonschema's own message, cut: it quotes the value, which an agent may have made huge."""
    return message if len(message) <= limit else message[: limit - 1] + "…"
