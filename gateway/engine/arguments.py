"""A tool's arguments checked against its input schema before it runs, its data against its output schema after.

The SDK checks neither; fastjsonschema gives the quick yes, jsonschema explains a no. The words of a no
(`problem_words`) are the same for a call's arguments and a plugin's settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog

from gateway.api.items import Answer, Tool, ToolError

log = structlog.get_logger("gateway.engine.arguments")

_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "array": "a list",
    "null": "null",
}
_FORMAT_WORDS = {
    "date": "a date, e.g. 2026-11-30",
    "date-time": "a date and time with its offset (RFC 3339), e.g. 2026-11-30T09:30:00+01:00",
    "time": "a time with its offset, e.g. 09:30:00+01:00",
    "email": "an email address",
    "uri": "an absolute URI",
    "uuid": "a UUID",
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


def _explainer(schema: Any) -> Any:
    def make(schema: Any) -> Any:
        # Imported here: jsonschema is a tenth of a second that only a failed check needs.
        from jsonschema import Draft202012Validator, FormatChecker

        return Draft202012Validator(_plain(schema), format_checker=format_checker(FormatChecker))

    return _cached(_validators, schema, make)


def _validator(tool: Tool) -> Any:
    return _explainer(tool.input_schema)


def format_checker(format_checker: Any) -> Any:
    """jsonschema's formats, with date-time checked as fastjsonschema does (RFC 3339: an offset is required)."""
    checker = format_checker()

    @checker.checks("date-time", raises=ValueError)
    def _date_time(value: object) -> bool:
        if not isinstance(value, str):
            return True
        from datetime import datetime

        return datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00")).tzinfo is not None

    return checker


def _compiled(schema: Any) -> Any:
    """A validator compiled to Python (fastjsonschema): the cheap yes; jsonschema only explains a no."""
    def make(schema: Any) -> Any:
        import fastjsonschema

        try:
            return fastjsonschema.compile(_plain(schema), use_default=False)
        except Exception:
            # A schema fastjsonschema cannot compile is still checked, by jsonschema alone.
            return False

    return _cached(_fast, schema, make)


def _fast_check(tool: Tool) -> Any:
    return _compiled(tool.input_schema)


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
    words = _rule_words(error)
    return f"{where} {words}" if words else f"{where}: {_short(error.message)}"


def _rule_words(error: Any) -> str | None:
    """How a value breaks one rule, as the end of a sentence whose start names the value; None for a rare rule."""
    bound = error.validator_value
    if error.validator == "type":
        words = " or ".join(_TYPE_WORDS.get(t, t) for t in (bound if isinstance(bound, list) else [bound]))
        return f"must be {words}, not {_json_type(error.instance)}"
    if error.validator == "format":
        return f"must be {_FORMAT_WORDS.get(bound, f'a valid {bound}')}"
    if error.validator == "enum":
        return f"must be one of {', '.join(repr(v) for v in bound)}"
    if error.validator == "maxLength":
        # Never the value itself: it may be megabytes, and it is the agent's own text anyway.
        return f"is {len(error.instance):,} characters long, over the limit of {bound:,}; shorten it"
    if error.validator == "minLength":
        return f"must be at least {bound:,} character{'s' if bound != 1 else ''} long"
    if error.validator == "maxItems":
        return f"has {len(error.instance):,} items, over the limit of {bound:,}; give fewer"
    if error.validator in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        word = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "above",
                "exclusiveMaximum": "below"}[error.validator]
        return f"must be {word} {bound:g}"
    return None


def problem_words(error: Any) -> tuple[str, str]:
    """A jsonschema error as (its place, ``accounts[0].maildir`` or "" for the whole, and what is wrong, in words)."""
    place = _where(error.absolute_path) if list(error.absolute_path) else ""
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return place, f"missing {missing!r} (required)"
    if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
        known = list((error.schema or {}).get("properties") or {})
        unknown = [key for key in error.instance if key not in known]
        return place, (f"unknown {'key' if len(unknown) == 1 else 'keys'} {', '.join(repr(u) for u in unknown)} "
                       f"(known: {', '.join(known) or 'none'})")
    return place, _rule_words(error) or _short(error.message)


def _short(message: str, limit: int = 200) -> str:
    """jsonschema's own message, cut: it quotes the value, which an agent may have made huge."""
    return message if len(message) <= limit else message[: limit - 1] + "…"


# --- what a tool answers ------------------------------------------------------------------------------------


def _where(path: Any) -> str:
    """A mismatch's place in the data, as a reader writes it: ``jobs[0].next_run``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(the whole data)"


def output_problem(schema: Mapping[str, Any], data: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """Where `data` does not match `schema` and how (for the log, never the values); None when it matches."""
    if data is None:
        return "(the whole data)", "no structured data, though the tool declares an output schema"
    fast = _compiled(schema)
    if fast:
        try:
            fast(data)  # as given: copying a large answer to plain dicts first would cost more than the check
            return None
        except Exception:  # fastjsonschema.JsonSchemaException: jsonschema says where below
            pass
    errors = sorted(_explainer(schema).iter_errors(_plain(data)), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    error = errors[0]
    # The rule broken, not the value: the data may hold others' words, and the log is not the place for them.
    expected = repr(error.validator_value)
    return _where(error.absolute_path), f"{error.validator} {expected[:120]}"


def check_output(tool: Tool, public_name: str, answer: Answer, outcome: str) -> tuple[Answer, str]:
    """The answer, or a fault in its place when its data breaks the tool's own output schema (never sent).

    Hosts' clients (the SDK's own among them) reject structured content that does not match the declared
    schema: that is the plugin's fault, said to the agent as one, and logged with the path of the mismatch.
    """
    if tool.output_schema is None or answer.is_error:
        return answer, outcome
    problem = output_problem(tool.output_schema, answer.data)
    if problem is None:
        return answer, outcome
    path, rule = problem
    log.error("tool answered data that does not match its output_schema", plugin=tool.plugin, tool=public_name,
              path=path, rule=rule)
    text = (
        f"the tool {public_name} failed inside the {tool.plugin} plugin: its answer does not match the shape it "
        "declares. This is a fault of the plugin, not of the request; the details are in the gateway's log. Try "
        "something else, or tell the person."
    )
    return Answer(text=text, is_error=True, left_out=answer.left_out), "bad_output"
