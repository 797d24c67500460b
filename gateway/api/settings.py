"""A plugin's settings: one pydantic model class, checked at load, its values dumped to plain data for every hook.

``register_settings`` returns the class. Its fields are the keys of the plugin's ``[plugins.<name>]`` table:
``Field(default, description=..., ge=..., le=...)``, ``Literal`` for choices, nested models and lists of models
for records. A table is checked strictly, as JSON is (a string is not a number, a number not a string), and a
wrong value is said with the words a call's wrong argument gets, at its place: ``accounts[0].maildir: must be a
string, not integer``. A key the model does not name is refused, at any depth.

Every hook and every call sees one shape: the model's values dumped to plain data (``mode="json"``: strings,
numbers, lists, dicts), defaults filled in, never ``prefix``, ``disabled_tools`` or ``refresh`` (the core's). A
path setting is a ``str`` field marked ``json_schema_extra={"format": "path"}``: its value stays as written
(``""`` meaning "the default"), and ``path_setting(key)`` resolves it.

What the model makes of the table a plugin is loaded with is kept between starts, watched by the files it is read
from (`gateway.engine.registry.Registry._settings`): so a model's defaults are written as constants, never read
from the environment or the clock when its module is imported (a path's default is ``""``, resolved per call).
"""

from __future__ import annotations

import json
import typing
from collections.abc import Mapping
from datetime import date, time
from pathlib import PurePath
from typing import Any

from gateway.api.wording import format_checker, problem_words
from gateway.engine.config import CORE_PLUGIN_KEYS as CORE_KEYS

Model = Any  # a pydantic BaseModel subclass (pydantic is imported only where a model is checked)


def is_settings_model(value: Any) -> bool:
    """Is this a pydantic model class (what ``register_settings`` returns)?"""
    return isinstance(value, type) and callable(getattr(value, "model_validate_json", None)) and hasattr(
        value, "model_fields")


def known_keys(model: Model | None) -> list[str]:
    """The keys a table may hold: the model's fields by the name written in TOML (an alias when it has one)."""
    if model is None:
        return []
    return [field.alias or name for name, field in model.model_fields.items()]


def _json_default(value: Any) -> Any:
    if isinstance(value, date | time):  # a TOML date or time: as its ISO text, which a date field parses
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not a setting value")


def _settings_part(table: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in table.items() if key not in CORE_KEYS}


def _checked(model: Model, values: Mapping[str, Any]) -> dict[str, Any]:
    """The model's values for `values`, dumped; raises pydantic's ValidationError when they do not fit."""
    # Through JSON, strictly: the table is JSON-like data, so "30" is not a number and 30 not a string, while a
    # path or a date field still takes its text.
    text = json.dumps(dict(values), default=_json_default)
    return model.model_validate_json(text, strict=True).model_dump(mode="json", by_alias=True)


def _extra_keys(given: Any, dumped: Any, where: str = "") -> list[str]:
    """The places of keys in `given` that the model's dump does not hold (pydantic ignores unknown keys)."""
    found = []
    if isinstance(given, Mapping) and isinstance(dumped, Mapping):
        for key, value in given.items():
            place = f"{where}.{key}" if where else str(key)
            if key not in dumped:
                found.append(place)
            else:
                found.extend(_extra_keys(value, dumped[key], place))
    elif isinstance(given, list) and isinstance(dumped, list):
        for index, (value, kept) in enumerate(zip(given, dumped, strict=False)):
            found.extend(_extra_keys(value, kept, f"{where}[{index}]"))
    return found


def defaults(model: Model | None) -> dict[str, Any]:
    """The model's defaults as plain data (the fields that have one)."""
    if model is None:
        return {}
    from pydantic_core import to_jsonable_python

    return {field.alias or name: to_jsonable_python(field.get_default(call_default_factory=True))
            for name, field in model.model_fields.items() if not field.is_required()}


def filled(model: Model | None, table: Mapping[str, Any]) -> dict[str, Any]:
    """The one shape every hook and call sees: the model's values, dumped (defaults filled in, the core's keys out).

    A table the model refuses (its plugin is off) gives its defaults with the table's values over them, as written.
    """
    values = _settings_part(table)
    if model is None:
        return values
    from pydantic import ValidationError

    try:
        return _checked(model, values)
    except (ValidationError, TypeError, ValueError):
        return {**defaults(model), **values}


def table_problem(plugin: str, model: Model | None, table: Mapping[str, Any]) -> str | None:
    """What is wrong with a plugin's ``[plugins.<name>]`` table (unknown keys, wrong values); None when usable."""
    values = _settings_part(table)
    known = known_keys(model)
    unknown = sorted(set(values) - set(known))
    if unknown:
        listed = ", ".join(sorted(set(known) | CORE_KEYS))
        return (
            f"plugin {plugin}: unknown {'key' if len(unknown) == 1 else 'keys'} in [plugins.{plugin}]: "
            f"{', '.join(unknown)} (known: {listed}); the plugin is off until the config is fixed"
        )
    if model is None:
        return None
    problems = value_problems(model, values)
    if not problems:
        return None
    return (f"plugin {plugin}: {'; '.join(f'[plugins.{plugin}] {p}' for p in problems)}; the plugin is off until "
            "the config is fixed")


