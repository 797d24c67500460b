"""A tool's arguments checked against its input schema before it runs, its data against its output schema after.

The SDK checks neither; fastjsonschema gives the quick yes, jsonschema explains a no. The words of a no
(`gateway.api.wording`) are the same for a call's arguments and a plugin's settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gateway.api.items import Answer, Tool, ToolError
from gateway.api.wording import format_checker, rule_words, short, where
from gateway.engine.log import get_logger

log = get_logger("gateway.engine.arguments")

_validators: dict[int, Any] = {}
_fast: dict[int, Any] = {}


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
    words = rule_words(error)
    return f"{where} {words}" if words else f"{where}: {short(error.message)}"


# --- what a tool answers ------------------------------------------------------------------------------------


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
    return where(error.absolute_path), f"{error.validator} {expected[:120]}"


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
