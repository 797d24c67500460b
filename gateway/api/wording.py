"""The words of a value that breaks a JSON Schema rule, the same for a call's arguments and a plugin's settings:
where it is (`accounts[0].maildir`), and what is wrong, never quoting a long value. A leaf module: the engine's
argument check and the plugin API's settings check both read it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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


def rule_words(error: Any) -> str | None:
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
    place = where(error.absolute_path) if list(error.absolute_path) else ""
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return place, f"missing {missing!r} (required)"
    if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
        known = list((error.schema or {}).get("properties") or {})
        unknown = [key for key in error.instance if key not in known]
        return place, (f"unknown {'key' if len(unknown) == 1 else 'keys'} {', '.join(repr(u) for u in unknown)} "
                       f"(known: {', '.join(known) or 'none'})")
    return place, rule_words(error) or short(error.message)


def short(message: str, limit: int = 200) -> str:
    """jsonschema's own message, cut: it quotes the value, which an agent may have made huge."""
    return message if len(message) <= limit else message[: limit - 1] + "…"


def where(path: Any) -> str:
    """A mismatch's place in the data, as a reader writes it: ``jobs[0].next_run``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(the whole data)"