def value_problems(model: Model, values: Mapping[str, Any]) -> list[str]:
    """What is wrong with `values` for `model`, each as ``place: words``; empty when they fit."""
    from pydantic import ValidationError

    try:
        dumped = _checked(model, values)
    except TypeError as error:  # a value JSON cannot hold (TOML has none, but a table given in Python may)
        return [f"(the table): {error}"]
    except ValidationError as error:
        failed: ValidationError | None = error
    else:
        if not _extra_keys(values, dumped):
            return []
        failed = None
    # The no is explained by the model's JSON schema (closed at every depth), with the words a call's arguments
    # get; what the schema cannot say (a validator of the plugin's own) is said in pydantic's words.
    problems = explain(model, values)
    if not problems and failed is not None:
        problems = [f"{_place(item['loc'])}: {item['msg'].removeprefix('Value error, ')}" for item in failed.errors()]
    if not problems:
        problems = [f"{place}: unknown key" for place in _extra_keys(values, dumped)]
    return list(dict.fromkeys(problems))


def explain(model: Model, values: Mapping[str, Any]) -> list[str]:
    """Each place where `values` break the model's closed JSON schema, and how, in a call's words."""
    from jsonschema import Draft202012Validator, FormatChecker

    from gateway.api.schemas import portable

    schema = closed(portable(model.model_json_schema(by_alias=True)))
    validator = Draft202012Validator(schema, format_checker=format_checker(FormatChecker))
    instance = json.loads(json.dumps(dict(values), default=_json_default))
    found = []
    for error in sorted(validator.iter_errors(instance), key=lambda e: [str(p) for p in e.absolute_path]):
        place, words = problem_words(error)
        found.append(f"{place}: {words}" if place else words)
    return found


def closed(schema: Any) -> Any:
    """`schema` with ``additionalProperties: false`` on every object that names its properties and says nothing else."""
    if isinstance(schema, list):
        return [closed(item) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    node = {key: closed(value) for key, value in schema.items()}
    if "properties" in node and "additionalProperties" not in node:
        node["additionalProperties"] = False
    return node


def _place(location: tuple[Any, ...]) -> str:
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(the table)"


def described(model: Model | None) -> list[dict[str, Any]]:
    """Each setting as ``gateway show`` gives it: name, type, default, help, and its choices and bounds."""
    if model is None:
        return []
    found = []
    for name, field in model.model_fields.items():
        entry: dict[str, Any] = {
            "name": field.alias or name,
            "type": type_name(field.annotation, field),
            "default": None if field.is_required() else _jsonable(field.get_default(call_default_factory=True)),
            "help": field.description or "",
        }
        if typing.get_origin(field.annotation) is typing.Literal:
            entry["choices"] = list(typing.get_args(field.annotation))
        for item in field.metadata:
            for attribute, key in (("ge", "minimum"), ("gt", "minimum"), ("le", "maximum"), ("lt", "maximum")):
                if getattr(item, attribute, None) is not None:
                    entry[key] = getattr(item, attribute)
        found.append(entry)
    return found


def _jsonable(value: Any) -> Any:
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value)


_NAMES = {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict"}


def is_path(field: Any) -> bool:
    """Is this model field a path setting (a ``Path``, or a ``str`` marked ``format: path``)?"""
    extra = getattr(field, "json_schema_extra", None)
    if isinstance(extra, Mapping) and extra.get("format") == "path":
        return True
    annotation = getattr(field, "annotation", None)
    return isinstance(annotation, type) and issubclass(annotation, PurePath)


def type_name(kind: Any, field: Any = None) -> str | None:
    """A setting's type in a word or two: ``str``, ``path``, ``list[str]``, ``list[Account]``."""
    if field is not None and is_path(field):
        return "path"
    if kind is None:
        return None
    if isinstance(kind, type) and issubclass(kind, PurePath):
        return "path"
    origin = typing.get_origin(kind)
    if origin is typing.Literal:
        return "choice"
    if origin in (list, tuple, dict):
        inner = ", ".join(type_name(arg) or "?" for arg in typing.get_args(kind) if arg is not Ellipsis)
        return f"{origin.__name__}[{inner}]" if inner else origin.__name__
    if origin is typing.Union or type(kind).__name__ == "UnionType":
        return " | ".join(type_name(arg) or "?" for arg in typing.get_args(kind))
    return _NAMES.get(kind, getattr(kind, "__name__", str(kind)))
